################################################################################
#
# Makefile -- build, test and install corral
#
################################################################################
#
# Inputs (set on the command line):
#   PREFIX    ?= /usr/local   installation prefix (GNU's prefix too)
#   bindir, datadir, mandir   GNU's installation directories, from prefix
#                             as GNU's coding standards say (MANDIR too)
#   libexecdir                where the test helpers (corral-marker-*) go,
#                             in libexecdir/corral; the programs look for
#                             them at bindir/../libexec/corral
#   DESTDIR   ?=              staging root for packagers
#   CPPFLAGS, CFLAGS, LDFLAGS added to the build's own (dpkg-buildflags)
#   INSTALL   ?= install      the install program
#   SANITIZE  ?=              1: build under build/asan with ASan+UBSan
#   COVERAGE  ?=              1: build under build/cov with gcov
#   WERROR    ?=              1: warnings are errors (always, for 'test')
#   V         ?= 0            1: show every command
#   VALGRIND  ?=              1: 'make test' runs the programs under valgrind
#   TESTS     ?=              bats arguments for 'make test' (a file, -f RE)
#   SUITE     ?= corral       'make test' runs the suite through corral
#                             itself, each bats file a unit, at make's -j
#                             (every CPU without one); serial: one bats
#   FUZZ_SECONDS ?= 60        'make fuzz': seconds per harness
#   FUZZ_RUNS ?=              'make fuzz': executions per harness instead
#
# Targets: all (default), test, coverage, fuzz, bench, demo, proving-ground,
# slurm-test, repair-round, install, uninstall, deps, npm-consumers, clean.  The programs land in bin/ (a sanitizer or coverage build
# keeps its own bin/ under build/, so bin/ is always the plain build).

MAKEFLAGS += -rR
.SUFFIXES:
.DELETE_ON_ERROR:
# Keep objects and directories that pattern rules made along the way.
.SECONDARY:

PREFIX  ?= /usr/local
prefix  ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir  ?= $(exec_prefix)/bin
libexecdir ?= $(exec_prefix)/libexec
datarootdir ?= $(prefix)/share
datadir ?= $(datarootdir)
MANDIR  ?= $(datarootdir)/man
mandir  ?= $(MANDIR)
man1dir ?= $(mandir)/man1
man7dir ?= $(mandir)/man7
DESTDIR ?=
INSTALL ?= install
INSTALL_PROGRAM ?= $(INSTALL)
INSTALL_DATA ?= $(INSTALL) -m 644
V       ?= 0
SUITE   ?= corral
# CC comes from the command line or the environment (CC=clang works);
# make's own default, and none at all under -R, mean cc.
ifneq ($(filter default undefined,$(origin CC)),)
CC      := cc
endif
AR      := ar

ifeq ($(V),1)
Q :=
else
Q := @
endif

# test and coverage builds always turn warnings into errors.
ifneq ($(filter test coverage,$(MAKECMDGOALS)),)
WERROR := 1
endif

ifeq ($(SANITIZE),1)
BUILD  := build/asan
BIN    := $(BUILD)/bin
FLAVOR := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=all
else ifeq ($(COVERAGE),1)
BUILD  := build/cov
BIN    := $(BUILD)/bin
FLAVOR := -O0 --coverage -DCORRAL_COVERAGE
else
BUILD  := build/release
BIN    := bin
FLAVOR := -O2
endif

CJSON_CFLAGS = $(shell pkg-config --cflags libcjson)
CJSON_LIBS   = $(shell pkg-config --libs libcjson)
CRYPTO_LIBS  = $(shell pkg-config --libs libcrypto)
XML_CFLAGS   = $(shell pkg-config --cflags libxml-2.0)
XML_LIBS     = $(shell pkg-config --libs libxml-2.0)
CURL_CFLAGS  = $(shell pkg-config --cflags libcurl)
CURL_LIBS    = $(shell pkg-config --libs libcurl)

ALL_CFLAGS := $(CPPFLAGS) -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic \
	-Wshadow -Wstrict-prototypes -Wmissing-prototypes -g $(FLAVOR) $(CFLAGS)
# -Werror changes no object, only whether a warning stops the build, so it
# stays out of the flags that decide a rebuild.
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
ALL_LDFLAGS := $(FLAVOR) $(LDFLAGS)
# Every program is linked with every library, and keeps only those it
# calls: corral-engine, started for each step of a run, must not load
# libcurl's thirty libraries (3 ms of CPU a start) for a store it never
# talks to (tests/processes.bats), whatever the toolchain's default.
AS_NEEDED := -Wl,--as-needed

# src/AREA/*.c: every area but selftest makes libcorral.a; selftest (the
# install lookup, the tour, the doctor, the repair demo) makes a library of
# its own, linked only by the programs that use it.  tools/tool/*.c (what
# only the programs do: die, usage, the x* helpers, xlock) makes
# libcorral-tool.a, which every program links: libcorral never exits.
SRCS  := $(sort $(wildcard src/*/*.c))
TOOLS := $(sort $(wildcard tools/*.c))
TOOL_SRCS := $(sort $(wildcard tools/tool/*.c))
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/%.o)
SELFTEST_SRCS := $(filter src/selftest/%,$(SRCS))
OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(SELFTEST_SRCS),$(SRCS)))
SELFTEST_OBJS := $(SELFTEST_SRCS:%.c=$(BUILD)/%.o)
# tools/*.sh are programs written in sh (the finders and patchers that
# wrap other tools): build-aux/mkscript builds each into one file, its
# tools/lib/ pieces inlined and the version stamped.
SCRIPTS := $(sort $(wildcard tools/*.sh))
SCRIPT_LIBS := $(sort $(wildcard tools/lib/*))
VERSION := $(shell sed -n 's/^\#define CORRAL_VERSION "\(.*\)"$$/\1/p' \
	src/base/base.h)
PROGS := $(TOOLS:tools/%.c=$(BIN)/%) $(SCRIPTS:tools/%.sh=$(BIN)/%)
# The test helpers: the example finder and patcher (corral fix's default,
# the doctor's and the proving ground's); an install keeps them out of
# bindir, in libexecdir/corral (CORRAL_HELPER_DIR of src/base/base.h).
HELPERS := $(BIN)/corral-marker-find $(BIN)/corral-marker-patch
LIB   := $(BUILD)/libcorral.a
SELFTEST_LIB := $(BUILD)/libcorral-selftest.a
TOOL_LIB := $(BUILD)/libcorral-tool.a
SELFTEST_PROGS := $(addprefix $(BIN)/,corral corral-demo corral-doctor \
	corral-fix corral-mk-path)

.PHONY: all
all: $(PROGS)

# The build's packages (build-aux/packages, group build) are checked once,
# when this stamp is missing (after a clean) or the table changed: a plain
# make with everything present never runs it, and never asks for what
# only the tests need.  'make deps' checks every group at once.
DEPS_OK := build/deps.ok

$(DEPS_OK): build-aux/deps build-aux/packages | build/
	$(Q)build-aux/deps build && touch $@

# The compiler flags are a prerequisite of every object: when they change
# (WERROR, CFLAGS), everything is rebuilt.  The file is only rewritten when
# its content differs, so an unchanged build stays up to date.
$(BUILD)/cflags: FORCE | $(DEPS_OK) $(BUILD)/
	$(Q)printf '%s\n' '$(CC) $(ALL_CFLAGS) $(CJSON_CFLAGS) $(XML_CFLAGS) $(CURL_CFLAGS) $(ALL_LDFLAGS)' \
		> $@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@; }

# Each object's headers come from the compiler (-MMD -MP: BUILD/X.d beside
# X.o), so editing one area's header rebuilds only what includes it.
DEPFLAGS = -MMD -MP

$(BUILD)/src/%.o: src/%.c $(BUILD)/cflags | $(DEPS_OK)
	@$(if $(Q),printf '  CC      %s\n' '$<')
	$(Q)mkdir -p $(@D) && $(CC) $(ALL_CFLAGS) $(WERROR_FLAG) $(DEPFLAGS) \
		$(CJSON_CFLAGS) $(XML_CFLAGS) $(CURL_CFLAGS) -Isrc -c -o $@ $<

$(BUILD)/tools/%.o: tools/%.c $(BUILD)/cflags | $(DEPS_OK)
	@$(if $(Q),printf '  CC      %s\n' '$<')
	$(Q)mkdir -p $(@D) && $(CC) $(ALL_CFLAGS) $(WERROR_FLAG) $(DEPFLAGS) \
		-Isrc -c -o $@ $<

-include $(SRCS:%.c=$(BUILD)/%.d) $(TOOLS:%.c=$(BUILD)/%.d) \
	$(TOOL_SRCS:%.c=$(BUILD)/%.d)

$(LIB): $(OBJS)
	@$(if $(Q),printf '  AR      %s\n' '$@')
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SELFTEST_LIB): $(SELFTEST_OBJS)
	@$(if $(Q),printf '  AR      %s\n' '$@')
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(TOOL_LIB): $(TOOL_OBJS)
	@$(if $(Q),printf '  AR      %s\n' '$@')
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SELFTEST_PROGS): $(SELFTEST_LIB)

$(BIN)/%: $(BUILD)/tools/%.o $(TOOL_LIB) $(LIB) | $(BIN)/
	@$(if $(Q),printf '  LD      %s\n' '$@')
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(filter $(SELFTEST_LIB),$^) \
		$(TOOL_LIB) $(LIB) $(AS_NEEDED) $(CJSON_LIBS) $(XML_LIBS) $(CRYPTO_LIBS) $(CURL_LIBS)

# corral-merge with every fingerprint cut to 1 bit, so that all names
# collide: for the tests of collisions only (make test), never installed.
# Its merge objects are built again with CORRAL_TEST_FP_BITS, which the
# programs of $(BIN) never see.
FP1_BIN  := $(BUILD)/fp1/bin
FP1_OBJS := $(patsubst %.c,$(BUILD)/fp1/%.o,$(filter src/merge/%,$(SRCS)))

$(BUILD)/fp1/src/%.o: src/%.c $(BUILD)/cflags | $(DEPS_OK)
	@$(if $(Q),printf '  CC      %s\n' '$@')
	$(Q)mkdir -p $(@D) && $(CC) $(ALL_CFLAGS) $(WERROR_FLAG) $(DEPFLAGS) \
		-DCORRAL_TEST_FP_BITS=1 $(CJSON_CFLAGS) $(XML_CFLAGS) $(CURL_CFLAGS) -Isrc -c -o $@ $<

-include $(FP1_OBJS:.o=.d)

$(FP1_BIN)/corral-merge: $(BUILD)/tools/corral-merge.o $(FP1_OBJS) \
		$(TOOL_LIB) $(LIB) | $(FP1_BIN)/
	@$(if $(Q),printf '  LD      %s\n' '$@')
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(FP1_OBJS) $(TOOL_LIB) $(LIB) \
		$(AS_NEEDED) $(CJSON_LIBS) $(XML_LIBS) $(CRYPTO_LIBS) $(CURL_LIBS)

$(SCRIPTS:tools/%.sh=$(BIN)/%): $(BIN)/%: tools/%.sh $(SCRIPT_LIBS) \
		build-aux/mkscript src/base/base.h | $(BIN)/
	@$(if $(Q),printf '  GEN     %s\n' '$@')
	$(Q)build-aux/mkscript '$(VERSION)' $< $@

# Directories are order-only: their mtime changes whenever a file inside
# does, which must not make anything out of date.
%/:
	$(Q)mkdir -p $@

# Installs what is missing on Debian (as root), or names the exact command:
# what the build, the demo and the suite need, at once.
.PHONY: deps
deps:
	$(Q)build-aux/deps build demo test browser && mkdir -p build && \
		touch $(DEPS_OK)

# What the suite needs beyond the build (and tests/html.bats a headless
# browser, about 20 s to install).
.PHONY: deps-test
deps-test:
	$(Q)build-aux/deps test browser

# The npm JUnit consumer that tests/report.bats parses reports with,
# installed from the registry into build/npm (never committed).  When it
# cannot be had (no network), those tests skip, except under CI.
NPM_CONSUMERS := test-results-parser@0.4.6
NPM_DIR       := build/npm

.PHONY: npm-consumers
npm-consumers: $(NPM_DIR)/ok

$(NPM_DIR)/ok: | deps-test
	$(Q)mkdir -p $(NPM_DIR) && if timeout 300 npm install --silent \
		--no-audit --no-fund --no-save --prefix $(NPM_DIR) \
		$(NPM_CONSUMERS) >$(NPM_DIR)/log 2>&1; then touch $@; else \
		echo "  NPM     cannot install $(NPM_CONSUMERS) (see $(NPM_DIR)/log)" >&2; fi

# VALGRIND=1 runs every program of the suite under valgrind; a leak or an
# error makes the program exit 99, and so the test fail.
.PHONY: test check
test: all $(FP1_BIN)/corral-merge deps-test $(NPM_DIR)/ok
	+$(Q)CORRAL_TEST_BIN=$(CURDIR)/$(BIN) SUITE_OUT=$(CURDIR)/$(BUILD)/suite \
		SUITE=$(SUITE) \
		CORRAL_TEST_FP1=$(CURDIR)/$(FP1_BIN) \
		CORRAL_TEST_NODE_PATH=$(CURDIR)/$(NPM_DIR)/node_modules \
		$(if $(filter 1,$(VALGRIND)),CORRAL_TEST_WRAPPER='valgrind --error-exitcode=99 -q --leak-check=full --errors-for-leak-kinds=definite') \
		build-aux/run-tests $(TESTS)

# GNU's name for the suite, the one a packager reaches for.
check: test

# Measurements, printed as ratios measured side by side, never timed
# assertions (RELIABILITY 6.1): first the table of bench/table.sh (every
# ratio of a first run, a run per unit, a no-op run, the merge and, with
# BENCH_SUITE=DIR, a real bats suite, and how each grows, and the programs
# a run starts; it runs bench/dispatch.sh, bench/suite.sh and
# bench/execs.sh itself; BENCH_ROUNDS=N rounds,
# BENCH_BIG=1 adds 100,000 units and 1 GB of logs), then the cost of
# timeouts and limits per unit (P11, P2), the makespan of a weighted plan
# against round-robin and the lower bound, checkout, the manifests'
# content digests (bench/digests.sh), the merge and the sandbox.
.PHONY: bench
bench: all deps-test
	$(Q)for b in bench/table.sh $(filter-out bench/table.sh \
		bench/dispatch.sh bench/suite.sh bench/execs.sh bench/repair.sh,\
		$(wildcard bench/*.sh)); do \
		PATH="$(CURDIR)/$(BIN):$$PATH" CORRAL_BIN="$(CURDIR)/$(BIN)" \
		$$b || exit; echo; done

# The proving ground: every MANIFEST row scored through a real corral run
# (REPORT.md in proving-ground/out), the repair round (corral-fix with
# shellcheck's own repairs, REPAIR.md), then the catch and quiet rates over
# generated systems.
.PHONY: proving-ground
proving-ground: all deps-test
	$(Q)CORRAL_BIN=$(CURDIR)/$(BIN) proving-ground/run
	$(Q)CORRAL_BIN=$(CURDIR)/$(BIN) proving-ground/repair
	$(Q)proving-ground/scale

# A real three-node Slurm on 127.0.0.1 (build-aux/slurm-up, from Debian's
# slurm-wlm and munge, which build-aux/deps slurm installs): salloc with
# CORRAL_LAUNCH=srun, a job array of CORRAL_SHARD=auto merged after, an
# array with one task cancelled and run again, a slice on each node, a node
# lost mid-run, the clones on each node's scratch (CORRAL_WORK), and an
# array with --requeue whose task lost its node (build-aux/slurm-test).
.PHONY: slurm-test
slurm-test: all
	$(Q)build-aux/deps slurm
	$(Q)build-aux/slurm-test

.PHONY: repair-round
repair-round: all
	$(Q)CORRAL_BIN=$(CURDIR)/$(BIN) proving-ground/repair

.PHONY: coverage
coverage:
	$(Q)rm -f build/cov/src/*/*.gcda
	$(Q)$(MAKE) --no-print-directory COVERAGE=1 test
	$(Q)build-aux/coverage build/cov/src src

# corral.mk finds its programs at ../../bin from datadir/corral, else at
# the bindir written into it here; the programs find it at
# bindir/../share/corral (so an install whose datadir is not there has
# no 'corral mk-path': nothing about the install is compiled in, and
# 'make install PREFIX=...' rebuilds nothing).  The helpers are found the
# same way, at bindir/../libexec/corral.
MAN1 := $(sort $(wildcard man/*.1))
MAN7 := $(sort $(wildcard man/*.7))

.PHONY: install
install: all
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(datadir)/corral/mk \
		$(DESTDIR)$(man1dir) $(DESTDIR)$(man7dir) \
		$(DESTDIR)$(libexecdir)/corral
	$(INSTALL_PROGRAM) -m 755 $(filter-out $(HELPERS),$(PROGS)) \
		$(DESTDIR)$(bindir)/
	$(INSTALL_PROGRAM) -m 755 $(HELPERS) $(DESTDIR)$(libexecdir)/corral/
	sed 's|^__corral_install_bindir :=$$|& $(bindir)|' corral.mk > \
		$(BUILD)/corral.mk.installed
	$(INSTALL_DATA) $(BUILD)/corral.mk.installed \
		$(DESTDIR)$(datadir)/corral/corral.mk
	$(INSTALL_DATA) mk/common.mk mk/engine.mk $(DESTDIR)$(datadir)/corral/mk/
	$(INSTALL_DATA) $(MAN1) $(DESTDIR)$(man1dir)/
	$(INSTALL_DATA) $(MAN7) $(DESTDIR)$(man7dir)/

.PHONY: uninstall
uninstall:
	rm -f $(PROGS:$(BIN)/%=$(DESTDIR)$(bindir)/%)
	rm -rf $(DESTDIR)$(libexecdir)/corral
	rm -rf $(DESTDIR)$(datadir)/corral
	rm -f $(MAN1:man/%=$(DESTDIR)$(man1dir)/%) \
		$(MAN7:man/%=$(DESTDIR)$(man7dir)/%)

# A release tarball of what git tracks, and the check that it builds,
# installs into a DESTDIR and passes corral doctor from there.
DIST := corral-$(VERSION)

.PHONY: dist distcheck
dist: $(DIST).tar.gz

$(DIST).tar.gz: FORCE
	$(Q)git ls-files -z | grep -zv '^\.ci/' | \
		tar --null -T - --transform 's|^|$(DIST)/|' -czf $@.tmp && \
		mv -f $@.tmp $@ && echo "  DIST    $@"

distcheck: $(DIST).tar.gz
	$(Q)build-aux/distcheck $(DIST)

# The bundled example, from scratch: 12 tests over 4 agents, two failing
# on purpose.  It succeeds when the run is complete and as expected; the
# one line make prints for a run with failures (Error 1), failures the
# demo wants, is left out of its standard error.
.PHONY: demo
demo: all
	$(Q)build-aux/deps demo
	$(Q)$(MAKE) --no-print-directory -C examples/textkit corral-clean
	$(Q){ $(MAKE) --no-print-directory -C examples/textkit -j4 corral-run \
		2>&1 >&3 3>&- | grep --line-buffered -v \
		'^make\[[0-9]*\]: \*\*\* \[.*corral\.mk:[0-9]*: corral-run\] Error 1$$' \
		>&2; } 3>&1; build-aux/check-demo examples/textkit/.corral

# libFuzzer harnesses (fuzz/*.c), linked with the library built again by
# clang under build/fuzz.  Each runs from its seeds in fuzz/corpus/NAME
# (never written) and what it found before in build/fuzz/corpus/NAME; a
# crash stops 'make fuzz' and leaves its input as build/fuzz/crash-*,
# which becomes a seed and a test.
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_CC      := clang
FUZZ_CFLAGS  := -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -g -O1 \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
FUZZ_OBJS    := $(SRCS:%.c=build/fuzz/%.o)
FUZZERS      := $(patsubst fuzz/%.c,build/fuzz/bin/%,$(wildcard fuzz/*.c))

build/fuzz/src/%.o: src/%.c | deps-fuzz
	@$(if $(Q),printf '  CC      %s\n' '$@')
	$(Q)mkdir -p $(@D) && $(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) \
		-fsanitize=fuzzer-no-link $(CJSON_CFLAGS) $(XML_CFLAGS) $(CURL_CFLAGS) -Isrc -c -o $@ $<

-include $(SRCS:%.c=build/fuzz/%.d)

build/fuzz/libcorral.a: $(FUZZ_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

build/fuzz/bin/%: fuzz/%.c fuzz/fuzz.h $(wildcard src/*.h src/*/*.h) \
		build/fuzz/libcorral.a | build/fuzz/bin/
	@$(if $(Q),printf '  LD      %s\n' '$@')
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Isrc -o $@ $< \
		build/fuzz/libcorral.a $(CJSON_LIBS) $(XML_LIBS) $(CRYPTO_LIBS) $(CURL_LIBS)

.PHONY: fuzz deps-fuzz
fuzz: $(FUZZERS)
	$(Q)build-aux/fuzz $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS)) $(FUZZERS)

deps-fuzz:
	$(Q)build-aux/deps fuzz

.PHONY: clean
clean:
	rm -rf bin build

.PHONY: FORCE
FORCE:
