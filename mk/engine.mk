################################################################################
#
# engine.mk -- corral's slice graph, run by corral.mk as a sub-make
#
################################################################################
#
# Inputs come from the environment corral.mk sets.  Recipes read them as
# shell variables ("$$CORRAL_CMD"), so no value is ever expanded by make:
#   __corral_src, __corral_out   CORRAL_SRC and CORRAL_OUT, absolute
#   __corral_units_file      CORRAL_UNITS_FILE, absolute, or empty
#   __corral_bin             CORRAL_BIN with a trailing '/', or empty
#   CORRAL_UNITS, CORRAL_DISCOVER, CORRAL_CMD, CORRAL_PARTS,
#   CORRAL_PARTS_CMD, CORRAL_AGENTS   as the user set them
#   CORRAL_RUN               the run id, shared by every record of this run
#   CORRAL_V                 1: show every command
#   __corral_split, __corral_timeout, __corral_slice_timeout,
#   __corral_grace, __corral_retries, __corral_no_retry,
#   __corral_fail_on_flaky, __corral_output_max, __corral_limit_cpu,
#   __corral_limit_mem, __corral_limit_fsize, __corral_quiet,
#   __corral_junit, __corral_deadline
#                            the CORRAL_* of the same names, checked, and
#                            the run's deadline (Epoch seconds) or empty
#   __corral_guard           the pid of the make that runs corral.mk: once
#                            it is gone (a zombie is gone), agents stop and
#                            no merge starts
#   __corral_lock            the descriptor of CORRAL_OUT's lock, which this
#                            make, its recipes and its agents hold
#
# Goals: __corral-run, __corral-merge, __corral-rerun-failed, __corral-plan
# and __corral-layer (every slice of the layer CORRAL_LAYER; the re-run's
# inner make).
#
# Files under CORRAL_OUT (each written whole, and rewritten only when its
# content changes, so that make's mtimes say what really changed):
#   .corral-out             mark: corral made this directory
#   .lock                   flocked by the run (corral-lock), its pid inside
#   units, agents           the population and the agent count
#   cmd, parts-config       the settings the slices depend on
#   plan.mk                 the slice list; remade from units and agents
#                           (and by __corral-plan), slice 0 the longest
#   slices/K.units          slice K's units, from corral-split
#   slices/K.est            their expected ms, once history knows them
#   slices/plan.json        what the plan rests on (strategy, estimates)
#   slices/K.parts          what slice K clones
#   slices/K.manifest       the stat manifest of those parts
#   slices/K.pass           stamp: slice K ran with these inputs, all passed
#   logs/agent-K.jsonl      slice K's records, from corral-run-slice
#   inputs                  digest of cmd and every manifest, in records
#   live/                   what running agents show corral-status (each
#                           agent's status file, the run's ticks); cleared
#                           when a run starts
#   work/                   the agents' clones; cleared when a run starts
#   rerun/N/{slices,logs}   the same for the N-th corral-rerun-failed
#   successes.jsonl failures.jsonl summary.json history.jsonl failed.units
#                           from corral-merge, the only writer

MAKEFLAGS += -rR
.SUFFIXES:
# Nothing made along the way is an intermediate to delete.
.SECONDARY:
.DELETE_ON_ERROR:

__corral_O := $(value __corral_out)
__corral_S := $(value __corral_src)
__corral_B := $(value __corral_bin)

ifeq ($(value CORRAL_V),1)
__corral_Q :=
else
__corral_Q := @
endif

# __corral-q: TEXT quoted for the shell, as one word.
__corral-q = '$(subst ','\'',$(1))'

# CORRAL_OUT relative to CORRAL_SRC when inside it: never a unit, never
# cloned.
__corral_outrel := $(patsubst $(__corral_S)/%,%,$(filter \
	$(__corral_S)/%,$(__corral_O)))

