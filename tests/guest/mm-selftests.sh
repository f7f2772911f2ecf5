#!/bin/bash
# The kernel's own mm selftests that exercise page migration, compaction and
# THP/hugetlb allocation, run in the test VM on the patched kernel with
# regionpm's allocation bias on: a regression check, since the bias reorders
# the buddy free lists and bypasses the per-cpu lists for high regions, which
# is what compaction, THP allocation and migration targets lean on.
#
#   tests/guest/mm-selftests.sh      inside the VM, as root (TAP on stdout)
#
#   REGIONPM_MM_BIAS=0               leave the bias off (for comparison runs)
#   REGIONPM_MM_TESTS="a b"          run only these (names as in the TAP
#                                    lines); two more are opt-in, see below:
#                                    split_huge_page_test, mem-on-off-test
#   REGIONPM_MM_TIMEOUT=300          seconds per test
#
# The binaries come from scripts/build-mm-selftests.sh (build/mm-selftests).
# A test is skipped, with the reason, only when the kernel or the VM lacks
# what it needs: madvise(2) (CONFIG_ADVISE_SYSCALLS), two NUMA nodes with
# memory and three CPUs (migration: a VM with --numa 2 --cpus 3), debugfs,
# a scratch disk for swap.  A subtest that skips itself for any other
# reason, or a kernel warning while a test runs, is a failure.  Each test
# is followed by a comment with its vmstat deltas (pages migrated,
# compaction stalls, THPs allocated): what it actually made the kernel do.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$here/../../build/mm-selftests" 2>/dev/null && pwd) || bin=
. "$here/../lib/tap.sh"

bias_param=/sys/module/regionpm/parameters/bias
want_bias=${REGIONPM_MM_BIAS:-1}
default_tests="compaction_test migration transhuge-stress khugepaged-anon
	khugepaged-shmem uffd-move mkdirty hugepage-mremap hugetlb-madvise"
read -r -d "" -a tests <<< "${REGIONPM_MM_TESTS:-$default_tests}"
per_test_timeout=${REGIONPM_MM_TIMEOUT:-300}
log=$(mktemp "${TMPDIR:-/tmp}/mm-selftests.XXXXXX")
swapfile='' fill_file=''
cleanup() {
	rm -f "$log"
	[ -n "$swapfile" ] && { swapoff "$swapfile"; rm -f "$swapfile"; } 2>/dev/null
	[ -n "$fill_file" ] && rm -f "$fill_file"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	tap_fail "running as root" "the mm selftests change sysctls and sysfs"
	tap_done
	exit 1
fi
if [ -z "$bin" ] || [ ! -x "$bin/compaction_test" ]; then
	tap_fail "mm selftests are built" "no binaries in build/mm-selftests: run scripts/build-mm-selftests.sh"
	tap_done
	exit 1
fi

# The point of the exercise: without the parameter there is no bias to test.
if [ ! -e "$bias_param" ]; then
	tap_fail "regionpm allocation bias set to $want_bias" "$bias_param is missing (kernel without regionpm?)"
	tap_done
	exit 1
fi
echo "$want_bias" > "$bias_param" 2>/dev/null
case "$(cat "$bias_param")" in
Y|1) got_bias=1 ;;
*) got_bias=0 ;;
esac
if [ "$got_bias" = "$want_bias" ]; then
	tap_ok "regionpm allocation bias set to $want_bias"
else
	tap_fail "regionpm allocation bias set to $want_bias" "$bias_param reads $(cat "$bias_param")"
	tap_done
	exit 1
fi

nodes_with_memory=0
for n in /sys/devices/system/node/node[0-9]*; do
	[ -r "$n/meminfo" ] || continue
	kb=$(awk '/MemTotal:/ { print $4 }' "$n/meminfo")
	[ "${kb:-0}" -gt 0 ] && nodes_with_memory=$((nodes_with_memory + 1))
