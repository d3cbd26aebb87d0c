# MODULE_ALIAS_GENL_FAMILY (issue 13 item 10): with imex.ko installed where
# modprobe finds it (the VM's module dir, indexed by tests/vm/run.sh) and
# not loaded, resolving the "imex" family loads it.
. tests/vm/lib.sh
. tests/kmod/common.sh

imex_unload
! grep -q '^imex ' /proc/modules || fail "imex is still loaded"
out=$($NL node-get 2>&1) ||
	fail "resolving the family did not load imex: $out (aliases of imex.ko: $(modinfo -F alias imex | tr '\n' ' '))"
grep -q '^imex ' /proc/modules || fail "the family answered but imex is not loaded"
echo "$out"
t_ok "resolving the imex family autoloads imex.ko"
