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

# Each recipe is one step of corral-engine, run in CORRAL_OUT.
__corral_step := $(__corral_Q)$(__corral_b)corral-engine

# CORRAL_PARTS holds auto: the parts depend on what history learned.
__corral_auto := $(filter auto,$(value __corral_set_CORRAL_PARTS))
__corral_history := $(if $(__corral_auto),$(wildcard history.jsonl))

__corral_phony :=

# The population is looked at once per run: when it made plan.mk again,
# make starts over to read it, and it is new.
__corral_force := $(if $(filter undefined,$(origin MAKE_RESTARTS)),FORCE)

# Made before this make starts, by corral-engine run holding the lock:
# the mark, the settings, and the files that hold the settings each
# target depends on, each rewritten only when its content changed.  No
# recipe writes them, so no recipe that fails can have them deleted.
.corral-out settings.json agents slice-config parts-config merge-config: ;

units: $(__corral_force) | .corral-out
	$(__corral_step) units

# A new plan: the slices afresh, numbered longest first, so that listing
# them in order makes make start the longest first.
plan.mk: units agents
	$(__corral_step) plan

__corral_phony += __corral-plan
__corral-plan: units agents
	$(__corral_step) plan

# Every slice's parts (slices/K.parts), by one corral-plan -c.
parts: plan.mk parts-config $(__corral_history)
	$(__corral_step) parts

# Every slice's manifest and the digest of them all.
inputs: FORCE slice-config
	$(__corral_step) inputs

# The run's progress starts afresh, its total counted as make will find
# the stamps.
__corral_phony += __corral-live
__corral-live: inputs
	$(__corral_step) live $(words $(__corral_slices))

# One slice, one agent; the stamp exists only when every unit passed.
%.pass: %.units %.manifest slice-config
	$(__corral_step) slice $*

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

# The merge of a whole run, skipped when no slice ran and nothing it
# reads changed: every stamp is older than the last merge that found
# every unit passed, so its result stands and its board is shown again.
merged: units merge-config $(__corral_stamps)
	$(__corral_step) merge -w

# The goals end here, leaving the run's answer in exit-status.
__corral_phony += __corral-run
__corral-run: merged
	$(__corral_step) answer

__corral_phony += __corral-merge
__corral-merge:
	$(__corral_step) merge

# A layer's inner make shares the jobserver ('+').
__corral_phony += __corral-rerun-failed
__corral-rerun-failed: inputs parts-config | __corral-live
	+$(__corral_step) layer failed

__corral_phony += __corral-only
__corral-only: units inputs parts-config | __corral-live
	+$(__corral_step) layer only

__corral_phony += __corral-merge-shards
__corral-merge-shards: units
	$(__corral_step) merge-shards

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
