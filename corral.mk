################################################################################
#
# corral.mk -- run a project's checks in parallel, isolated, exactly once
#
################################################################################
#
# Set the inputs, include this file, run 'make -j16 corral-run':
#
#   CORRAL_DISCOVER = find tests -name '*.bats'
#   CORRAL_CMD      = bats "$$CORRAL_UNIT"
#   CORRAL_PARTS    = auto
#   include path/to/corral.mk
#
# Inputs, with their defaults (set them before the include):
#   CORRAL_UNITS      =          the units, as words
#   CORRAL_UNITS_FILE =          a file holding one unit per line
#   CORRAL_DISCOVER   =          a shell command, run in CORRAL_SRC, printing
#                                one unit per line; exactly one of these three
#   CORRAL_CMD        =          shell command run for each unit, in its
#                                agent's private clone (required); it sees
#                                $CORRAL_UNIT, $CORRAL_AGENT, $CORRAL_WORKDIR,
#                                $CORRAL_ATTEMPT, $CORRAL_RUN, $CORRAL_NOTE
#                                and the user's environment, never the run's
#                                settings (see "What a unit inherits")
#   CORRAL_PARTS      ?=         parts (paths relative to CORRAL_SRC) that every
#                                agent clones; a unit that is a path is always
#                                cloned with its agent; one that does not
#                                exist stops the run; the word auto: also
#                                what each unit was seen to read (learned in
#                                a clone of the whole tree the first time)
#   CORRAL_PARTS_CHECK ?= 0      1: a unit that fails is tried once more in a
#                                clone of the whole tree, and its record
#                                says if it passes there (a part is missing)
#   CORRAL_PARTS_CMD  ?=         shell command printing the extra parts of the
#                                unit $CORRAL_UNIT, one per line
#   CORRAL_SRC        ?= the directory of the makefile that includes this one
#   CORRAL_OUT        ?= $(CORRAL_SRC)/.corral   results; never a unit, never
#                                cloned
#   CORRAL_AGENTS     ?=         number of agents (slices); empty: as many
#                                as the population calls for, never -j
#   CORRAL_BIN        ?=         directory of the corral programs: bin/ beside
#                                this file, else the bindir of an install, else
#                                empty (found on PATH)
#   CORRAL_SHELL      ?= /bin/sh the shell that runs CORRAL_CMD (make's
#                                SHELL does not apply)
#   CORRAL_V          ?= 0       1 shows every command (so does V=1); make
#                                -s prints no step or progress lines
#   CORRAL_SPLIT      ?= auto    how a plan cuts the units: roundrobin;
#                                weighted (longest first over durations
#                                learned from history.jsonl); auto: weighted
#                                once history knows a unit, else roundrobin
#                                (corral-split -L lists the strategies)
#   CORRAL_TIMEOUT    ?=         seconds an attempt of a unit may take
#                                (fractions allowed); empty: no limit
#   CORRAL_SLICE_TIMEOUT ?=      seconds a whole slice may take; the units
#                                left then are recorded as not-run
#   CORRAL_RUN_TIMEOUT ?=        seconds the whole corral-run may take
#   CORRAL_GRACE      ?= 5       seconds from SIGTERM to SIGKILL on a timeout
#   CORRAL_RETRIES    ?= 0       times a failed unit is tried again, at once,
#                                by the same agent; a pass after a failure
#                                is flaky
#   CORRAL_NO_RETRY   ?=         exit codes never retried (e.g. 23 for a
#                                sanitizer), separated by commas or spaces
#   CORRAL_SKIP_CODES ?= 77      exit codes that mean the unit skipped
#                                itself: status skip, never a failure
#   CORRAL_ERROR_CODES ?= 99     exit codes that mean a hard error (the unit
#                                could not even tell): status error
#   CORRAL_NOTE_PATTERN ?=       an extended regular expression: a failed
#                                unit's note quotes the first line of its
#                                output that matches (before pytest's,
#                                go test's, a compiler's, a traceback's and
#                                make's own failure lines, then the last line)
#   CORRAL_TMP        ?= dir     dir: each unit gets an empty TMPDIR (and TMP,
#                                TEMP) of its own, outside CORRAL_OUT,
#                                removed when it ends; shared: units share
#                                the caller's TMPDIR
#   CORRAL_VERDICT    ?= tap     tap: a unit that prints TAP and exits 0
#                                fails on a "not ok", "Bail out!" or a plan
#                                it fell short of, as prove judges; exit: the
#                                exit status alone decides
#   CORRAL_FAIL_ON_FLAKY ?= 0    1: a flaky unit makes corral-run fail
#   CORRAL_HALT       ?=         once this many units failed, agents start
#                                no unit: the rest are not-run, noted as
#                                halted; empty: never
#   CORRAL_OUTPUT_MAX ?= 1M      bytes of each unit's output kept (the first
#                                and last halves, a marker between); 0: all
#   CORRAL_LIMIT_CPU  ?=         CPU seconds per unit process (setrlimit)
#   CORRAL_LIMIT_MEM  ?=         address space per unit process, bytes
#                                (K, M, G suffixes)
#   CORRAL_LIMIT_FSIZE ?=        largest file a unit may write, bytes
#   CORRAL_SANDBOX    ?= none    bwrap: each unit inside bubblewrap, the file
#                                system read-only but its clone and a private
#                                /tmp, CORRAL_OUT hidden, no network, its
#                                processes gone with it; a run stops (exit 2)
#                                before any unit when bwrap cannot do that
#   CORRAL_SANDBOX_ARGS ?=       the user's own bwrap options, as words
#                                (--bind DIR DIR), after corral's
#   CORRAL_QUIET      ?= 0       1: no progress lines while units run
#   CORRAL_SLOWEST    ?= 5       the summary ends with this many of the
#                                run's slowest units; 0: none
#   CORRAL_JUNIT      ?=         a file to write the JUnit XML report to on
#                                every merge; empty: none
#   CORRAL_JUNIT_SUITE ?= $(notdir CORRAL_SRC)   the JUnit report's suite
#                                name (default: the project directory's)
#   CORRAL_TRACE      ?=         a file to write the run's timeline to on
#                                every merge, as a Chrome trace (Perfetto)
#   CORRAL_HTML       ?=         a file to write the run to on every merge,
#                                as one self-contained HTML page
#   CORRAL_ONLY       ?=         shell patterns over unit names: corral-run
#                                runs only the units matching one, as a
#                                layer over the result so far (the others
#                                keep theirs), and plans nothing again
#   CORRAL_WAIT       ?=         seconds to wait for another run holding
#                                CORRAL_OUT; empty: as long as it takes;
#                                0: refuse at once (exit 2)
#   CORRAL_SHARD      ?=         K/N: run only shard K of N of the units, a
#                                cut every host computes alike; auto: K and
#                                N from the CI engine or job array; the
#                                default CORRAL_OUT is then
#                                .corral/shard-K-of-N
#   CORRAL_SHARD_TOTAL ?=        N for auto when the engine gives only an
#                                index (a Kubernetes Indexed Job)
#   CORRAL_HISTORY    ?=         a history.jsonl every host is given: shards
#                                are cut by its durations
#   CORRAL_HOST       ?=         the name records and shard manifests give
#                                this host; empty: its host name
#   CORRAL_LAUNCH     ?=         a command prefix every slice's agent runs
#                                under, split at white space: for Slurm,
#                                srun -n1 --exact --quit-on-interrupt inside
#                                one salloc; make's -j stays the schedule
#   CORRAL_SHARDS     ?=         the shard directories corral-merge-shards
#                                reads; empty: every .corral/shard-*-of-*
#                                under CORRAL_SRC
#
# Targets:
#   corral-run           run what changed or failed, merge, print a summary;
#                        exit 0 only when every unit passed and none is missing
#   corral-merge         merge the agents' logs again
#   corral-rerun-failed  re-run only the failed and not-run units, merge them
#                        over the result
#   corral-plan          make the plan again now (from the history so far)
#   corral-merge-shards  merge the shard directories into CORRAL_OUT, every
#                        unit of the population exactly once
#   corral-clean         remove CORRAL_OUT
#
# One run at a time: each target holds CORRAL_OUT's lock (CORRAL_OUT/.lock,
# flock(2)) from start to end, and so do the engine's sub-make and every
# agent, which inherit it; it goes with its last holder, kill -9 included.
# A second target on the same CORRAL_OUT prints, once,
#   corral: waiting for the run holding CORRAL_OUT (pid N)
# and starts when the first is over.  Units never inherit the lock.
# Under make -n (also -q, -t) nothing runs: no lock, nothing written.
#
# The slice graph itself lives in mk/engine.mk and runs as a sub-make that
# shares make's jobserver, so nothing here touches the includer's MAKEFLAGS,
# special targets, or any name outside CORRAL_* and __corral_*.

