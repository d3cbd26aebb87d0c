# imex — top-level build.  `make` builds every part, `make check` runs every
# test tier, `make demo` runs the demonstration.  See README.md.

# KVER (kernel version, default: the newest Debian kernel with headers) and
# KDIR (its build tree) may be given on the command line; the sub-makes work
# them out otherwise, after tools/install-deps.sh has run.
PREFIX  ?= /usr
DESTDIR ?=

export PREFIX DESTDIR

# common (the helpers several parts share) first: the others link it.
SUBDIRS_USER := common libimexctl tools imexd contrib/slurm tests

.PHONY: all deps kmod user check check-unit check-ops check-vm check-kernel2 bench demo docs install uninstall \
	dkms-install dkms-uninstall clean lint fuzz check-debug check-debug-cluster check-rack

all: kmod user

deps:
	@tools/install-deps.sh

kmod:
	$(MAKE) -C kmod

user:
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d all || exit 1; done

# What CI runs (.ci/run): the host tiers, the VM suite on Debian 12's 6.1
# (with the cluster tier) and on 6.12 (single VM), Debian's own Slurm with the SPANK plugin on 3 VMs (6.1;
# check-slurm), the benchmarks in quick mode, and the single-node VM suite
# with the kernel-interface fuzzer on the debug kernel (built on first use).
# The benchmarks go before the 6.12 pass, which leaves imex.ko built for
# 6.12; check-debug rebuilds it for the debug kernel last.  A debug kernel
# not yet cached starts building at once, under nice 19, so that it mostly
# uses the CPU the other tiers leave idle; check-debug waits for it (the
# build holds a lock) and reports its errors.
check: deps
	@mkdir -p build; (tools/debug-kernel.sh > build/debug-kernel.log 2>&1 &)
	$(MAKE) all
	$(MAKE) check-unit
	$(MAKE) lint LINT_SPARSE=no
	$(MAKE) check-ops
	$(MAKE) check-vm
	$(MAKE) -C tests check-slurm
	$(MAKE) -C tests check-bench
	$(MAKE) check-kernel2
	$(MAKE) check-debug
	@grep -h 'debug-kernel.sh: built' build/debug-kernel.log 2>/dev/null || true

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

# The VM suite (single node, then the cluster tests) on one kernel: KVER,
# default the newest installed 6.1.  check-kernel2 runs the single-VM part
# on the newest installed KERNEL2 (6.12, from tools/install-deps.sh).
KERNEL2 ?= 6.12
check-vm: kmod user
	$(MAKE) -C tests check-vm

check-kernel2: user
	v=$$(tools/kver.sh $(KERNEL2)) && $(MAKE) check-vm KVER=$$v CLUSTER=no

# The rack tier: 18 VMs on one switch (tests/cluster/t-rack.sh), outside
# `make check` for its length; .ci/run runs it after `make check`.
check-rack: kmod user
	$(MAKE) -C bench all
	$(MAKE) -C tests check-rack

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
