# imex — top-level build.  `make` builds every part, `make check` runs every
# test tier, `make demo` runs the demonstration.  See README.md.

# KVER (kernel version, default: the newest Debian kernel with headers) and
# KDIR (its build tree) may be given on the command line; the sub-makes work
# them out otherwise, after tools/install-deps.sh has run.
PREFIX  ?= /usr
DESTDIR ?=

export PREFIX DESTDIR

SUBDIRS_USER := libimexctl tools imexd tests

.PHONY: all deps kmod user check check-unit check-ops check-vm bench demo docs install uninstall \
	dkms-install dkms-uninstall clean lint fuzz check-debug check-debug-cluster

all: kmod user

deps:
	@tools/install-deps.sh

kmod:
	$(MAKE) -C kmod

user:
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d all || exit 1; done

check: deps
	$(MAKE) all
	$(MAKE) check-unit
	$(MAKE) lint LINT_SPARSE=no
	$(MAKE) check-ops
	$(MAKE) check-vm
	$(MAKE) -C tests check-bench

check-unit:
	$(MAKE) -C tests check-unit

# checkpatch, cppcheck, clang-tidy (tools/lint.sh) and sparse through kbuild.
# `make check` runs all but sparse (LINT_SPARSE=no: check-vm builds the
# module with sparse).  clang-tidy re-checks only the files whose
# preprocessed text changed (its cache is build/lint/tidy/).
LINT_SPARSE ?= yes
LINT_CHECKS ?= checkpatch cppcheck clang-tidy
lint:
	tools/lint.sh $(LINT_CHECKS)
	$(if $(filter yes,$(LINT_SPARSE)),$(MAKE) -C tests check-kbuild)

# Every libFuzzer target for FUZZ_SECONDS (default 600) each; new inputs are
# kept in build/fuzz/corpus, crashes in build/fuzz/crashes.
fuzz:
	$(MAKE) -C tests/fuzz fuzz

# Install, DKMS, man pages, diagrams, and every error message documented.
check-ops: kmod user
	$(MAKE) -C tests check-ops

check-vm: kmod user
	$(MAKE) -C tests check-vm

# The VM suite (check-debug: one node, plus the kernel-interface fuzzer;
# check-debug-cluster: the multi-VM tests) on a debug kernel built from
# linux-source-6.1 on first use (tools/debug-kernel.sh, ~10 min on 2 cores).
check-debug check-debug-cluster: user
	$(MAKE) -C tests $@

# Benchmarks: ratios against baselines measured in the same run (bench/run.sh).
bench: kmod user
	$(MAKE) -C bench all
	bench/run.sh

demo: deps
	$(MAKE) all
	tools/demo.sh

install: all
	$(MAKE) -C kmod install
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d install || exit 1; done

uninstall:
	$(MAKE) -C kmod uninstall
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d uninstall || exit 1; done

# imex.ko under DKMS: rebuilt for every kernel installed later.
dkms-install:
	packaging/dkms.sh install

dkms-uninstall:
	packaging/dkms.sh uninstall

# The diagrams' SVGs are checked in; regenerate those older than their source.
DIAGRAMS := $(patsubst %.dot,%.svg,$(wildcard Documentation/diagrams/*.dot))

docs: $(DIAGRAMS)

Documentation/diagrams/%.svg: Documentation/diagrams/%.dot
	dot -Tsvg $< -o $@

clean:
	$(MAKE) -C kmod clean
	$(MAKE) -C bench clean
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d clean; done
	rm -rf build