ifndef __corral_included
__corral_included := 1

# Before any other include: where this file, and so its engine, lives.
__corral_dir := $(dir $(lastword $(MAKEFILE_LIST)))
__corral_includer := $(lastword $(filter-out $(lastword $(MAKEFILE_LIST)),\
	$(MAKEFILE_LIST)))

ifeq ($(filter-out 0 1 2 3,$(firstword $(subst ., ,$(MAKE_VERSION)))),)
$(error corral: GNU make 4.0 or later required, found $(MAKE_VERSION))
endif

CORRAL_SRC        ?= $(abspath $(dir $(or $(__corral_includer),./)))
# A shard's results go to a directory of its own, unless CORRAL_OUT says.
__corral_out_set := $(filter-out undefined,$(origin CORRAL_OUT))
__corral_shard :=
__corral_shard_kn :=
__corral_shard_sub = $(if $(__corral_shard),/shard-$(subst /,-of-,$(__corral_shard_kn)))
CORRAL_OUT        ?= $(CORRAL_SRC)/.corral$(__corral_shard_sub)
CORRAL_UNITS      ?=
CORRAL_UNITS_FILE ?=
CORRAL_DISCOVER   ?=
CORRAL_PARTS      ?=
CORRAL_PARTS_CMD  ?=
CORRAL_PARTS_CHECK ?= 0
CORRAL_AGENTS     ?=
CORRAL_SHELL      ?= /bin/sh
CORRAL_V          ?= 0
CORRAL_SPLIT      ?= auto
CORRAL_TIMEOUT    ?=
CORRAL_SLICE_TIMEOUT ?=
CORRAL_RUN_TIMEOUT ?=
CORRAL_GRACE      ?= 5
CORRAL_RETRIES    ?= 0
CORRAL_NO_RETRY   ?=
CORRAL_SKIP_CODES ?= 77
CORRAL_ERROR_CODES ?= 99
CORRAL_VERDICT    ?= tap
CORRAL_TMP        ?= dir
CORRAL_NOTE_PATTERN ?=
CORRAL_FAIL_ON_FLAKY ?= 0
CORRAL_HALT       ?=
CORRAL_OUTPUT_MAX ?= 1M
CORRAL_LIMIT_CPU  ?=
CORRAL_LIMIT_MEM  ?=
CORRAL_LIMIT_FSIZE ?=
CORRAL_SANDBOX    ?= none
CORRAL_SANDBOX_ARGS ?=
CORRAL_QUIET      ?= 0
CORRAL_SLOWEST    ?= 5
CORRAL_JUNIT      ?=
CORRAL_JUNIT_SUITE ?= $(notdir $(abspath $(CORRAL_SRC)))
CORRAL_TRACE      ?=
CORRAL_HTML       ?=
CORRAL_WAIT       ?=
CORRAL_ONLY       ?=
CORRAL_SHARD      ?=
CORRAL_SHARD_TOTAL ?=
CORRAL_HISTORY    ?=
CORRAL_HOST       ?=
CORRAL_SHARDS     ?=
CORRAL_LAUNCH     ?=
# 'make install' writes the bindir it installs the programs into here, for
# an install whose bindir is not DATADIR/../../bin.
__corral_install_bindir :=
CORRAL_BIN        ?= $(patsubst %/,%,$(dir $(firstword $(wildcard \
	$(__corral_dir)bin/corral-run-slice \
	$(__corral_dir)../../bin/corral-run-slice \
	$(if $(__corral_install_bindir),$(__corral_install_bindir)/corral-run-slice)))))

# Every message corral.mk stops with starts 'corral:' and names the
# variable to fix.
# __corral-set: those of the named variables that are set.
__corral-set = $(strip $(foreach v,$(1),$(if $(value $(v)),$(v))))
__corral_sources := CORRAL_UNITS CORRAL_UNITS_FILE CORRAL_DISCOVER

ifeq ($(call __corral-set,$(__corral_sources)),)
$(error corral: no units: set one of CORRAL_UNITS, CORRAL_UNITS_FILE or \
	CORRAL_DISCOVER before 'include corral.mk')
endif
ifneq ($(words $(call __corral-set,$(__corral_sources))),1)
$(error corral: $(call __corral-set,$(__corral_sources)) are all set; \
	set only one of them)
endif
ifeq ($(strip $(value CORRAL_CMD)),)
$(error corral: CORRAL_CMD is empty; set it before 'include corral.mk')
endif
# Every setting is checked here, by its kind, before anything runs: a
# value a kind does not understand stops make naming the setting, the
# value and what it accepts.  One function per kind; empty means unset
# (the default of the program it is for), but for an enumeration.
# __corral-nondigits: TEXT without its digits; blank for a number.
__corral-nondigits = $(subst 9,,$(subst 8,,$(subst 7,,$(subst 6,,$(subst 5,,\
	$(subst 4,,$(subst 3,,$(subst 2,,$(subst 1,,$(subst 0,,$(1)))))))))))
__corral_comma := ,
__corral_empty :=
__corral_space := $(__corral_empty) $(__corral_empty)
# __corral-or WORDS: "a, b or c".
__corral_list_sep := $(__corral_comma)$(__corral_space)
__corral-or = $(if $(word 2,$(1)),$(subst $(__corral_space),$(__corral_list_sep),$(wordlist\
	2,$(words $(1)),x $(1))) or $(lastword $(1)),$(1))
# __corral-refuse NAME,WHAT: stop, $(NAME) being no WHAT.
__corral-refuse = $(error corral: $(1) is '$($(1))'; it must be $(2))
# __corral-digits NAME,DIGITS,WHAT: stop unless $(NAME) is empty, or one
# word whose DIGITS (the value less what its kind allows beside digits)
# are digits, one at least.
__corral-digits = $(if $(strip $($(1))),$(if $(or $(word 2,$($(1))),$(strip \
	$(call __corral-nondigits,$(2))),$(if $(2),,none)),$(call \
	__corral-refuse,$(1),$(3))))
# __corral-number NAME: a whole number.
__corral-number = $(call __corral-digits,$(1),$(strip $($(1))),a number)
# __corral-seconds NAME: seconds, a fraction allowed (1, 0.5, 2.).
__corral-seconds = $(call __corral-digits,$(1),$(if $(filter-out .,$(call \
	__corral-nondigits,$(strip $($(1))))),x,$(subst .,,$(strip $($(1))))),a \
	number of seconds)
# __corral-bytes NAME: bytes, with one K, M or G at the end or none.
__corral_bytes := a number of bytes, optionally with K$(__corral_comma) M or G
__corral-bytes = $(call __corral-digits,$(1),$(firstword $(foreach \
	__corral_u,K M G,$(if $(filter %$(__corral_u),$(strip $($(1)))),$(patsubst \
	%$(__corral_u),%,$(strip $($(1)))))) $(strip $($(1)))),$(__corral_bytes))
# __corral-enum NAME,WORDS: one of WORDS.
__corral-enum = $(if $(or $(if $(strip $($(1))),,empty),$(word 2,$($(1))),$(filter-out \
	$(2),$($(1)))),$(call __corral-refuse,$(1),$(call __corral-or,$(2))))
# __corral-bool NAME: 0 or 1 (empty: 0).
__corral-bool = $(if $(strip $($(1))),$(call __corral-enum,$(1),0 1))
# __corral-codes NAME: $(NAME), exit codes separated by commas or spaces,
# as one comma-separated word; stop unless it is that.
__corral-codes = $(if $(filter-out $(__corral_comma),$(call \
	__corral-nondigits,$(strip $(subst $(__corral_comma), ,$($(1)))))),\
	$(call __corral-refuse,$(1),exit codes separated by commas or \
	spaces),$(subst $(__corral_space),$(__corral_comma),$(strip \
	$(subst $(__corral_comma), ,$($(1))))))

$(call __corral-number,CORRAL_AGENTS)
$(call __corral-seconds,CORRAL_TIMEOUT)
$(call __corral-seconds,CORRAL_SLICE_TIMEOUT)
$(call __corral-seconds,CORRAL_RUN_TIMEOUT)
$(call __corral-seconds,CORRAL_GRACE)
$(call __corral-seconds,CORRAL_WAIT)
$(call __corral-number,CORRAL_RETRIES)
$(call __corral-number,CORRAL_HALT)
$(call __corral-number,CORRAL_SLOWEST)
$(call __corral-number,CORRAL_SHARD_TOTAL)
$(call __corral-digits,CORRAL_LIMIT_CPU,$(strip $(CORRAL_LIMIT_CPU)),a \
	whole number of seconds)
$(call __corral-bytes,CORRAL_OUTPUT_MAX)
$(call __corral-bytes,CORRAL_LIMIT_MEM)
$(call __corral-bytes,CORRAL_LIMIT_FSIZE)
__corral_no_retry := $(call __corral-codes,CORRAL_NO_RETRY)
__corral_skip_codes := $(call __corral-codes,CORRAL_SKIP_CODES)
$(call __corral-bool,CORRAL_PARTS_CHECK)
$(call __corral-bool,CORRAL_FAIL_ON_FLAKY)
$(call __corral-bool,CORRAL_QUIET)
$(call __corral-bool,CORRAL_V)
$(call __corral-enum,CORRAL_SANDBOX,none bwrap)
# __corral-word NAME,MIN,WHAT: stop unless $(NAME) is one word (MIN 1) or
# at most one (MIN empty).
__corral-word = $(if $(filter-out $(if $(2),1,0 1),$(words $($(1)))),\
	$(call __corral-refuse,$(1),$(3)))
# __corral-path NAME,MIN: a path.  It may hold any character but white
# space, which make cannot keep apart from the space between words;
# everything else reaches the shell quoted.
__corral-path = $(call __corral-word,$(1),$(2),one path without spaces (a \
	make limitation); units may hold spaces)
__corral_error_codes := $(call __corral-codes,CORRAL_ERROR_CODES)
$(call __corral-enum,CORRAL_VERDICT,tap exit)
$(call __corral-enum,CORRAL_TMP,dir shared)
$(call __corral-path,CORRAL_SRC,1)
$(call __corral-path,CORRAL_OUT,1)
$(call __corral-path,CORRAL_UNITS_FILE,)
$(call __corral-path,CORRAL_JUNIT,)
$(call __corral-path,CORRAL_TRACE,)
$(call __corral-path,CORRAL_HTML,)
$(call __corral-path,CORRAL_BIN,)
$(call __corral-path,CORRAL_SHELL,1)
$(call __corral-path,CORRAL_HISTORY,)
$(call __corral-word,CORRAL_HOST,,one word)
$(if $(strip $(CORRAL_JUNIT_SUITE)),,$(call \
	__corral-refuse,CORRAL_JUNIT_SUITE,the JUnit suite's name))
# The shard, as "K N", from corral-shard -e, which reads auto's engine
# variables (and touches Bazel's status file); a bad value, or auto
# without an engine, stops make here, before anything runs.  The merge
# of the shards is no shard.
ifneq ($(and $(strip $(CORRAL_SHARD)),$(filter-out \
	corral-merge-shards,$(or $(MAKECMDGOALS),corral-run))),)
__corral_shard := $(shell '$(subst ','\'',$(if $(CORRAL_BIN),$(abspath \
	$(CORRAL_BIN))/))corral-shard' -t '$(strip $(CORRAL_SHARD_TOTAL))' \
	-e '$(subst ','\'',$(strip $(CORRAL_SHARD)))' 2>&1)
ifneq ($(words $(__corral_shard)):$(strip $(call \
	__corral-nondigits,$(__corral_shard))),2:)
$(error corral: $(or $(subst corral-shard: ,,$(__corral_shard)),\
	corral-shard gave nothing for CORRAL_SHARD '$(CORRAL_SHARD)'))
endif
__corral_shard_kn := $(subst $(__corral_space),/,$(__corral_shard))
endif
# A shard in the default place leaves the whole .corral out of units
# and clones, and marks it as corral's (a merge of the shards writes it).
__corral_shard_top = $(if $(and $(__corral_shard),$(if \
	$(__corral_out_set),,1)),$(abspath $(CORRAL_SRC)/.corral))
__corral_srcdir = $(abspath $(CORRAL_SRC))
__corral_outdir = $(abspath $(CORRAL_OUT))
# corral run (corral-run(1)) asks where the result goes, to read its
# verdict once make is done; the recipes never see the name (a unit's own
# corral.mk project would answer in its place).
ifneq ($(filter-out undefined,$(origin __corral_where)),)
$(file >$(__corral_where),$(__corral_outdir))
endif
unexport __corral_where
ifeq ($(__corral_outdir),$(__corral_srcdir))
$(error corral: CORRAL_OUT is CORRAL_SRC; results need a directory of \
	their own)
endif
# CORRAL_OUT relative to CORRAL_SRC when inside it: never a unit, never
# cloned.  Compared as text (a path may hold '%'): the one space before
# each is where the text starts.
__corral_outrel = $(if $(findstring $(__corral_space)$(__corral_srcdir)/,\
	$(__corral_space)$(__corral_excldir)),$(subst \
	$(__corral_space)$(__corral_srcdir)/,,$(__corral_space)$(__corral_excldir)))
__corral_excldir = $(or $(__corral_shard_top),$(__corral_outdir))

# V=1 is kbuild's and automake's way of asking for every command.
__corral_v := $(if $(filter 1,$(if $(filter-out undefined,$(origin V)),\
	$(strip $(V)))),1,$(strip $(CORRAL_V)))
# make -s: no step lines and no progress; summaries and errors stay.  The
# first word of MAKEFLAGS holds make's one-letter flags.
__corral_silent := $(findstring s,$(firstword -$(MAKEFLAGS)))
__corral_bindir := $(if $(CORRAL_BIN),$(abspath $(CORRAL_BIN))/)
include $(__corral_dir)mk/common.mk

# Each setting becomes options of the program it is for, here and once,
# as quoted words that the engine puts in its command lines as they are
# (expanded when a target runs, as the engine's environment is).
# __corral-opt FLAG,VALUE: the option, or nothing when VALUE is empty.
__corral-opt = $(if $(strip $(2)),$(call __corral-q,$(1)) $(call \
	__corral-q,$(strip $(2))))
# __corral-on TEXT: non-empty when TEXT is exactly 1.
__corral-on = $(if $(filter 1,$(words $(1))),$(filter 1,$(1)))
# corral-run-slice's; the run's deadline (-d) is added when it starts.
__corral_slice_opts = $(strip \
	$(call __corral-opt,-g,$(CORRAL_GRACE)) \
	$(call __corral-opt,-R,$(CORRAL_RETRIES)) \
	$(call __corral-opt,-H,$(filter-out 0,$(strip $(CORRAL_HALT)))) \
	$(call __corral-opt,-t,$(CORRAL_TIMEOUT)) \
	$(call __corral-opt,-T,$(CORRAL_SLICE_TIMEOUT)) \
	$(call __corral-opt,-N,$(__corral_no_retry)) \
	$(call __corral-opt,-K,$(__corral_skip_codes)) \
	$(call __corral-opt,-B,$(__corral_error_codes)) \
	$(if $(filter exit,$(CORRAL_VERDICT)),'-F') \
	$(if $(filter shared,$(CORRAL_TMP)),'-U') \
	$(call __corral-opt,-f,$(CORRAL_NOTE_PATTERN)) \
	$(call __corral-opt,-o,$(CORRAL_OUTPUT_MAX)) \
	$(call __corral-opt,-L,$(addprefix cpu=,$(CORRAL_LIMIT_CPU))) \
	$(call __corral-opt,-L,$(addprefix mem=,$(CORRAL_LIMIT_MEM))) \
	$(call __corral-opt,-L,$(addprefix fsize=,$(CORRAL_LIMIT_FSIZE))) \
	$(call __corral-opt,-s,$(CORRAL_SHELL)) \
	$(if $(or $(__corral_silent),$(call __corral-on,$(CORRAL_QUIET))),,'-v') \
	$(if $(call __corral-on,$(CORRAL_PARTS_CHECK)),'-W') \
	$(__corral_sandbox_opts))
# The sandbox's, also for the check that it works before any unit runs.
__corral_sandbox_opts = $(if $(filter bwrap,$(CORRAL_SANDBOX)),'-X' 'bwrap' \
	$(foreach __corral_a,$(CORRAL_SANDBOX_ARGS),'-a' \
	$(call __corral-q,$(__corral_a))))
__corral_sandbox_check = $(if $(__corral_sandbox_opts),$(__corral_b)corral-run-slice \
	-n $(__corral_sandbox_opts) && )
# CORRAL_PARTS less the word auto, which asks for the learned parts too.
__corral_auto = $(filter auto,$(CORRAL_PARTS))
__corral_parts = $(filter-out auto,$(CORRAL_PARTS))
# corral-plan -c's (a slice's parts); a command is quoted as written.
__corral_parts_opts = $(strip $(foreach __corral_part,$(__corral_parts),\
	'-p' $(call __corral-q,$(__corral_part))))$(if $(strip \
	$(CORRAL_PARTS_CMD)), '-P' $(call __corral-q,$(CORRAL_PARTS_CMD)))
# corral-parts -k's: the parts, each a quoted word.
__corral_parts_words = $(foreach __corral_part,$(__corral_parts),$(call \
	__corral-q,$(__corral_part)))
__corral_split_opts = $(call __corral-opt,-s,$(CORRAL_SPLIT))
__corral_score_opts = $(call __corral-opt,-s,$(CORRAL_SLOWEST))
__corral_merge_opts = $(if $(call __corral-on,$(CORRAL_FAIL_ON_FLAKY)),'-f') \
	$(call __corral-opt,-k,$(__corral_shard_kn))
__corral_report_opts = $(strip $(if $(strip $(CORRAL_JUNIT)),\
	$(call __corral-opt,-j,$(abspath $(CORRAL_JUNIT))) \
	$(call __corral-opt,-n,$(CORRAL_JUNIT_SUITE)) \
	$(call __corral-opt,-o,$(CORRAL_OUTPUT_MAX))) \
	$(call __corral-opt,-T,$(if $(strip $(CORRAL_TRACE)),\
	$(abspath $(CORRAL_TRACE)))) \
	$(call __corral-opt,-H,$(if $(strip $(CORRAL_HTML)),\
	$(abspath $(CORRAL_HTML)))))
# The run's deadline, Epoch seconds, as the run starts.
__corral_deadline = $(if $(strip $(CORRAL_RUN_TIMEOUT)), '-d' '$$(date \
	+%s.%N | awk -v t=$(strip $(CORRAL_RUN_TIMEOUT)) \
	'{ printf "%.3f", $$1 + t }')')

# The engine's inputs travel in its environment, quoted here and read
# there as they are (shell variables, or option lists put in command
# lines), so a '$' in CORRAL_CMD reaches the shell as written.  Values
# made here go under __corral_* names: a CORRAL_* set on make's command
# line reaches the engine as it was typed and would win.  One run id for
# the whole invocation, sortable by time.
__corral_env = \
	__corral_guard=$$PPID \
	__corral_guard_node="$$(uname -n)" \
	__corral_v=$(call __corral-q,$(__corral_v)) \
	__corral_silent=$(call __corral-q,$(__corral_silent)) \
	__corral_shell=$(call __corral-q,$(strip $(CORRAL_SHELL))) \
	__corral_only=$(call __corral-q,$(strip $(CORRAL_ONLY))) \
	__corral_src=$(call __corral-q,$(__corral_srcdir)) \
	__corral_out=$(call __corral-q,$(__corral_outdir)) \
	__corral_outrel=$(call __corral-q,$(__corral_outrel)) \
	__corral_units_file=$(call __corral-q,$(if $(CORRAL_UNITS_FILE),$(abspath $(CORRAL_UNITS_FILE)))) \
	__corral_bin=$(call __corral-q,$(__corral_bindir)) \
	CORRAL_UNITS=$(call __corral-q,$(CORRAL_UNITS)) \
	CORRAL_DISCOVER=$(call __corral-q,$(CORRAL_DISCOVER)) \
	CORRAL_CMD=$(call __corral-q,$(CORRAL_CMD)) \
	CORRAL_PARTS=$(call __corral-q,$(CORRAL_PARTS)) \
	CORRAL_PARTS_CMD=$(call __corral-q,$(CORRAL_PARTS_CMD)) \
	CORRAL_AGENTS=$(call __corral-q,$(strip $(CORRAL_AGENTS))) \
	__corral_slice_opts=$(call __corral-q,$(__corral_slice_opts))"$(__corral_deadline)" \
	__corral_parts_opts=$(call __corral-q,$(__corral_parts_opts)) \
	__corral_parts_words=$(call __corral-q,$(__corral_parts_words)) \
	__corral_auto=$(call __corral-q,$(if $(__corral_auto),1)) \
	__corral_split_opts=$(call __corral-q,$(__corral_split_opts)) \
	__corral_merge_opts=$(call __corral-q,$(__corral_merge_opts)) \
	__corral_score_opts=$(call __corral-q,$(__corral_score_opts)) \
	__corral_report_opts=$(call __corral-q,$(__corral_report_opts)) \
	__corral_shard_k=$(call __corral-q,$(firstword $(__corral_shard))) \
	__corral_shard_n=$(call __corral-q,$(word 2,$(__corral_shard))) \
	__corral_shard_history=$(call __corral-q,$(if $(CORRAL_HISTORY),$(abspath $(CORRAL_HISTORY)))) \
	__corral_host=$(call __corral-q,$(strip $(CORRAL_HOST))) \
	__corral_launch=$(call __corral-q,$(strip $(CORRAL_LAUNCH))) \
	__corral_shards=$(call __corral-q,$(if $(CORRAL_SHARDS),$(abspath \
		$(CORRAL_SHARDS)),$(sort $(wildcard $(call \
		__corral-glob-q,$(__corral_srcdir))/.corral/shard-*-of-*)))) \
	__corral_sandbox=$(call __corral-q,$(__corral_sandbox_opts)) \
	__corral_keep_env=$(call __corral-q,$(__corral_user_env)) \
	__corral_makeflags="$${MAKEFLAGS-}" __corral_mflags="$${MFLAGS-}" \
	__corral_makelevel="$${MAKELEVEL-}" \
	CORRAL_RUN="$${CORRAL_RUN:-$$(date -u +%Y%m%dT%H%M%S%3NZ)}"

# __corral-glob-q TEXT: TEXT as a pattern of $(wildcard) that matches
# just itself: its glob characters escaped (a path may hold * ? [ \).
__corral-glob-q = $(subst [,\[,$(subst ?,\?,$(subst *,\*,$(subst \,\\,$(1)))))

# What a unit inherits: the user's environment, never the run's settings
# or internals.  One rule, by name, so that no setting added later can
# slip through: the agents give a unit no __corral_* variable, and no
# CORRAL_* one but their own (CORRAL_UNIT...) and those listed here, the
# CORRAL_* variables make found in the user's environment and nothing
# overrode (a value from the makefile or make's command line is the
# run's); the CORRAL_* variables of make's command line go from MAKEFLAGS
# too.  make's own variables (MAKEFLAGS, MFLAGS, MAKELEVEL) reach a unit
# as make gives them to this recipe, as to any recipe, not as the engine's
# sub-make changed them.
__corral_user_env = $(strip $(foreach __corral_n,$(filter CORRAL_%,\
	$(.VARIABLES)),$(if $(filter environment%,$(origin $(__corral_n))),\
	$(__corral_n))))

# __corral-locked: COMMAND run holding CORRAL_OUT's lock.
__corral-locked = $(call __corral-locked-at,$(__corral_outdir),$(1))
# __corral-locked-at DIR,COMMAND: COMMAND run holding DIR's lock.
__corral-locked-at = $(__corral_b)corral-lock \
	-w $(call __corral-q,$(strip $(CORRAL_WAIT))) \
	$(call __corral-q,$(1)) $(2)

# CORRAL_SPLIT names a strategy of corral-split, which alone defines them
# (corral-split -L lists them).  A target that runs the engine checks it
# as make expands its recipe, before anything runs, so that a make that
# runs no corral target never starts corral-split.  No line here ends in
# a space before its backslash: an includer's .POSIX keeps that space.
__corral-split-ok = $(eval __corral_strategies := $(shell\
	$(__corral_b)corral-split -L 2>/dev/null))$(if\
	$(__corral_strategies),,$(__corral-split-cannot))$(call\
	__corral-enum,CORRAL_SPLIT,$(__corral_strategies))
__corral-split-cannot = $(error corral: cannot run\
	'$(__corral_bindir)corral-split -L' to check CORRAL_SPLIT; set\
	CORRAL_BIN to where the corral programs are)

# The engine runs in CORRAL_OUT (which corral-lock makes), so that its
# targets are names of corral's own, whatever characters CORRAL_OUT holds.
# Its goal leaves the run's answer in CORRAL_OUT/exit-status and succeeds,
# so that a failed run's one line of make's own error names the target
# the user asked for, not the engine's internals: the answer becomes the
# status of this recipe.
__corral_engine = $(__corral-split-ok)$(if $(__corral_shard_top),$(call \
	__corral-locked-at,$(__corral_shard_top),true) && )$(__corral_env) $(call __corral-locked,sh -c 'f=$$__corral_out/exit-status; \
	{ [ ! -e "$$f" ] || rm -f "$$f"; } && "$$@" && { st=0; \
	{ read -r st < "$$f"; } 2>/dev/null; exit "$$st"; }' sh $(MAKE) \
	--no-print-directory -C $(call __corral-q,$(__corral_outdir)) \
	-f $(call __corral-q,$(abspath $(__corral_dir))/mk/engine.mk))

# make -n, -q and -t print these recipes and run none of them: a '+'
# would run the engine (and take the lock, write the plan) even then.
__corral_dry := $(strip $(foreach f,n q t,$(findstring $(f),$(firstword \
	-$(MAKEFLAGS)))))
__corral_R := $(if $(__corral_dry),,+)$(__corral_Q)

__corral_phony := corral-run corral-merge corral-rerun-failed corral-plan \
	corral-merge-shards corral-clean

# The includer's default goal stays its own wherever the include stands:
# what it was before corral's rules comes back after them (empty: make
# picks the first target the includer defines next).
__corral_goal := $(.DEFAULT_GOAL)

# With CORRAL_ONLY, just the units it matches, over the result so far.
__corral_run_goal = $(if $(strip $(CORRAL_ONLY)),__corral-only,__corral-run)

corral-run:
	$(__corral_R)$(__corral_sandbox_check)$(__corral_engine) $(__corral_run_goal)

corral-merge:
	$(__corral_R)$(__corral_engine) __corral-merge

corral-rerun-failed:
	$(__corral_R)$(__corral_sandbox_check)$(__corral_engine) __corral-rerun-failed

corral-plan:
	$(__corral_R)$(__corral_engine) __corral-plan

corral-merge-shards:
	$(__corral_R)$(__corral_engine) __corral-merge-shards

# Removes CORRAL_OUT only when corral made it (corral-lock refuses one
# without the mark), renaming it away first, under the lock, so that a run
# waiting for the lock finds either the whole old CORRAL_OUT or none.
corral-clean:
	$(__corral_Q)if [ -e $(call __corral-q,$(__corral_outdir)) ]; then \
		$(call __corral-locked,sh -c 'mv -f -- "$$1" "$$1.clean.$$$$" && \
		rm -rf -- "$$1.clean.$$$$"' sh \
		$(call __corral-q,$(__corral_outdir))); fi

.PHONY: $(__corral_phony)

.DEFAULT_GOAL := $(__corral_goal)

endif # __corral_included