done
echo "# $(uname -r), $(nproc) CPUs, $nodes_with_memory NUMA node(s) with memory," \
	"$(awk '/MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)," \
	"THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none)"

# ---- what the environment offers ----
# Each have_* check leaves the reason in $why_not, or leaves it empty.  They
# run in this shell (not in $(...)) because have_swap records its swap file.
why_not=

have_madvise() {
	# tinyconfig turns off CONFIG_ADVISE_SYSCALLS: madvise() is ENOSYS then.
	python3 - <<'PY' 2>/dev/null || why_not="madvise(2) is not implemented (needs CONFIG_ADVISE_SYSCALLS=y)"
import errno, mmap, sys
m = mmap.mmap(-1, 4096)
try:
    m.madvise(mmap.MADV_NORMAL)
except OSError as e:
    sys.exit(1 if e.errno == errno.ENOSYS else 0)
PY
}
have_numa() {
	[ "$nodes_with_memory" -ge 2 ] && [ "$(nproc)" -ge 3 ] ||
		why_not="needs 2 NUMA nodes with memory and 3 CPUs, has $nodes_with_memory and $(nproc) (run-vm --numa 2 --cpus 3)"
}
have_thp() {
	[ -r /sys/kernel/mm/transparent_hugepage/enabled ] || why_not="no transparent hugepages"
}
have_hugetlb() {
	[ -w /proc/sys/vm/nr_hugepages ] || why_not="no hugetlb pages (/proc/sys/vm/nr_hugepages)"
}
have_debugfs() {
	if [ ! -e /sys/kernel/debug/split_huge_pages ]; then
		mountpoint -q /sys/kernel/debug ||
			mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	fi
	[ -e /sys/kernel/debug/split_huge_pages ] ||
		why_not="needs debugfs split_huge_pages (CONFIG_DEBUG_FS=y)"
}
have_swap() {
	# khugepaged's swap-in tests page out with MADV_PAGEOUT.
	[ -n "$swapfile" ] && return
	if ! mountpoint -q /mnt/scratch; then
		why_not="no scratch disk for a swap file"
		return
	fi
	swapfile=/mnt/scratch/mm-selftests.swap
	if ! { dd if=/dev/zero of="$swapfile" bs=1M count=128 status=none &&
		chmod 600 "$swapfile" && mkswap "$swapfile" >/dev/null &&
		swapon "$swapfile"; } 2>/dev/null; then
		rm -f "$swapfile"
		swapfile=
		why_not="cannot set up swap on /mnt/scratch"
	fi
}
have_memory_blocks() {
	ls -d /sys/devices/system/memory/memory[0-9]* >/dev/null 2>&1 ||
		why_not="no memory blocks in sysfs (memory hotplug)"
}
# Page cache in a good part of memory, as on a real machine: written once to
# the scratch disk and read back, so that THP allocations have to compact
# or reclaim around it.
fill_page_cache() {
	mountpoint -q /mnt/scratch || return 0
	local mb
	mb=$(awk '/MemTotal:/ { print int($2 / 1024 * 0.4) }' /proc/meminfo)
	if [ -z "$fill_file" ]; then
		fill_file=/mnt/scratch/mm-selftests.fill
		dd if=/dev/zero of="$fill_file" bs=1M count="$mb" conv=fsync status=none ||
			{ rm -f "$fill_file"; fill_file=; return 0; }
	fi
	cat "$fill_file" > /dev/null
}

hugepages() { # N: size the hugetlb pool (0 gives it back to the buddy allocator)
	local got n f
	[ "$1" -gt 0 ] && echo 1 > /proc/sys/vm/compact_memory
	echo "$1" > /proc/sys/vm/nr_hugepages
	got=$(cat /proc/sys/vm/nr_hugepages)
	[ "$got" -ge "$1" ] || why_fail="could reserve only $got of $1 hugetlb pages"
	# hugetlb migration needs a free huge page on the target node: the
	# pool is interleaved, but a node short of free 2 MiB blocks ends up
	# with fewer, and move_pages() then fails with "Didn't migrate".
	for f in /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages; do
		[ -e "$f" ] && [ "$1" -gt 0 ] || continue
		n=$(cat "$f")
		[ "$n" -ge 2 ] && continue
		echo 2 > "$f"
		n=$(cat "$f")
		[ "$n" -ge 2 ] || why_fail="a node got only $n hugetlb pages ($f)"
	done
}

# ---- running one test ----

vmstat_keys="pgmigrate_success pgmigrate_fail thp_migration_success compact_stall compact_fail compact_success compact_migrate_scanned compact_free_scanned compact_isolated thp_fault_alloc thp_collapse_alloc thp_collapse_alloc_failed thp_split_page"
splat_re='(WARNING:|BUG:|Oops|KASAN|UBSAN|possible circular locking|sleeping function called|Bad page)'

# run_test NAME ALLOWED-SKIP-REGEX REQUIREMENT... -- COMMAND [ARG...]
# A requirement is a have_* function or "hugepages N".  "retry REGEX": if
# the test fails, and every output line that reports a failure matches
# REGEX (a subtest known to fail now and then with or without the bias),
# it runs again, up to three runs in all; the last run decides and every
# failed run is reported.
run_test() {
	local name=$1 allow=$2 retry_re=
	shift 2
	why_not= why_fail=
	while [ "$1" != -- ]; do
		case "$1" in
		hugepages) hugepages "$2"; shift ;;
		retry) retry_re=$2; shift ;;
		*) "$1" ;;
		esac
		shift
		[ -n "$why_not$why_fail" ] && break
	done
	# A missing feature skips; huge pages the kernel cannot assemble
	# (fragmentation, which the bias could cause) are a failure.
	if [ -n "$why_fail" ]; then
		tap_fail "$name" "$why_fail"
		return
	fi
	if [ -n "$why_not" ]; then
		tap_skip "$name" "$why_not"
		return
	fi
	while [ "$1" != -- ]; do shift; done
	shift

	local attempt problems failed first=
	for attempt in 1 2 3; do
		run_once "$@"
		[ -z "$problems" ] && break
		[ "$attempt" -lt 3 ] && [ -n "$retry_re" ] && [ -z "$splat" ] && [ -n "$failed" ] &&
			! grep -qvE -- "$retry_re" <<< "$failed" || break
		first+="${first:+; }run $attempt: $(tr '\n' ' ' <<< "$failed" | sed 's/ *$//')"
		echo "# $name: failed only in a subtest known to fail now and then with or without the bias; once more:"
		sed 's/^/#   /' <<< "$failed"
	done

	if [ -z "$problems" ]; then
		if [ -n "$first" ]; then
			tap_ok "$name (passed in run $attempt; failed before in the known subtest only: $first)"
		else
			tap_ok "$name"
		fi
	else
		tap_fail "$name" "$problems--- last lines of output:
$(tail -n 40 "$log")"
	fi
}

# Free whole pageblocks (orders 9 and 10 of /proc/buddyinfo, x86's 2 MiB
# pageblocks; per node too, as khugepaged allocates on one), and pageblocks
# typed unmovable or reclaimable (/proc/pagetypeinfo), over all zones: what
# a THP allocation can find without compaction, and where compaction
# cannot take pages from.
free_pageblocks() {
	awk '{ b = $14 + 2 * $15; n += b; node[$2 + 0] += b }
	     END { s = n + 0; if (length(node) > 1) { s = s " ("; sep = "";
		   for (i = 0; i in node; i++) { s = s sep "node " i ": " node[i]; sep = ", " }
		   s = s ")" } print s }' /proc/buddyinfo
}
kernel_pageblocks() {
	awk '/^Number of blocks type/ { on = 1; next }
	     on && /^Node/ && $5 != "type" { n += $5 + $7 }
	     END { print n + 0 }' /proc/pagetypeinfo 2>/dev/null
}

# One run of the test command: sets rc, problems, failed and splat.
run_once() {
	local dmesg_before start end secs vmstat_before blocks_before
	dmesg_before=$(dmesg | wc -l)
	vmstat_before=$(cat /proc/vmstat)
	blocks_before="$(free_pageblocks) free, $(kernel_pageblocks) unmovable or reclaimable"
	start=$(date +%s.%N)
	(cd "$bin" && timeout -k 10 "$per_test_timeout" "$@") > "$log" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	echo "# $name: $* -> exit $rc in ${secs}s"
	# What the test made the kernel do.
	awk -v keys="$vmstat_keys" 'BEGIN { n = split(keys, k, " ") }
		NR == FNR { before[$1] = $2; next }
		{ after[$1] = $2 }
		END { for (i = 1; i <= n; i++) s = s sprintf(" %s +%d", k[i], after[k[i]] - before[k[i]]); print "#  " s }' \
		<(echo "$vmstat_before") /proc/vmstat
	echo "#   pageblocks before: $blocks_before; after: $(free_pageblocks) free, $(kernel_pageblocks) unmovable or reclaimable"

	problems=
	[ "$rc" = 124 ] && problems+="timed out after ${per_test_timeout}s"$'\n'
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && problems+="exit status $rc"$'\n'
	# kselftest TAP ("ok 3 ... # SKIP why"), the harness ("# SKIP why"),
	# uffd-unit-tests ("skip=N"): a subtest that skipped itself.
	local skips
	skips=$(grep -E '^ok [0-9]+ .*# SKIP|^#[[:space:]]+SKIP[[:space:]]|Userfaults unit tests: .*skip=[1-9]' "$log" |
		{ if [ -n "$allow" ]; then grep -Ev -- "$allow"; else cat; fi } || true)
	[ -n "$skips" ] && problems+="subtests skipped unexpectedly:"$'\n'"$skips"$'\n'
	splat=$(dmesg | tail -n +"$((dmesg_before + 1))" | grep -E -A12 "$splat_re" | head -n 40)
	[ -n "$splat" ] && problems+="kernel log:"$'\n'"$splat"$'\n'

	# The failing subtest can lie before the last lines (khugepaged prints
	# one line per subtest, "Fail" in colour), and the console keeps only
	# a tail: name every line that says it failed.
	failed=
	if [ -n "$problems" ]; then
		failed=$(grep -n -a -E -i 'fail|not ok|error' "$log" | sed 's/\x1b\[[0-9;]*m//g' | head -n 20)
		[ -n "$failed" ] && problems+="lines of output that report a failure:"$'\n'"$failed"$'\n'
	fi
	return 0
}

selected() { [[ " ${tests[*]} " == *" $1 "* ]]; }

# ---- the tests ----
# The hugetlb pool is empty except for the tests that map hugetlb pages, so
# that the others see all of memory in the buddy allocator.  Each test's
# line of vmstat deltas shows what it made the kernel do.

fill_page_cache

# Locks ~80 % of free memory in 100 MiB pieces, frees every other piece,
# then asks for hugetlb pages for half of memory and wants at least a third:
# compaction may have to move mlocked pages (compact_unevictable_allowed).
# In a fresh VM the freed pieces are mostly contiguous already, so it often
# gets them without compacting (see its vmstat line).
selected compaction_test &&
	run_test compaction_test "" have_hugetlb hugepages 0 -- ./compaction_test

# Allocates THPs over all of RAM's size, splitting each one (keeps one
# subpage): THP allocation under fragmentation, i.e. compaction.
selected transhuge-stress &&
	run_test transhuge-stress "" have_madvise have_thp hugepages 0 -- ./transhuge-stress -d 8

