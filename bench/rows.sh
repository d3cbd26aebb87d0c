# Sourced by the bench scripts (sh and bash): row selection for --only.
# BENCH_ONLY: the rows asked for, comma-separated (empty or "all": every row).
# want ROW...: any of these rows was asked for.
want() {
	case ${BENCH_ONLY:-all} in all) return 0 ;; esac
	for w in "$@"; do
		case ",$BENCH_ONLY," in *",$w,"*) return 0 ;; esac
	done
	return 1
}