# Finish writing $@ from $@.tmp: keep the old file (and its mtime) when the
# content is the same, else rename the new one into place.
__corral_filechk = if cmp -s $@.tmp $@; then rm -f $@.tmp; \
	else mv -f $@.tmp $@; fi

# __corral-say: one short line per step, unless every command is shown.
__corral-say = $(if $(__corral_Q),@printf '  %-7s %s\n' $(1) $(call __corral-q,$(2)))

__corral_phony :=

# The mark: corral-lock made it, holding the lock, before this make
# started (refusing a CORRAL_OUT that holds somebody else's files).  No
# recipe writes it, so no recipe that fails can have it deleted.
$(__corral_O)/.corral-out: ;

# The agent count: CORRAL_AGENTS, else make's -j (visible to recipes
# only), else the number of processors.
$(__corral_O)/agents: FORCE | $(__corral_O)/.corral-out
	$(__corral_Q)n=$$CORRAL_AGENTS; \
	[ -n "$$n" ] || n=$$(printf ' %s\n' "$$MAKEFLAGS" | \
		sed -n 's/.* -j\([0-9][0-9]*\).*/\1/p'); \
	[ -n "$$n" ] || n=$$(nproc); \
	echo "$$n" > $@.tmp && $(__corral_filechk)

# The population, minus anything under CORRAL_OUT.  A unit is literal: the
# words of CORRAL_UNITS are split (as make splits them) but never globbed,
# and lines are never re-read by a shell.  A line ends at LF, and a CR just
# before it is part of the ending (as in every corral program).
__corral_list = \
	if [ -n "$$CORRAL_DISCOVER" ]; then \
		(cd "$$__corral_src" && eval "$$CORRAL_DISCOVER"); \
	elif [ -n "$$__corral_units_file" ]; then cat "$$__corral_units_file"; \
	else set -f; printf '%s\n' $$CORRAL_UNITS; fi

$(__corral_O)/units: FORCE | $(__corral_O)/.corral-out
	$(__corral_Q)($(__corral_list)) > $@.raw || { \
		echo "corral: listing the units failed (status $$?)" >&2; \
		rm -f $@.raw; exit 2; }
	$(__corral_Q)p=$(call __corral-q,$(__corral_outrel)) awk \
		'BEGIN { p = ENVIRON["p"] } { sub(/\r$$/, "") } \
		p == "" || ($$0 != p && $$0 != "./" p && \
		index($$0, p "/") != 1 && index($$0, "./" p "/") != 1)' \
		$@.raw > $@.tmp && rm -f $@.raw && $(__corral_filechk)

$(__corral_O)/cmd: FORCE | $(__corral_O)/.corral-out
	$(__corral_Q)printf 'src %s\ncmd %s\n' "$$__corral_src" "$$CORRAL_CMD" \
		> $@.tmp && $(__corral_filechk)

$(__corral_O)/parts-config: FORCE | $(__corral_O)/.corral-out
	$(__corral_Q)printf 'parts %s\nparts-cmd %s\n' "$$CORRAL_PARTS" \
		"$$CORRAL_PARTS_CMD" > $@.tmp && $(__corral_filechk)

# __corral-split: corral-split with the strategy and the history.
__corral-split = $(__corral_B)corral-split -s "$$__corral_split" \
	-H $(__corral_O)/history.jsonl -C "$$__corral_src" \
	-n $$(cat $(__corral_O)/agents)

# A new plan starts the slices afresh: logs and stamps of slices that no
# longer exist go, and so do re-run layers, which answered the old plan.
# corral-split numbers the slices longest first (by history, else by
# count), so listing them in order makes make start the longest first.
# plan.mk goes first and comes back last: a plan killed half-way, some
# slice files new and some old, has no plan.mk and is made again whole.
# Usage: a recipe of just $(__corral_plan_recipe).
define __corral_plan_recipe
$(call __corral-say,PLAN,$(__corral_O)/plan.mk)
$(__corral_Q)rm -f $(__corral_O)/plan.mk
$(__corral_Q)$(__corral-split) -o $(__corral_O)/slices $(__corral_O)/units
$(__corral_Q)cd $(__corral_O) && rm -rf rerun && \
	n=$$(ls slices | grep -c '^[0-9]*\.units$$'); \
	for f in slices/* logs/agent-*; do \
		k=$${f#*/}; k=$${k#agent-}; k=$${k%%.*}; \
		case $$k in *[!0-9]*|'') continue ;; esac; \
		[ "$$k" -lt "$$n" ] || rm -rf "$$f"; \
	done; \
	printf '__corral_slices :=' > plan.mk.tmp && \
	i=0; while [ $$i -lt $$n ]; do printf ' %s' $$i; i=$$((i + 1)); done \
		>> plan.mk.tmp && echo >> plan.mk.tmp && mv -f plan.mk.tmp plan.mk
endef

$(__corral_O)/plan.mk: $(__corral_O)/units $(__corral_O)/agents
	$(__corral_plan_recipe)

# The plan made again on request, from the history so far.
__corral_phony += __corral-plan
__corral-plan: $(__corral_O)/units $(__corral_O)/agents
	$(__corral_plan_recipe)

# What a slice clones: CORRAL_PARTS, each unit that is a path, and what
# CORRAL_PARTS_CMD prints for each unit.
%.parts: %.units $(__corral_O)/parts-config
	$(__corral_Q){ set -f; for p in $$CORRAL_PARTS; do printf '%s\n' "$$p"; done; \
	while IFS= read -r u; do \
		if [ -e "$$__corral_src/$$u" ] || [ -L "$$__corral_src/$$u" ]; then \
			printf '%s\n' "$$u"; fi; \
		[ -z "$$CORRAL_PARTS_CMD" ] || (cd "$$__corral_src" && \
			CORRAL_UNIT=$$u; export CORRAL_UNIT; \
			eval "$$CORRAL_PARTS_CMD") || { \
			echo "corral: CORRAL_PARTS_CMD failed for unit '$$u'" >&2; \
			exit 2; }; \
	done < $<; } > $@.raw && LC_ALL=C sort -u $@.raw > $@.tmp && \
	rm -f $@.raw && $(__corral_filechk)

# Checked on every run, rewritten only when a part changed.  A part that
# escapes leaves no manifest; the slice still runs, and reports the refusal
# (a unit named '..' fails alone).
%.manifest: %.parts FORCE
	$(__corral_Q)$(__corral_B)corral-checkout -m $@ -p $< \
		$(if $(__corral_outrel),-x $(call __corral-q,$(__corral_outrel))) \
		"$$__corral_src" 2>/dev/null || rm -f $@

# The options of corral-run-slice that come from CORRAL_* settings, as the
# shell's "$@"; $(1) is the slice (without .units).
__corral_slice_opts = set -- -S $(__corral_O)/live; \
	[ -z "$$__corral_guard" ] || set -- "$$@" -G "$$__corral_guard"; \
	[ -z "$$__corral_grace" ] || set -- "$$@" -g "$$__corral_grace"; \
	[ -z "$$__corral_retries" ] || set -- "$$@" -R "$$__corral_retries"; \
	[ -z "$$__corral_timeout" ] || set -- "$$@" -t "$$__corral_timeout"; \
	[ -z "$$__corral_slice_timeout" ] || \
		set -- "$$@" -T "$$__corral_slice_timeout"; \
	[ -z "$$__corral_deadline" ] || set -- "$$@" -d "$$__corral_deadline"; \
	[ -z "$$__corral_no_retry" ] || set -- "$$@" -N "$$__corral_no_retry"; \
	[ -z "$$__corral_output_max" ] || set -- "$$@" -o "$$__corral_output_max"; \
	[ -z "$$__corral_limit_cpu" ] || \
		set -- "$$@" -L "cpu=$$__corral_limit_cpu"; \
	[ -z "$$__corral_limit_mem" ] || \
		set -- "$$@" -L "mem=$$__corral_limit_mem"; \
	[ -z "$$__corral_limit_fsize" ] || \
		set -- "$$@" -L "fsize=$$__corral_limit_fsize"; \
	[ "$$__corral_quiet" = 1 ] || set -- "$$@" -v; \
	[ ! -f $(1).est ] || set -- "$$@" -e $(1).est

# What agents show while they run starts afresh with every run, and the
# clones agents of a killed run left go: this make holds the lock, and an
# agent still alive would hold it too, so none of them is anybody's.
__corral_phony += __corral-live
__corral-live:
	$(__corral_Q)rm -rf $(__corral_O)/live $(__corral_O)/work && \
		mkdir -p $(__corral_O)/live

# __corral-gone: true when the make that started the run is gone, dead
# or a zombie not reaped yet (corral-lock's -G asks the same question as
# the agents do).
__corral-gone = { [ -n "$$__corral_guard" ] && ! $(__corral_B)corral-lock \
	-G "$$__corral_guard" $(__corral_O) true 2>/dev/null; }

# One slice, one agent.  The stamp exists only when every unit passed, so
# a slice that failed or died runs again next time; whatever happened, the
# recipe succeeds, and the merge that follows tells the truth about it --
# unless the make that started the run (the guard, whose pid corral.mk
# passes down) is gone: then its agents stop, and this recipe fails so
# that nothing more starts and no merge runs for a run nobody waits for.
%.pass: %.units %.manifest $(__corral_O)/cmd
	$(call __corral-say,SLICE,$(patsubst $(__corral_O)/%,%,$*))
	$(__corral_Q)rm -f $@; $(call __corral_slice_opts,$*); \
	$(__corral_B)corral-run-slice "$$@" \
		-C "$$__corral_src" -P $*.parts \
		$(if $(__corral_outrel),-x $(call __corral-q,$(__corral_outrel))) \
		-w $(__corral_O)/work -r "$$CORRAL_RUN" \
		-i "$$(cat $(__corral_O)/inputs 2>/dev/null)" \
		-c "$$CORRAL_CMD" -l $(dir $(@D))logs $(notdir $*) $<; \
	st=$$?; \
	if [ $$st -eq 0 ]; then touch $@; fi; \
	if $(__corral-gone); then \
		echo "corral: make (pid $$__corral_guard) is gone; agent $(notdir $*) stopped" >&2; \
		exit 2; \
	elif [ $$st -gt 1 ]; then \
		echo "corral: agent $(notdir $*) stopped (status $$st); its units count as not run" >&2; \
	fi

# The digest of everything the units depend on, recorded with each result
# so that a failure followed by a pass on the same inputs reads as flaky.
# (The manifests come from the prerequisites, never a $(wildcard) in the
# recipe: make's directory cache would miss the ones made in this run.  A
# slice with a refused part has none.)
$(__corral_O)/inputs: FORCE $(__corral_O)/cmd
	$(__corral_Q){ cat $(__corral_O)/cmd; \
		for m in $(sort $(filter %.manifest,$^)); do \
			[ ! -e $$m ] || cat $$m; done; } | \
		sha256sum | cut -c1-16 > $@.tmp && $(__corral_filechk)

# The merge: the only writer of the shared files, over the main layer and
# every re-run layer, the latest attempt of each unit winning.
__corral_layers = $(__corral_O)/logs $$(ls -d $(__corral_O)/rerun/[0-9]* \
	2>/dev/null | sort -V | sed 's|$$|/logs|')
# The merge runs only while the make that started the run lives.  -s: the
# agents seal every log, so a log without a seal is refused too.
__corral_merge = $(__corral_B)corral-lock \
	$${__corral_guard:+-G "$$__corral_guard"} $(__corral_O) \
	$(__corral_B)corral-merge -s -u $(__corral_O)/units \
	$$([ "$$__corral_fail_on_flaky" != 1 ] || echo -f) \
	-r "$$CORRAL_RUN" -o $(__corral_O) $(__corral_layers)