# move_pages() of anon, THP and hugetlb pages back and forth between two
# nodes while other threads or processes touch them (migration entries).
# Built with RUNTIME=5 s per case instead of 20 (scripts/build-mm-selftests.sh).
selected migration &&
	run_test migration "" have_numa have_madvise have_thp hugepages 8 -- ./migration

# khugepaged and MADV_COLLAPSE collapse into freshly allocated THPs.
# The khugepaged (background) context for shmem fails on this 6.12 with or
# without the bias, so shmem runs in the madvise context only.
#
# collapse_compound_extreme ("Collapse PTE table full of different
# compound pages") needs a new THP right after the test has left 512
# THPs with one page each in use, and fails now and then with or without
# the bias: in this suite's guest (2 nodes, 3 CPUs) in the khugepaged
# context once in 4 runs with regionpm.bias=1 and once in 6 with
# regionpm.bias=0, in the madvise context once in a CI clone with the
# bias (the THP allocation failed: thp_collapse_alloc_failed +1, 109
# compaction stalls, no success).  With the bias the test needed
# compaction in 5 of 6 runs (no success in 3), without it in 1 of 6: the
# bias makes THPs harder to get here (docs/benchmarks.md), which is not
# solved.  Only that subtest, failing alone, is run again (up to three
# runs: with the bias and the front keeper off it failed twice in a row
# once in six).
selected khugepaged-anon &&
	run_test khugepaged-anon "" have_madvise have_thp have_swap hugepages 0 \
		retry '^[0-9]+:Collapse PTE table full of different compound pages\.\.\.+ Fail(: Bad return value)?$' \
		-- ./khugepaged all:anon
selected khugepaged-shmem &&
	run_test khugepaged-shmem "" have_madvise have_thp hugepages 0 -- ./khugepaged madvise:shmem

# UFFDIO_MOVE of pages and whole PMD-mapped THPs between VMAs, and of THPs
# that have to be split on the way.
selected uffd-move &&
	run_test uffd-move "" have_madvise have_thp hugepages 0 -- ./uffd-unit-tests -f move

# Migration (mbind MPOL_MF_MOVE) of a page and of a THP in a read-only VMA
# must not make them writable.
selected mkdirty &&
	run_test mkdirty "" have_madvise have_thp hugepages 0 -- ./mkdirty

# hugetlb pages: mremap of a hugetlb mapping (with userfaultfd), and pool
# accounting through MADV_DONTNEED / MADV_REMOVE / fallocate.
selected hugepage-mremap &&
	run_test hugepage-mremap "" have_hugetlb hugepages 32 -- ./hugepage-mremap
selected hugetlb-madvise &&
	run_test hugetlb-madvise "" have_madvise have_hugetlb hugepages 32 -- ./hugetlb-madvise

# Splits anon, PTE-mapped and file-backed THPs through debugfs.  Its
# pagecache-folio half needs a file system with large folios (XFS) and
# otherwise skips, after ~15 s each of one-byte write()s: opt-in only.
selected split_huge_page_test &&
	run_test split_huge_page_test "Pagecache folio split skipped" \
		have_madvise have_thp have_debugfs hugepages 0 -- ./split_huge_page_test

# Opt-in: offlines a quarter of the memory blocks (every page in them
# migrated away), then onlines them again.  On 6.12 offlining loops until
# killed when a block holds a full slab page: its slab_list.prev is
# LIST_POISON2 (0x...122), which overlays page->mapping and reads as
# PAGE_MAPPING_MOVABLE, so has_unmovable_pages() and scan_movable_pages()
# take it for movable and migration retries it forever ("failed to isolate
# pfn ... page_type: f5(slab)").  Where slab pages land decides whether it
# passes, with or without the bias.  Its error-injection half needs a
# module and debugfs; the script itself says it skips that.
selected mem-on-off-test &&
	run_test mem-on-off-test "" have_memory_blocks hugepages 0 -- ./mem-on-off-test.sh -r 25

hugepages 0
tap_done
