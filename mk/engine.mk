################################################################################
#
# engine.mk -- corral's slice graph, run by corral.mk as a sub-make
#
################################################################################
#
# corral.mk runs this make in CORRAL_OUT.  Inputs come from the
# environment corral.mk sets, checked there already.  Recipes read them as
# shell variables ("$$CORRAL_CMD"), or put the option lists in their
# command lines as they are, so no value is ever expanded by make:
#   __corral_src, __corral_out   CORRAL_SRC and CORRAL_OUT, absolute
#   __corral_outrel          CORRAL_OUT relative to CORRAL_SRC when inside
#                            it, else empty
#   __corral_units_file      CORRAL_UNITS_FILE, absolute, or empty
#   __corral_bin             CORRAL_BIN with a trailing '/', or empty
#   __corral_v               1: show every command
#   __corral_silent          non-empty: make -s, no step lines
#   __corral_shell           CORRAL_SHELL, the shell of CORRAL_CMD
#   __corral_only            CORRAL_ONLY, shell patterns over unit names
#   CORRAL_UNITS, CORRAL_DISCOVER, CORRAL_CMD, CORRAL_PARTS,
#   CORRAL_PARTS_CMD, CORRAL_AGENTS   as the user set them
#   CORRAL_RUN               the run id, shared by every record of this run
#   __corral_slice_opts, __corral_parts_opts, __corral_split_opts,
#   __corral_merge_opts, __corral_score_opts, __corral_report_opts
#                            the options of corral-run-slice, corral-plan
#                            -c, corral-split, corral-merge,
#                            corral-scoreboard and corral-report that
#                            come from CORRAL_*
#                            settings, as quoted words
#   __corral_sandbox         corral-run-slice's sandbox options, or empty;
#                            a change re-runs every slice
#   __corral_guard           the pid of the make running corral.mk; once
#                            it is gone (a zombie is gone), agents stop and
#                            no merge starts
#   __corral_lock            the descriptor of CORRAL_OUT's lock, which this
#                            make, its recipes and its agents hold
#   __corral_shard_k, __corral_shard_n   this run is shard K of N, or empty
#   __corral_shard_history   CORRAL_HISTORY, absolute, or empty
#   __corral_host            CORRAL_HOST, or empty (the host's name)
#   __corral_shards          the shard directories corral-merge-shards reads
#   __corral_launch          CORRAL_LAUNCH: the prefix of every agent's
#                            command, split at white space, or empty
#   __corral_guard_node      the node the guard runs on (uname -n): an
#                            agent launched on another has no guard
#   __corral_keep_env        the CORRAL_* names of the user's own
#                            environment: the only CORRAL_* variables,
#                            beside the agent's own, that units get
#   __corral_makeflags, __corral_mflags, __corral_makelevel
#                            MAKEFLAGS, MFLAGS and MAKELEVEL as make gave
#                            them to corral.mk's recipe: what units get,
#                            not this make's (its -rR, its level)
#
# Goals: __corral-run, __corral-only, __corral-merge, __corral-rerun-failed,
# __corral-plan, __corral-merge-shards and __corral-layer (every slice of
# the layer CORRAL_LAYER; a layer's inner make).
#
# Files under CORRAL_OUT (each written whole, and rewritten only when its
# content changes, so that make's mtimes say what really changed):
#   .corral-out             mark: corral made this directory
#   .lock                   flocked by the run (corral-lock), its pid inside
#   units, agents           the population and the slice count (CORRAL_AGENTS,
#                           else "auto": as many as the population calls
#                           for, never make's -j)
#   population, shard.json  of a shard: the whole population (units is the
#                           shard's part of it), and the manifest, written
#                           when its run is over (a slice that starts
#                           removes it)
#   cmd, parts-config       the settings the slices depend on
#   exit-status             the answer of the last corral.mk goal, which
#                           corral.mk's recipe exits with
#   plan.mk                 the slice list; remade from units and agents
#                           (and by __corral-plan), slice 0 the longest
#   slices/K.units          slice K's units, from corral-split
#   slices/K.est            their expected ms, once history knows them
#   slices/plan.json        what the plan rests on (strategy, estimates)
#   slices/K.parts          what slice K clones
#   parts                   stamp: one corral-plan -c -o wrote every K.parts
#   slices/K.manifest       the stat manifest of those parts, all of them
#                           checked by one corral-checkout -M per run
#   slices/K.pass           stamp: slice K ran with these inputs, all passed
#   logs/agent-K.jsonl      slice K's records, from corral-run-slice
#   inputs                  digest of cmd and every manifest, in records
#   merge-config, merged    the merge's settings, and the stamp of the last
#                           merge of a whole run that found every unit
#                           passed; merge-status, the last one's status
#   board                   what corral-scoreboard -f said after a merge
#   live/                   what running agents show corral-status (each
#                           agent's status file, the run's ticks); cleared
#                           when a run starts
#   work/                   the agents' clones; cleared when a run starts
#   rerun/N/{slices,logs}   the same for the N-th layer (corral-rerun-failed,
#                           or corral-run with CORRAL_ONLY); a whole
#                           corral-run drops them before it merges
#   only.units              the units CORRAL_ONLY matched
#   successes.jsonl failures.jsonl summary.json history.jsonl failed.units
#                           from corral-merge, the only writer

MAKEFLAGS += -rR
.SUFFIXES:
# Every file is named as a target (stamps, manifests) or made by a
# recipe of its own, so none is an intermediate: never .SECONDARY, which
# would let make skip a missing stamp under a merge that is up to date.
.DELETE_ON_ERROR:

__corral_v := $(value __corral_v)
__corral_bindir := $(value __corral_bin)
include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

# This make runs in CORRAL_OUT: its targets are named relative to it
# (corral's own names, which need no quoting), and its programs are given
# __corral_o, CORRAL_OUT absolute and quoted, since they name what they
# read in their messages.
__corral_O := $(value __corral_out)
__corral_o := $(call __corral-q,$(__corral_O))
# The option lists corral.mk made, quoted already.
__corral_slice_opts := $(value __corral_slice_opts)
__corral_parts_opts := $(value __corral_parts_opts)
__corral_split_opts := $(value __corral_split_opts)
__corral_merge_opts := $(value __corral_merge_opts)
__corral_score_opts := $(value __corral_score_opts)
__corral_report_opts := $(value __corral_report_opts)
__corral_parts_words := $(value __corral_parts_words)
# CORRAL_PARTS holds auto: slices clone what history learned each unit
# reads, and a unit learned of nothing yet makes its slice clone the whole
# tree (less .git), where its agent learns it.
__corral_auto := $(value __corral_auto)
__corral_history := $(if $(__corral_auto),$(wildcard history.jsonl))
# CORRAL_OUT, when inside CORRAL_SRC, is never a unit and never cloned.
__corral_x := $(if $(value __corral_outrel),-x $(call __corral-q,$(value \
	__corral_outrel)))
# A clone of the whole tree that auto learns in holds no .git.
__corral_xgit := $(if $(__corral_auto),-x .git)

# Finish writing $@ from $@.tmp: keep the old file (and its mtime) when the
# content is the same, else rename the new one into place.
__corral_filechk = if [ -e $@ ] && cmp -s $@.tmp $@; then rm -f $@.tmp; \
	else mv -f $@.tmp $@; fi

# The same for the small files every run makes again (a few short lines),
# by the shell alone, without the two processes (cmp, then rm or mv) that
# each would cost before the first unit starts: $(__corral_put) makes $@
# hold the shell variable v, rewriting it only when that changed.  A write
# cut short is deleted by make (.DELETE_ON_ERROR), or found different and
# written again by the next run.  __corral_nl sets nl to a newline (one
# fork, no program), for building v; __corral-slurp FILE sets o to FILE's
# content (empty when there is none).
__corral_nl = nl=$$(printf '\n.'); nl=$${nl%.}
__corral-slurp = o=; l=; if [ -f $(1) ]; then while IFS= read -r l; do \
	o="$$o$$l$$nl"; done < $(1); o="$$o$$l"; fi
__corral_put = $(call __corral-slurp,$@); [ -f $@ ] && [ "$$o" = "$$v" ] || \
	printf '%s' "$$v" > $@

# __corral_shown: a filter for the lines a recipe says that name what
# came from outside (a part a history line or a parts command named):
# the control bytes a terminal acts on shown as '?', as the programs
# show them (corral_buf_add_shown; C1 and ill-formed UTF-8 are theirs
# alone, beyond tr).
__corral_shown = LC_ALL=C tr '\001-\011\013-\037\177' '[?*]'

# __corral-say: one short line per step, unless every command is shown
# or make runs silent (-s).
# __corral_tell: non-empty when step lines are printed.
__corral_silent := $(value __corral_silent)
__corral_tell := $(if $(__corral_Q),$(if $(__corral_silent),,1))
# __corral-step WHAT,WHO: the step line "  WHAT    WHO"; on a terminal the
# agents' status line (stderr, redrawn in place) is cleared first, as
# ninja and cargo clear theirs before any other line.  Builtins only.
__corral-step = { [ ! -t 1 ] || [ ! -t 2 ] || printf '\r\033[K'; \
	printf '  %-7s %s\n' $(1) $(2); }
__corral-say = $(if $(__corral_tell),@$(call __corral-step,$(1),$(call \
	__corral-q,$(2))))

__corral_phony :=

# The population and the slice count are looked at once per run: when
# they made plan.mk again, make starts over to read it, and they are new.
__corral_force := $(if $(filter undefined,$(origin MAKE_RESTARTS)),FORCE)

# The mark: corral-lock made it, holding the lock, before this make
# started (refusing a CORRAL_OUT that holds somebody else's files).  No
# recipe writes it, so no recipe that fails can have it deleted.
.corral-out: ;

# The slice count: CORRAL_AGENTS, else "auto", a function of the
# population (corral-split -n auto).  Never make's -j: that says how many
# slices run at once, and a run at another -j (a re-run of the failures
# without one) must find the same plan.
agents: $(__corral_force) | .corral-out
	$(__corral_Q)$(__corral_nl); v="$${CORRAL_AGENTS:-auto}$$nl"; $(__corral_put)

# __corral-unlocked: COMMAND run without the run's lock, which this make
# and its recipes hold: a daemon that a command of the user's leaves
# would otherwise hold it, and block every later run, for as long as it
# lives.
__corral-unlocked = $(__corral_b)corral-lock -u $(__corral_o) $(1)

# The population, minus anything under CORRAL_OUT.  A unit is literal: the
# words of CORRAL_UNITS are split (as make splits them) but never globbed,
# and lines are never re-read by a shell.  A line ends at LF, and a CR just
# before it is part of the ending (as in every corral program).
__corral_list = \
	if [ -n "$$CORRAL_DISCOVER" ]; then \
		(cd "$$__corral_src" && \
		$(call __corral-unlocked,sh -c "$$CORRAL_DISCOVER")); \
	else set -f; printf '%s\n' $$CORRAL_UNITS; fi

# A units file is read where it is, not copied first.
units: $(__corral_force) | .corral-out
	$(__corral_Q)if [ -z "$$CORRAL_DISCOVER" ] && [ -n "$$__corral_units_file" ]; then \
		set -- "$$__corral_units_file"; \
	else set -- $@.raw; ($(__corral_list)) > $@.raw || { \
		echo "corral: listing the units failed (status $$?)" >&2; \
		rm -f $@.raw; exit 2; }; fi; \
	awk 'BEGIN { p = ENVIRON["__corral_outrel"] } \
		{ sub(/\r$$/, "") } \
		p == "" || ($$0 != p && $$0 != "./" p && \
		index($$0, p "/") != 1 && index($$0, "./" p "/") != 1)' \
		"$$1" > $@.tmp || { \
		echo "corral: listing the units failed (status $$?)" >&2; \
		rm -f $@.tmp; exit 2; }; \
	{ [ "$$1" != $@.raw ] || rm -f $@.raw; } && $(__corral_shard_cut)$(__corral_filechk)

# A shard's units: its part of the population, the same on every host.
__corral_shard := $(value __corral_shard_k)
__corral_shard_opts = $${__corral_shard_history:+-H "$$__corral_shard_history"} \
	-k "$$__corral_shard_k" -n "$$__corral_shard_n"
__corral_shard_cut = $(if $(__corral_shard),mv -f $@.tmp population.tmp && \
	{ $(__corral_b)corral-shard $(__corral_shard_opts) population.tmp \
	> $@.tmp || { rm -f $@.tmp; exit 2; }; } && { cmp -s population.tmp \
	population && rm -f population.tmp || mv -f population.tmp \
	population; } && )
# The manifest says the shard's run is over, and what it was.
__corral_manifest = $(if $(__corral_shard),; $(__corral_b)corral-shard \
	$(__corral_shard_opts) -m $(__corral_o)/shard.json -r "$$CORRAL_RUN" \
	$${__corral_host:+-s "$$__corral_host"} population > /dev/null || st=2)
# A shard's agents are named after it too: unique across the shards.
__corral_agent = $(notdir $*)$(if $(__corral_shard),.s$(__corral_shard))

cmd: FORCE | .corral-out
	$(__corral_Q)$(__corral_nl); v="src $$__corral_src$${nl}cmd $$CORRAL_CMD$${nl}shell $$__corral_shell$$nl"; \
		[ -z "$$__corral_sandbox" ] || v="$${v}sandbox $$__corral_sandbox$$nl"; \
		$(__corral_put)

# A part that does not exist stops the run here, before any unit, named
# once (with the nearest path that does, if one is a slip away).
parts-config: FORCE | .corral-out
	$(__corral_Q)$(__corral_b)corral-parts -k -C "$$__corral_src" \
		$(__corral_parts_words) || exit 2; \
	$(__corral_nl); v="parts $$CORRAL_PARTS$${nl}parts-cmd $$CORRAL_PARTS_CMD$$nl"; \
		$(__corral_put)

# __corral-split N: corral-split into N slices with the strategy and the
# history.
__corral-split = $(__corral_b)corral-split $(__corral_split_opts) \
	$(if $(__corral_silent),-q) \
	-H $(__corral_o)/history.jsonl -C "$$__corral_src" -n $(1)

# A new plan starts the slices afresh: corral-split removes the files and
# logs of slices that no longer exist, and re-run layers go, which
# answered the old plan.  corral-split numbers the slices longest first
# (by history, else by the bytes of their unit files), so listing them in
# order makes make start the longest first.  plan.mk goes first and comes
# back last: a plan killed half-way, some slice files new and some old,
# has no plan.mk and is made again whole.
# Usage: a recipe of just $(__corral_plan_recipe).
define __corral_plan_recipe
$(call __corral-say,PLAN,$(__corral_O)/plan.mk)
$(__corral_Q)[ ! -e plan.mk ] || rm -f plan.mk; read -r a < agents; \
	$(call __corral-split,"$$a") -o $(__corral_o)/slices \
	-l $(__corral_o)/logs $(__corral_o)/units || exit; \
	[ ! -e rerun ] || rm -rf rerun || exit; \
	n=0; for f in slices/[0-9]*.units; do [ ! -e "$$f" ] || n=$$((n + 1)); done; \
	printf '__corral_slices :=' > plan.mk.tmp && \
	i=0; while [ $$i -lt $$n ]; do printf ' %s' $$i; i=$$((i + 1)); done \
		>> plan.mk.tmp && echo >> plan.mk.tmp && mv -f plan.mk.tmp plan.mk
endef

plan.mk: units agents
	$(__corral_plan_recipe)

# The plan made again on request, from the history so far.
__corral_phony += __corral-plan
__corral-plan: units agents
	$(__corral_plan_recipe)

# Every slice's parts (CORRAL_PARTS, each unit that is a path, what
# CORRAL_PARTS_CMD prints for each unit; with auto, also what history
# learned), by one corral-plan -c -o for the whole plan, each K.parts
# rewritten only when it changed; made again when the plan, the parts
# settings or (auto) the history changed.  The parts command is the
# user's, so it runs without the lock.
# __corral-parts DIR: the command.
__corral-parts = $(call __corral-unlocked,$(__corral_b)corral-plan -c \
	-C "$$__corral_src" $(__corral_parts_opts) $(if $(__corral_auto),-H \
	$(__corral_o)/history.jsonl) -o $(__corral_o)/$(1))
parts: plan.mk parts-config $(__corral_history)
	$(__corral_Q)$(call __corral-parts,slices) && : > $@

# __corral-manifests DIR: every DIR/K.manifest from DIR/K.parts, checked
# by one process for all the slices (each rewritten only when a part
# changed) and the digest of them all on stdout.  A part that escapes
# leaves no manifest; the slice still runs, and reports the refusal (a
# unit named '..' fails alone).
__corral-manifests = $(__corral_b)corral-checkout -M $(__corral_o)/$(1) \
	$(__corral_x) $(__corral_xgit) "$$__corral_src"

# With auto, the run after a slice learned in the whole tree need not run
# it again: when its new manifest, the learned parts, is a part of the
# whole tree's it passed with, line for line (every file it reads is as it
# was then; a learned file that is gone is a "- PART" line), it keeps the
# old manifest's time, and so its stamp.
# Usage: in a recipe, with the manifest in the shell variable m.
__corral_learned_keep = if [ -e "$$m".old ] && [ -e "$$m" ] && \
	grep -q ' \.$$' "$$m".old && ! grep -q ' \.$$' "$$m"; then \
		LC_ALL=C sort "$$m" > "$$m".new && LC_ALL=C sort "$$m".old > "$$m".was && \
		if [ -z "$$(LC_ALL=C comm -23 "$$m".new "$$m".was)" ]; then \
			touch -r "$$m".old "$$m"; fi; \
		rm -f "$$m".new "$$m".was; fi; rm -f "$$m".old

# What agents show while they run starts afresh with every run, and the
# clones agents of a killed run left go: this make holds the lock, and an
# agent still alive would hold it too, so none of them is anybody's.
# Its ticks start with the number of units the run will run ("T N"), so
# that the progress total is right from the first line: the units of the
# slices whose stamps are missing or older than what they depend on (as
# make will find them: the manifests are fresh by now), or all under -B;
# one stat and one awk for all the slices, never a process per slice.
__corral_phony += __corral-live
__corral-live: inputs
	$(__corral_Q){ [ ! -e live ] && [ ! -e work ] || rm -rf live work; } && \
	mkdir -p live && \
	{ stat -c '%.9Y %n' cmd slices/*.units slices/*.manifest \
		slices/*.pass 2>/dev/null; } | awk -v all=$(if $(findstring \
		B,$(firstword -$(MAKEFLAGS))),1,0) -v ks='$(__corral_slices)' ' \
	function newer(a, b) { split(t[a], x, "."); split(t[b], y, "."); \
		return x[1] + 0 > y[1] + 0 || \
			(x[1] + 0 == y[1] + 0 && x[2] + 0 > y[2] + 0) } \
	{ t[substr($$0, index($$0, " ") + 1)] = $$1 } \
	END { n = 0; k = split(ks, v, " "); for (i = 1; i <= k; i++) { \
		s = "slices/" v[i]; \
		if (!all && (s ".pass") in t && (s ".manifest") in t && \
			!newer(s ".units", s ".pass") && \
			!newer(s ".manifest", s ".pass") && \
			!newer("cmd", s ".pass")) continue; \
		while ((getline l < (s ".units")) > 0) n++; \
		close(s ".units") } \
	print "T " n }' > live/ticks

# __corral-gone: true when the make that started the run is gone, dead
# or a zombie not reaped yet (corral-lock's -G asks the same question as
# the agents do).
__corral-gone = { [ -n "$$__corral_guard" ] && ! $(__corral_b)corral-lock \
	-G "$$__corral_guard" $(__corral_o) true 2>/dev/null; }

# One slice, one agent, with the options corral.mk made from the
# settings.  The stamp exists only when every unit passed, so a slice that
# failed or died runs again next time; whatever happened, the recipe
# succeeds, and the merge that follows tells the truth about it -- unless
# the make that started the run (the guard, whose pid corral.mk passes
# down) is gone: then its agents stop, and this recipe fails so that
# nothing more starts and no merge runs for a run nobody waits for.
# One shell and one agent per slice, and nothing else on the way: the
# agent makes the stamp (-D), the digest is read by the shell, and the
# guard is asked about only when the agent did not finish.  The agent
# gets make's own variables as corral.mk's recipe had them, and passes
# its units only the user's CORRAL_* (-E): what a unit inherits is the
# user's environment (corral.mk, "What a unit inherits").  The launcher
# (CORRAL_LAUNCH) is split into its words, never globbed (set -f).
%.pass: %.units %.manifest cmd
	$(__corral_Q)$(if $(__corral_tell),$(call __corral-step,SLICE,'$*'); )\
	$(if $(__corral_shard),rm -f shard.json; )\
	if [ -f $*.est ]; then set -- -e $(__corral_o)/$*.est; else set --; fi; \
	i=; { read -r i < inputs; } 2>/dev/null; set -f; \
	MAKEFLAGS=$$__corral_makeflags MFLAGS=$$__corral_mflags \
	MAKELEVEL=$$__corral_makelevel \
	__corral_launched=$${__corral_launch:+1} $$__corral_launch \
	$(__corral_b)corral-run-slice $(__corral_slice_opts) "$$@" \
		-E "$$__corral_keep_env" \
		$${__corral_guard:+-G "$$__corral_guard"} \
		-S $(__corral_o)/live -C "$$__corral_src" \
		-P $(__corral_o)/$*.parts $(__corral_x) $(__corral_xgit) \
		$(if $(__corral_auto),-A $(__corral_o)/history.jsonl) \
		$(if $(value CORRAL_LAYER),,-M) \
		-w $(__corral_o)/work -r "$$CORRAL_RUN" -D $(__corral_o)/$@ \
		-i "$$i" -c "$$CORRAL_CMD" \
		$${__corral_host:+-m "$$__corral_host"} \
		-l $(__corral_o)/$(patsubst ./%,%,$(dir $(@D)))logs \
		$(__corral_agent) $(__corral_o)/$<; \
	st=$$?; \
	if [ $$st -gt 1 ] && $(__corral-gone); then \
		echo "corral: make (pid $$__corral_guard) is gone; agent $(__corral_agent) stopped" >&2; \
		exit 2; \
	elif [ $$st -gt 1 ]; then \
		echo "corral: agent $(__corral_agent) stopped (status $$st); its units count as not run" >&2; \
	fi

# The digest of everything the units depend on, recorded with each result
# so that a failure followed by a pass on the same inputs reads as flaky,
# made with every manifest of the plan.  A slice with a refused part has
# none; a checker that fails leaves none at all, and every slice runs.
# Here too, once for the run, each part a parts command printed that does
# not exist (the manifests list it as "- PART"; the agents say nothing).
inputs: FORCE cmd
	$(if $(__corral_auto),$(__corral_Q)for m in slices/*.manifest; do \
		[ ! -e "$$m" ] || cp -p "$$m" "$$m.old"; done)
	$(__corral_Q)$(__corral_nl); $(call __corral-slurp,cmd); \
		i=$$({ printf '%s' "$$o"; $(call __corral-manifests,slices) || { \
		rm -f slices/*.manifest; echo none; }; } | \
		sha256sum) && i=$${i%"$${i#????????????????}"} && v="$$i$$nl" && \
		$(__corral_put)
	$(if $(__corral_auto),$(__corral_Q)for m in slices/*.manifest; do \
		$(__corral_learned_keep); done)
	$(__corral_Q)sed -n 's/^- //p' slices/*.manifest 2>/dev/null | \
		LC_ALL=C sort -u | while IFS= read -r p; do \
		printf "corral: part '%s' not found in '%s'; not cloned\n" \
			"$$p" "$$__corral_src"; done | $(__corral_shown) >&2

# The merge: the only writer of the shared files, over the main layer and
# every re-run layer, the latest attempt of each unit winning.  It runs
# only while the make that started the run lives.  -s: the agents seal
# every log, so a log without a seal is refused too.
__corral_merge = set -- $(__corral_o)/logs; \
	[ ! -d rerun ] || for d in $$(ls -d rerun/[0-9]* 2>/dev/null | sort -V); do \
		set -- "$$@" $(__corral_o)/"$$d"/logs; done; \
	$(__corral_b)corral-lock $${__corral_guard:+-G "$$__corral_guard"} \
	$(__corral_o) $(__corral_b)corral-merge -s $(__corral_merge_opts) \
	-u $(__corral_o)/units -r "$$CORRAL_RUN" -o $(__corral_o) "$$@"
# After a merge: the failed and not-run units (what a re-run takes), and
# beside it (both only read the merge's files) the one-screen summary,
# kept in board (shown after it, and again by a run that merges nothing
# new), then the JUnit report if one is wanted.
__corral_summary = { $(__corral_b)corral-scoreboard -u $(__corral_o) \
	> failed.units.tmp 2>/dev/null; \
	mv -f failed.units.tmp failed.units; } & \
	if [ -s units ]; then $(__corral_b)corral-scoreboard -f \
	$(__corral_score_opts) $(__corral_o); else echo "corral: shard \
	$$__corral_shard_k/$$__corral_shard_n holds none of the $$(wc -l \
	< population | tr -d ' ') units: there are more shards than units"; \
	fi > board.tmp; mv -f board.tmp board; wait $$!$(if \
	$(__corral_report_opts),; $(__corral_b)corral-report \
	$(__corral_report_opts) $(__corral_o) || st=2)$(__corral_manifest)

# What the merge's result depends on beyond the logs.
merge-config: FORCE | .corral-out
	$(__corral_Q)$(__corral_nl); v="$$__corral_merge_opts$$nl$$__corral_report_opts$$nl"; \
		$(__corral_put)

# The slice list comes from plan.mk, which make remakes first when the
# population or the agent count changed.
__corral_slices :=
ifneq ($(filter __corral-run,$(MAKECMDGOALS)),)
include plan.mk
endif
__corral_stamps := $(foreach k,$(__corral_slices),slices/$(k).pass)

# The manifests are made with the digest, and looked at again by make
# after it (an empty recipe), so that a slice runs only when its own
# manifest changed.
$(__corral_stamps): | __corral-live
$(__corral_stamps:.pass=.manifest): inputs ;
inputs: $(if $(__corral_stamps),parts)

# The goals of corral.mk end here, leaving the run's answer ($$st) in
# exit-status and succeeding: corral.mk's recipe exits with it, so that
# make's error line, if any, names the target the user asked for.
__corral_answer = echo $$st > exit-status

# An empty population is said in one line, and is no result; an empty
# shard of a population is a result (a matrix wider than the suite).
__corral_shard_empty = $(if $(__corral_shard), && [ ! -s population ])
# An empty population is said in one line, and is no result.
__corral_nounits = if [ -n "$$CORRAL_DISCOVER" ]; then \
		echo "corral: no units: CORRAL_DISCOVER printed nothing"; \
	elif [ -n "$$__corral_units_file" ]; then \
		echo "corral: no units: CORRAL_UNITS_FILE '$$__corral_units_file' is empty"; \
	else echo "corral: no units: CORRAL_UNITS is empty"; fi >&2

__corral_phony += __corral-run
# The merge of a whole run, skipped when no slice ran and nothing it
# reads changed: every stamp is there and older than the last merge that
# found every unit passed (the only one that leaves this stamp), so its
# result stands and its board is shown again.  No process per slice, no
# log read again: make's own view of the stamps decides.
merged: units merge-config $(__corral_stamps)
	$(__corral_Q)[ ! -e $@ ] || rm -f $@; if [ ! -s units ]$(__corral_shard_empty); then \
	st=2; $(__corral_nounits); else \
	$(if $(__corral_shard),[ -s units ] || mkdir -p logs; )\
	$(if $(__corral_tell),$(call __corral-step,MERGE,$(call \
		__corral-q,$(__corral_O)));) \
	{ [ ! -e rerun ] || rm -rf rerun; }; $(__corral_merge); st=$$?; $(__corral_summary); \
	[ $$st -ne 0 ] || : > $@; fi; echo $$st > merge-status

__corral-run: merged
	$(__corral_Q)[ ! -f board ] || cat board; read -r st < merge-status; \
	$(__corral_answer)

__corral_phony += __corral-merge
__corral-merge:
	$(call __corral-say,MERGE,$(__corral_O))
	$(__corral_Q)if [ ! -f units ]; then st=2; \
		echo "corral: nothing to merge in '$$__corral_out'; run corral-run first" >&2; \
	else $(__corral_merge); st=$$?; $(__corral_summary); cat board; fi; \
	$(__corral_answer)

# __corral-layer-run LIST: the units of the file LIST run as a new layer,
# split across fresh agents, run by an inner make (sharing the
# jobserver: a recipe using it starts with '+'), and merged over all.
# The main slices holding one of them lose their stamps, so that the next
# corral-run runs them again and its main layer alone is the result
# (after which the layers no longer count).  Sets st.
__corral-layer-run = n=1; while [ -e rerun/$$n ]; do n=$$((n + 1)); done; \
	if $(call __corral-split,"$${CORRAL_AGENTS:-auto}") \
		-o $(__corral_o)/rerun/$$n/slices $(__corral_o)/$(1) && \
		$(call __corral-parts,rerun/$$n/slices) && \
		{ $(call __corral-manifests,rerun/$$n/slices) > /dev/null || \
		rm -f rerun/$$n/slices/*.manifest; }; then \
	$(if $(__corral_tell),printf,:) '  %-7s %s\n' RERUN \
		"$$(wc -l < $(1)) unit(s) as layer $$n"; \
	$(call __corral-unstamp,$(1)); \
	echo "T $$(wc -l < $(1))" >> live/ticks; \
	if CORRAL_LAYER=rerun/$$n $(MAKE) \
		-f $(call __corral-q,$(firstword $(MAKEFILE_LIST))) \
		__corral-layer; then \
	$(__corral_merge); st=$$?; $(__corral_summary); cat board; fi; fi
# __corral-unstamp LIST: remove the stamp of every main slice holding a
# unit of LIST (names compared as whole lines).
__corral-unstamp = set -- slices/[0-9]*.units; [ ! -e "$$1" ] || \
	awk 'NR == FNR { want[$$0]; next } ($$0 in want) { \
		f = FILENAME; sub(/\.units$$/, ".pass", f); print f }' \
		$(1) "$$@" | sort -u | xargs rm -f

# Re-run the failed and not-run units as a new layer.
__corral_phony += __corral-rerun-failed
__corral-rerun-failed: inputs parts-config | __corral-live
	+$(__corral_Q)st=2; if [ ! -f failed.units ]; then \
		echo "corral: nothing to re-run in '$$__corral_out'; run corral-run first" >&2; \
	elif [ ! -s failed.units ]; then st=0; \
		echo "corral: nothing to re-run: every unit passed"; \
	else $(call __corral-layer-run,failed.units); fi; \
	$(__corral_answer)

# corral-run with CORRAL_ONLY: the units matching one of its shell
# patterns run as a new layer over the result; nothing is planned again.
__corral_phony += __corral-only
__corral-only: units inputs parts-config | __corral-live
	+$(__corral_Q)st=2; (set -f; while IFS= read -r u; do \
		for p in $$__corral_only; do case "$$u" in $$p) \
			printf '%s\n' "$$u"; break ;; esac; done; \
	done) < units > only.units; \
	if [ ! -s only.units ]; then \
		echo "corral: no unit matches CORRAL_ONLY '$$__corral_only'" >&2; \
	else $(call __corral-layer-run,only.units); fi; \
	$(__corral_answer)

# The merge of shard directories (CORRAL_SHARDS, or every
# .corral/shard-*-of-* under CORRAL_SRC) over the population found here.
# The list is split into its words, never globbed (set -f): a directory
# may hold * ? [.
__corral_phony += __corral-merge-shards
__corral-merge-shards: units
	$(call __corral-say,MERGE,$(__corral_O) (shards))
	$(__corral_Q)if [ -z "$$__corral_shards" ]; then st=2; printf '%s%s\n' \
		"corral: no shard directories to merge: set CORRAL_SHARDS, " \
		"or run CORRAL_SHARD=K/N into .corral/shard-K-of-N" >&2; \
	else set -f; $(__corral_b)corral-lock $${__corral_guard:+-G "$$__corral_guard"} \
	$(__corral_o) $(__corral_b)corral-merge -S $(__corral_merge_opts) \
	$${__corral_shard_history:+-H "$$__corral_shard_history"} \
	-u $(__corral_o)/units -r "$$CORRAL_RUN" -o $(__corral_o) \
	$$__corral_shards; st=$$?; $(__corral_summary); cat board; fi; \
	$(__corral_answer)

__corral_layer_stamps :=
ifneq ($(filter __corral-layer,$(MAKECMDGOALS)),)
__corral_layer_stamps := $(patsubst %.units,%.pass,$(wildcard \
	$(value CORRAL_LAYER)/slices/*.units))
endif
# Made with the layer's plan (a refused part leaves none).
$(__corral_layer_stamps:.pass=.manifest): ;
__corral_phony += __corral-layer
__corral-layer: $(__corral_layer_stamps)

.PHONY: $(__corral_phony) FORCE
FORCE:
