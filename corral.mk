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
# The settings are the CORRAL_* variables, set before the include: one of
# CORRAL_UNITS, CORRAL_UNITS_FILE or CORRAL_DISCOVER, and CORRAL_CMD, are
# required; every other one has a default.  README's table and
# corral.mk(7) say what each means; 'corral-engine settings' prints each
# with its default, from the one table that programs read them through
# (src/engine/settings.c).  This file checks each value by its kind, so
# that a bad one stops make at once, naming it, and hands them all over to
# corral-engine in the environment of the target asked for.
#
# Targets:
#   corral-run           run what changed or failed, merge, print a summary;
#                        exit 0 only when every unit passed and none is missing
#                        (make -q corral-run: 0 when nothing would run)
#   corral-list          list the units corral-run would run now, and why;
#                        changes nothing under CORRAL_OUT
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
# Under make -n (also -q, -t) nothing runs: no lock, nothing written
# (make -q corral-run asks the engine in a scratch copy; see below).
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
# __corral-knob NAME: NAME is a setting, handed over to corral-engine (its
# default, and what reads it, are corral-engine's settings table).  Every
# check below registers its setting; __corral-text registers one that any
# text is good for.
__corral_knobs :=
__corral-knob = $(eval __corral_knobs += $(1))
__corral-text = $(call __corral-knob,$(1))
# __corral-get NAME: $(NAME) stripped, or nothing when NAME was never set
# (no warning under --warn-undefined-variables); __corral-raw: as it is.
__corral-get = $(strip $(call __corral-raw,$(1)))
__corral-raw = $(if $(filter undefined,$(origin $(1))),,$($(1)))
# __corral-refuse NAME,WHAT: stop, $(NAME) being no WHAT.
__corral-refuse = $(error corral: $(1) is '$(call \
	__corral-get,$(1))'; it must be $(2))
# __corral-digits NAME,DIGITS,WHAT: stop unless $(NAME) is empty, or one
# word whose DIGITS (the value less what its kind allows beside digits)
# are digits, one at least.
__corral-digits = $(call __corral-knob,$(1))$(if $(call \
	__corral-get,$(1)),$(if $(or $(word 2,$(call __corral-get,$(1))),$(strip \
	$(call __corral-nondigits,$(2))),$(if $(2),,none)),$(call \
	__corral-refuse,$(1),$(3))))
# __corral-number NAME: a whole number.
__corral-number = $(call __corral-digits,$(1),$(call __corral-get,$(1)),a \
	number)
# __corral-seconds NAME: seconds, a fraction allowed (1, 0.5, 2.).
__corral-seconds = $(call __corral-digits,$(1),$(if $(filter-out .,$(call \
	__corral-nondigits,$(call __corral-get,$(1)))),x,$(subst .,,$(call \
	__corral-get,$(1)))),a number of seconds)
# __corral-bytes NAME: bytes, with one K, M or G at the end or none.
__corral_bytes := a number of bytes, optionally with K$(__corral_comma) M or G
__corral-bytes = $(call __corral-digits,$(1),$(firstword $(foreach \
	__corral_u,K M G,$(if $(filter %$(__corral_u),$(call \
	__corral-get,$(1))),$(patsubst %$(__corral_u),%,$(call \
	__corral-get,$(1))))) $(call __corral-get,$(1))),$(__corral_bytes))
# __corral-enum NAME,WORDS: one of WORDS, or unset (its default).
__corral-enum = $(call __corral-knob,$(1))$(if $(filter undefined,$(origin \
	$(1))),,$(if $(or $(if $(call __corral-get,$(1)),,empty),$(word 2,$(call \
	__corral-get,$(1))),$(filter-out $(2),$(call __corral-get,$(1)))),$(call \
	__corral-refuse,$(1),$(call __corral-or,$(2)))))
# __corral-bool NAME: 0 or 1 (empty: 0).
__corral-bool = $(call __corral-knob,$(1))$(if $(call __corral-get,$(1)),$(call \
	__corral-enum,$(1),0 1))
# __corral-codes NAME: stop unless $(NAME) is exit codes separated by
# commas or spaces.
__corral-codes = $(call __corral-knob,$(1))$(if $(filter-out \
	$(__corral_comma),$(call __corral-nondigits,$(strip $(subst \
	$(__corral_comma), ,$(call __corral-get,$(1)))))),$(call \
	__corral-refuse,$(1),exit codes separated by commas or spaces))

$(call __corral-number,CORRAL_AGENTS)
$(call __corral-seconds,CORRAL_TIMEOUT)
$(call __corral-seconds,CORRAL_SLICE_TIMEOUT)
$(call __corral-seconds,CORRAL_RUN_TIMEOUT)
$(call __corral-seconds,CORRAL_GRACE)
$(call __corral-seconds,CORRAL_WAIT)
$(call __corral-number,CORRAL_RETRIES)
$(call __corral-number,CORRAL_HALT)
$(call __corral-number,CORRAL_SLOWEST)
$(call __corral-number,CORRAL_TAIL)
$(call __corral-number,CORRAL_SHARD_TOTAL)
$(call __corral-digits,CORRAL_CACHE_VERIFY,$(call \
	__corral-get,CORRAL_CACHE_VERIFY),a whole number from 0 to 100 (a percent))
$(call __corral-digits,CORRAL_LIMIT_CPU,$(call \
	__corral-get,CORRAL_LIMIT_CPU),a whole number of seconds)
$(call __corral-bytes,CORRAL_OUTPUT_MAX)
$(call __corral-bytes,CORRAL_LIMIT_MEM)
$(call __corral-bytes,CORRAL_LIMIT_FSIZE)
$(call __corral-codes,CORRAL_NO_RETRY)
$(call __corral-codes,CORRAL_SKIP_CODES)
$(call __corral-bool,CORRAL_PARTS_CHECK)
$(call __corral-bool,CORRAL_FAIL_ON_FLAKY)
$(call __corral-bool,CORRAL_QUIET)
$(call __corral-bool,CORRAL_V)
$(call __corral-enum,CORRAL_SANDBOX,none bwrap)
# __corral-word NAME,MIN,WHAT: stop unless $(NAME) is one word (MIN 1,
# when it is set) or at most one (MIN empty).
__corral-word = $(call __corral-knob,$(1))$(if $(filter-out $(if $(and \
	$(2),$(filter-out undefined,$(origin $(1)))),1,0 1),$(words $(call \
	__corral-get,$(1)))),$(call __corral-refuse,$(1),$(3)))
# __corral-path NAME,MIN: a path.  It may hold any character but white
# space, which make cannot keep apart from the space between words;
# everything else reaches the shell quoted.
__corral-path = $(call __corral-word,$(1),$(2),one path without spaces (a \
	make limitation); units may hold spaces)
