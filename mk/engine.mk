################################################################################
#
# engine.mk -- corral's slice graph, run by corral-engine in CORRAL_OUT
#
################################################################################
#
# Make declares, C decides.  This file is only the graph: its targets, what
# each depends on, and the stamps that make's up-to-date logic compares
# (make -jN is the parallelism, the stamps the incrementality).  Each recipe
# is one call of one step of corral-engine (tools/corral-engine.c,
# src/engine/), which reads the run's settings from settings.json.
#
# corral-engine run, started by corral.mk's recipe, reads the settings
# corral.mk checked and handed over, takes CORRAL_OUT's lock (this make,
# its recipes and its agents inherit it), writes the files below that hold
# the settings, and runs this make in CORRAL_OUT for one goal; the goal
# leaves the run's answer in exit-status, which corral-engine run exits
# with.  From the environment this make reads only __corral_v (V=1),
# __corral_bin (where corral-engine is), __corral_set_CORRAL_PARTS (auto
# makes the parts depend on the history) and, in a layer's inner make,
# CORRAL_LAYER.
#
# Goals: __corral-run, __corral-only, __corral-list (in a scratch copy),
# __corral-merge, __corral-rerun-failed, __corral-plan,
# __corral-merge-shards and __corral-layer (every slice of the layer
# CORRAL_LAYER; a layer's inner make).
#
# Files under CORRAL_OUT (each written whole, and rewritten only when its
# content changes, so that make's mtimes say what really changed):
#   .corral-out             mark: corral made this directory
#   .lock                   flocked by the run, its pid inside
#   settings.json           every setting of the run (corral-engine settings
#                           lists them, with their defaults)
#   agents, slice-config, parts-config, merge-config
#                           the settings the plan, every slice, the parts and
#                           the merge depend on (the settings table's
#                           "joins" column says which)
#   units                   the population (CORRAL_OUT never in it)
#   population, shard.json  of a shard: the whole population (units is the
#                           shard's part of it), and the manifest, written
#                           when its run is over (a slice that starts
#                           removes it)
#   exit-status             the answer of the last goal
#   plan.mk                 the slice list; remade from units and agents
#                           (and by __corral-plan), slice 0 the longest
#   slices/K.units, K.est   slice K's units and their expected ms
#   slices/plan.json        what the plan rests on (strategy, estimates)
#   slices/K.parts          what slice K clones
#   parts                   stamp: every K.parts was written
#   slices/K.manifest       the manifest of those parts (content digests)
#   digests                 the memo of the files' digests, by their stat
#   slices/K.pass           stamp: slice K ran with these inputs, all passed
#   cached.mk               a run's one included makefile: plan.mk's
#                           slice list, and the slices the stores answered
#                           before the graph was read, and the run
#   logs/agent-K.jsonl      slice K's records, from corral-run-slice
#   inputs                  digest of slice-config and every manifest
#   merged                  stamp of the last merge of a whole run that found
#                           every unit passed; merge-status, the last one's
#   board                   what corral-scoreboard -f said after a merge
#   live/                   what running agents show corral-status; cleared
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

# Every slice's manifest and the digest of them all, once a run; in a
# run, then the slices the stores answer (cached.mk, below).
__corral_ask := $(if $(and $(__corral_force),$(filter \
	__corral-run,$(MAKECMDGOALS))), -c)
inputs: $(__corral_force) slice-config
	$(__corral_step) inputs$(__corral_ask)

# The run's progress starts afresh, its total counted as make will find
# the stamps.
__corral_phony += __corral-live
__corral-live: inputs
	$(__corral_step) live $(words $(__corral_slices))

# One slice, one agent; the stamp exists only when every unit passed.
%.pass: %.units %.manifest slice-config
	$(__corral_step) slice $*

# The slice list comes from plan.mk, which make remakes first when the
# population or the agent count changed.  A run reads it from cached.mk,
# its one included makefile (two made in one pass under -j can leave
# make's notice of the first one's change behind): cached.mk is made in
# the first pass by the step that makes the manifests (inputs -c), after
# plan.mk and the parts, which then asks the stores first, before make
# reads the graph, and answers every slice out of date whose every unit a
# store holds (its log and stamp written, no agent started).  It holds
# plan.mk's slice list and the slices answered, and changes only when
# they did: make then starts over to read the new plan, and to find the
# stamps of those slices up to date.
__corral_slices :=
ifneq ($(filter __corral-list,$(MAKECMDGOALS)),)
include plan.mk
endif
ifneq ($(filter __corral-run,$(MAKECMDGOALS)),)
include cached.mk
endif
cached.mk: inputs ;
__corral_stamps := $(foreach k,$(__corral_slices),slices/$(k).pass)

# The manifests are made with the digest, and looked at again by make
# after it (an empty recipe), so that a slice runs only when its own
# manifest changed.
$(__corral_stamps): | __corral-live
$(__corral_stamps:.pass=.manifest): inputs ;
inputs: $(if $(or $(__corral_stamps),$(filter __corral-run __corral-list,$(MAKECMDGOALS))),parts)

# The merge of a whole run, skipped when no slice ran and nothing it
# reads changed: every stamp is older than the last merge that found
# every unit passed, so its result stands and its board is shown again.
merged: units merge-config $(__corral_stamps)
	$(__corral_step) merge -w

# The goals end here, leaving the run's answer in exit-status.
__corral_phony += __corral-run
__corral-run: merged
	$(__corral_step) answer

# What a run would run (corral-list, make -q corral-run), asked in a
# scratch copy of CORRAL_OUT: the plan, parts and manifests up to date,
# no slice run; corral-engine then compares the stamps.
__corral_phony += __corral-list
__corral-list: inputs ;

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
