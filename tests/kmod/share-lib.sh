# Shared by the export/import tests (tests/kmod/t-share*.sh): the tool, the
# node UUID the tests give this node, a foreign one, and the kernel's live
# export/import counts.
SHARE=tools/imex-share/imex-share
OUT=$IMEX_VM_OUT
NODEU=aaaaaaaa-0000-0000-0000-0000000000e1
FOREIGN=bbbbbbbb-0000-0000-0000-0000000000f1

counts() { $NL node-get | sed -n 's/.* exports=\([0-9]*\) imports=\([0-9]*\).*/\1 \2/p'; }
expect_counts() { # EXPORTS IMPORTS: wait (20 s at most) for those counts
	wait_for 20 sh -c "[ \"\$($NL node-get | sed -n 's/.* exports=\([0-9]*\) imports=\([0-9]*\).*/\1 \2/p')\" = '$1 $2' ]" ||
		fail "counts $(counts), expected $1 $2"
}
