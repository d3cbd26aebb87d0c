# imex — top-level build.  `make` builds every part, `make check` runs every
# test tier, `make demo` runs the demonstration.  See README.md.

# KVER (kernel version, default: the newest Debian kernel with headers) and
# KDIR (its build tree) may be given on the command line; the sub-makes work
# them out otherwise, after tools/install-deps.sh has run.
PREFIX  ?= /usr
DESTDIR ?=

export PREFIX DESTDIR

SUBDIRS_USER := libimexctl tools imexd tests

.PHONY: all deps kmod user check check-unit check-vm demo install uninstall clean

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
	$(MAKE) check-vm

check-unit:
	$(MAKE) -C tests check-unit

check-vm: kmod user
	$(MAKE) -C tests check-vm

demo: deps
	$(MAKE) all
	tools/demo.sh

install: all
	$(MAKE) -C kmod install
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d install || exit 1; done

uninstall:
	$(MAKE) -C kmod uninstall
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d uninstall || exit 1; done

clean:
	$(MAKE) -C kmod clean
	@for d in $(SUBDIRS_USER); do $(MAKE) -C $$d clean; done
	rm -rf build