$(call __corral-codes,CORRAL_ERROR_CODES)
$(call __corral-enum,CORRAL_VERDICT,tap exit)
$(call __corral-enum,CORRAL_TMP,dir shared private)
$(call __corral-path,CORRAL_SRC,1)
$(call __corral-path,CORRAL_OUT,1)
$(call __corral-path,CORRAL_UNITS_FILE,)
$(call __corral-path,CORRAL_JUNIT,)
$(call __corral-path,CORRAL_TRACE,)
$(call __corral-path,CORRAL_HTML,)
$(call __corral-path,CORRAL_BIN,)
$(call __corral-path,CORRAL_SHELL,1)
$(call __corral-path,CORRAL_HISTORY,)
$(call __corral-word,CORRAL_CACHE,,one path or http:// or https:// URL without spaces)
$(call __corral-path,CORRAL_WORK,)
$(call __corral-path,CORRAL_UNIT_JUNIT,)
$(call __corral-word,CORRAL_HOST,,one word)
$(call __corral-text,CORRAL_JUNIT_SUITE)$(if $(filter undefined,$(origin \
	CORRAL_JUNIT_SUITE)),,$(if $(call __corral-get,CORRAL_JUNIT_SUITE),,$(call \
	__corral-refuse,CORRAL_JUNIT_SUITE,the JUnit suite's name)))
# Any text will do for these; CORRAL_SPLIT is checked when a target runs
# (against corral-split -L), CORRAL_SHARD by corral-shard -e below.
$(foreach __corral_n,UNITS DISCOVER CMD PARTS PARTS_CMD PARTS_EXCLUDE NOTE_PATTERN \
	SANDBOX_ARGS ONLY SHARD SHARDS LAUNCH SPLIT CACHE_ENV CACHE_KEY,$(call \
	__corral-text,CORRAL_$(__corral_n)))
# A '${' or '$(' that is never closed, in a command, stops make here,
# naming the setting: make's own "unterminated variable reference" names
# no setting, and a shell's "Unterminated quoted string" fails every unit.
# Most often a '#' cut the line, make's comment.  __corral-hits TEXT,S:
# a word for each S in TEXT; __corral-more TEXT,A,B: 'x' when TEXT holds
# more A than B; __corral-open TEXT: 'x' when TEXT holds
# more '${' than '}' or more '$(' than ')' (each closed one has its own
# closer, so this is never said of a balanced TEXT).
__corral_lp := (
__corral_hash := \#
__corral_rp := )
__corral-hits = $(filter __corral_hit,$(subst $(2), __corral_hit ,$(1)))
__corral-more = $(if $(call __corral-hits,$(1),$(2)),$(if $(word $(words \
	$(call __corral-hits,$(1),$(2))),$(call __corral-hits,$(1),$(3))),,x))
__corral-open = $(or $(call __corral-more,$(1),$${,}),$(call \
	__corral-more,$(1),$$$(__corral_lp),$(__corral_rp)))
# __corral-balanced NAME: make's reading of $(NAME) (its '$$' left out),
# then the shell's, of what make gives it; __corral-unclosed NAME,VALUE
# stops make.
__corral-balanced = $(if $(call __corral-open,$(subst $$$$,,$(value \
	$(1)))),$(call __corral-unclosed,$(1),$(value $(1))))$(if $(call \
	__corral-open,$(call __corral-raw,$(1))),$(call \
	__corral-unclosed,$(1),$(call __corral-raw,$(1))))
__corral-unclosed = $(error corral: $(1) is '$(2)'; a '$${' or \
	'$$$(__corral_lp)' in it is not closed (a '$(__corral_hash)' starts \
	make's comment: write '\$(__corral_hash)'))
$(foreach __corral_n,CMD DISCOVER PARTS_CMD LAUNCH,$(call \
	__corral-balanced,CORRAL_$(__corral_n)))
# The shard, as "K N", from corral-shard -e, which reads auto's engine
# variables (and touches Bazel's status file); a bad value, or auto
# without an engine, stops make here, before anything runs.  The merge
# of the shards is no shard.
ifneq ($(and $(strip $(call __corral-get,CORRAL_SHARD)),$(filter-out \
	corral-merge-shards,$(or $(MAKECMDGOALS),corral-run))),)
__corral_shard := $(shell '$(subst ','\'',$(if $(CORRAL_BIN),$(abspath \
	$(CORRAL_BIN))/))corral-shard' -t '$(strip $(call __corral-get,CORRAL_SHARD_TOTAL))' \
	-e '$(subst ','\'',$(strip $(call __corral-get,CORRAL_SHARD)))' 2>&1)
ifneq ($(words $(__corral_shard)):$(strip $(call \
	__corral-nondigits,$(__corral_shard))),2:)
$(error corral: $(or $(subst corral-shard: ,,$(__corral_shard)),\
	corral-shard gave nothing for CORRAL_SHARD '$(call \
	__corral-get,CORRAL_SHARD)'))
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
	$(strip $(V)))),1,$(strip $(call __corral-get,CORRAL_V)))
# make -s: no step lines and no progress; summaries and errors stay.  The
# first word of MAKEFLAGS holds make's one-letter flags.
__corral_silent := $(findstring s,$(firstword -$(MAKEFLAGS)))
__corral_bindir := $(if $(CORRAL_BIN),$(abspath $(CORRAL_BIN))/)
include $(__corral_dir)mk/common.mk

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

# The settings are handed over once, each in the environment of the
# target the user asked for (never the includer's other recipes), as
# __corral_set_NAME; corral-engine run reads them through its settings
# table, takes CORRAL_OUT's lock, and runs the engine's graph there.  The
# engine's own inputs go under __corral_* names beside them: what make -s
# and V=1 say, the shard corral-shard read, the CORRAL_* names a unit
# inherits, the make and the engine's makefile.
__corral_engine = $(__corral-split-ok)$(__corral_b)corral-engine run

# make -n, -q and -t print these recipes and run none of them: a '+'
# would run the engine (and take the lock, write the plan) even then.
__corral_dry := $(strip $(foreach f,n q t,$(findstring $(f),$(firstword \
	-$(MAKEFLAGS)))))
__corral_R := $(if $(__corral_dry),,+)$(__corral_Q)

__corral_phony := corral-run corral-list corral-merge corral-rerun-failed \
	corral-plan corral-merge-shards corral-clean

# The includer's default goal stays its own wherever the include stands:
# what it was before corral's rules comes back after them (empty: make
# picks the first target the includer defines next).
__corral_goal := $(.DEFAULT_GOAL)

# With CORRAL_ONLY, just the units it matches, over the result so far.
__corral_run_goal = __corral-$(if $(call __corral-get,CORRAL_ONLY),only,run)

__corral_unset_names = $(foreach __corral_n,$(sort $(__corral_knobs)),$(if \
	$(filter undefined,$(origin $(__corral_n))),$(__corral_n)))
__corral_engine_mk := $(abspath $(__corral_dir))/mk/engine.mk
$(foreach __corral_n,$(sort $(__corral_knobs)),$(eval $(__corral_phony): \
	export __corral_set_$(__corral_n) = $$(call __corral-raw,$(__corral_n))))
$(__corral_phony): export __corral_unset = $(__corral_unset_names)
$(__corral_phony): export __corral_v := $(__corral_v)
$(__corral_phony): export __corral_silent := $(__corral_silent)
$(__corral_phony): export __corral_bin := $(__corral_bindir)
$(__corral_phony): export __corral_keep_env = $(__corral_user_env)
$(__corral_phony): export __corral_shard := $(__corral_shard)
$(__corral_phony): export __corral_shard_top := $(__corral_shard_top)
$(__corral_phony): export __corral_make = $(MAKE)
$(__corral_phony): export __corral_engine_mk := $(__corral_engine_mk)

# make -q corral-run answers truthfully.  Under -q make runs no recipe,
# so the engine is asked now, as make reads this file, with the settings
# a recipe would get ('corral-engine run question': the graph brought up
# to date in a scratch copy of CORRAL_OUT, which is only read); when no
# slice and no merge would run, corral-run has no recipe and make -q
# exits 0, else 1.  make -q -B: everything would run.
__corral_asking := $(and $(findstring q,$(firstword -$(MAKEFLAGS))),$(filter \
	corral-run,$(MAKECMDGOALS)),$(if $(findstring B,$(firstword \
	-$(MAKEFLAGS))),,1))
__corral_env = $(foreach __corral_n,$(sort \
	$(__corral_knobs)),__corral_set_$(__corral_n)=$(call __corral-q,$(call \
	__corral-raw,$(__corral_n)))) \
	__corral_unset=$(call __corral-q,$(__corral_unset_names)) \
	__corral_v=$(call __corral-q,$(__corral_v)) __corral_silent=1 \
	__corral_bin=$(call __corral-q,$(__corral_bindir)) \
	__corral_keep_env=$(call __corral-q,$(__corral_user_env)) \
	__corral_shard=$(call __corral-q,$(__corral_shard)) \
	__corral_shard_top=$(call __corral-q,$(__corral_shard_top)) \
	__corral_make=$(call __corral-q,$(MAKE)) \
	__corral_engine_mk=$(call __corral-q,$(__corral_engine_mk))
__corral_answer := $(if $(__corral_asking),$(__corral-split-ok)$(shell \
	$(__corral_env) $(__corral_b)corral-engine run question >/dev/null; \
	echo $$?),1)
ifeq ($(filter 0 1,$(__corral_answer)),)
$(error corral: cannot tell whether corral-run would run anything \
	(corral-engine exited $(__corral_answer)))
endif

corral-run:
ifeq ($(__corral_answer),1)
	$(__corral_R)$(__corral_engine) $(__corral_run_goal)
endif

# What corral-run would run now, a unit a line with why; CORRAL_OUT is
# only read.
corral-list:
	$(__corral_R)$(__corral_engine) list

corral-merge:
	$(__corral_R)$(__corral_engine) __corral-merge

corral-rerun-failed:
	$(__corral_R)$(__corral_engine) __corral-rerun-failed

corral-plan:
	$(__corral_R)$(__corral_engine) __corral-plan

corral-merge-shards:
	$(__corral_R)$(__corral_engine) __corral-merge-shards

# Removes CORRAL_OUT only when corral made it (corral-lock refuses one
# without the mark), renaming it away first, under the lock, so that a run
# waiting for the lock finds either the whole old CORRAL_OUT or none.
corral-clean:
	$(__corral_R)$(__corral_b)corral-engine run clean

.PHONY: $(__corral_phony)

.DEFAULT_GOAL := $(__corral_goal)

endif # __corral_included