# After a merge: the failed and not-run units (what a re-run takes), then
# the one-screen summary, and the JUnit report if one is wanted.
__corral_summary = $(__corral_B)corral-scoreboard -u $(__corral_O) \
	> $(__corral_O)/failed.units.tmp 2>/dev/null; \
	mv -f $(__corral_O)/failed.units.tmp $(__corral_O)/failed.units; \
	$(__corral_B)corral-scoreboard -f $(__corral_O); \
	[ -z "$$__corral_junit" ] || \
	$(__corral_B)corral-report -j "$$__corral_junit" $(__corral_O) || st=2

# The slice list comes from plan.mk, which make remakes first when the
# population or the agent count changed.
__corral_slices :=
ifneq ($(filter __corral-run,$(MAKECMDGOALS)),)
include $(__corral_O)/plan.mk
endif
__corral_stamps := $(foreach k,$(__corral_slices),$(__corral_O)/slices/$(k).pass)

# The manifests must be fresh before the digest; the slices read it.
$(__corral_stamps): | $(__corral_O)/inputs __corral-live
$(__corral_O)/inputs: $(if $(__corral_stamps),$(__corral_stamps:.pass=.manifest),\
	$(wildcard $(__corral_O)/slices/*.manifest))

__corral_phony += __corral-run
__corral-run: $(__corral_stamps)
	$(call __corral-say,MERGE,$(__corral_O))
	$(__corral_Q)$(__corral_merge); st=$$?; $(__corral_summary); exit $$st

__corral_phony += __corral-merge
__corral-merge:
	$(call __corral-say,MERGE,$(__corral_O))
	$(__corral_Q)[ -f $(__corral_O)/units ] || { \
		echo "corral: nothing to merge in '$(__corral_O)'; run corral-run first" >&2; \
		exit 2; }
	$(__corral_Q)$(__corral_merge); st=$$?; $(__corral_summary); exit $$st

# Re-run the failed and not-run units as a new layer: split across fresh
# agents, run by an inner make (sharing the jobserver), merged over all.
__corral_phony += __corral-rerun-failed
__corral-rerun-failed: $(__corral_O)/agents $(__corral_O)/inputs \
		$(__corral_O)/parts-config | __corral-live
	$(__corral_Q)[ -f $(__corral_O)/failed.units ] || { \
		echo "corral: nothing to re-run in '$(__corral_O)'; run corral-run first" >&2; \
		exit 2; }
	$(__corral_Q)if [ ! -s $(__corral_O)/failed.units ]; then \
		echo "corral: nothing to re-run: every unit passed"; exit 0; fi; \
	n=1; while [ -e $(__corral_O)/rerun/$$n ]; do n=$$((n + 1)); done; \
	layer=$(__corral_O)/rerun/$$n; \
	$(__corral-split) -o $$layer/slices $(__corral_O)/failed.units || exit 2; \
	printf '  %-7s %s\n' RERUN "$$(wc -l < $(__corral_O)/failed.units) unit(s) as layer $$n"; \
	CORRAL_LAYER=$$layer $(MAKE) -f $(firstword $(MAKEFILE_LIST)) \
		__corral-layer || exit 2; \
	$(__corral_merge); st=$$?; $(__corral_summary); exit $$st

__corral_layer_stamps :=
ifneq ($(filter __corral-layer,$(MAKECMDGOALS)),)
__corral_layer_stamps := $(patsubst %.units,%.pass,$(wildcard \
	$(value CORRAL_LAYER)/slices/*.units))
endif
__corral_phony += __corral-layer
__corral-layer: $(__corral_layer_stamps)

.PHONY: $(__corral_phony) FORCE
FORCE:
