#!/bin/bash
# Build the kernel's own mm selftests that exercise migration, compaction and
# THP/hugetlb allocation (tests/guest/mm-selftests.sh runs them in the VM on
# the patched kernel, with regionpm's allocation bias on).
#
#   scripts/build-mm-selftests.sh [OUTDIR]     (default: build/mm-selftests)
#
# Nothing is written into the cached kernel source: the uapi headers are
# installed with "make O=OUTDIR/.work/kbuild headers_install" and the few
# selftest sources are copied to OUTDIR/.work/src (laid out like the kernel
# tree, so the tests' relative includes such as ../../../../mm/gup_test.h
# resolve), then compiled with plain gcc and the flags of the selftests'
# own Makefile and lib.mk.  The upstream Makefile is not used because its
# check_config.sh writes local_config.{h,mk} into the source directory.
#
# Quick when nothing changed: a stamp records the kernel tree hash, this
# script and the compiler; each binary is only relinked when one of its
# copied sources is newer.  Needs libnuma-dev (migration).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(realpath -m "${1:-$REGIONPM_TOP/build/mm-selftests}")
work="$out/.work"
CC=${CC:-gcc}

# test name -> extra sources and libraries (every test also gets vm_util.c
# and thp_settings.c and -lrt -lpthread -lm, as in the upstream Makefile).
declare -A extra=(
	[compaction_test]=""
	[migration]="-lnuma"
	[transhuge-stress]=""
	[khugepaged]=""
	[uffd-unit-tests]="uffd-common.c"
	[mkdirty]=""
	[hugepage-mremap]=""
	[hugetlb-madvise]=""
	[split_huge_page_test]=""
)
tests=("${!extra[@]}")

[ -f "$REGIONPM_SRC/.regionpm-tree" ] ||
	die "no prepared kernel source at $REGIONPM_SRC (run 'make kernel-src')"

# How the binaries are built (this script, the compiler); with the kernel
# tree's hash, whether anything needs doing at all.
build_id=$( {
	sha256sum < "$0"
	"$CC" --version | head -n1
} | sha256sum | cut -d' ' -f1)
stamp_want=$(printf '%s %s\n' "$build_id" "$(cat "$REGIONPM_SRC/.regionpm-tree")")

all_built() {
	local t
	for t in "${tests[@]}"; do [ -x "$out/$t" ] || return 1; done
}
if [ "$(cat "$work/stamp" 2>/dev/null)" = "$stamp_want" ] && all_built; then
	exit 0
fi

[ -f /usr/include/numa.h ] || die "numa.h is missing: install libnuma-dev (make deps)"
mkdir -p "$out" "$work"
rm -f "$work/stamp"
# Other flags or another compiler: relink everything.
if [ "$(cat "$work/build-id" 2>/dev/null)" != "$build_id" ]; then
	for t in "${tests[@]}"; do rm -f "$out/$t"; done
	echo "$build_id" > "$work/build-id"
fi
src="$work/src"
sel="$src/tools/testing/selftests"
khdr="$work/khdr"

# Copy only files whose content changed, so that mtimes (and hence the
# relink decisions below) stay put across kernel-only changes.
sync_file() { # SRC DST
	if ! cmp -s "$1" "$2"; then
		mkdir -p "$(dirname "$2")"
		cp "$1" "$2"
	fi
}

# Read the shared kernel source under the kernel build lock: kernel-build.sh
# may reset the tree (git checkout + patch) while holding it.
mkdir -p "$REGIONPM_CACHE"
exec 9>"$REGIONPM_CACHE/.kernel-lock"
flock 9
log "installing uapi headers and copying mm selftest sources to $work"
make -s -C "$REGIONPM_SRC" O="$work/kbuild" ARCH=x86_64 \
	INSTALL_HDR_PATH="$work/khdr-stage" headers_install
(cd "$work/khdr-stage" && find . -type f -name '*.h') |
while read -r f; do
	sync_file "$work/khdr-stage/$f" "$khdr/$f"
done
for f in "$REGIONPM_SRC"/tools/testing/selftests/mm/*.[ch] \
	"$REGIONPM_SRC"/tools/testing/selftests/kselftest.h \
	"$REGIONPM_SRC"/tools/testing/selftests/kselftest_harness.h \
	"$REGIONPM_SRC"/mm/gup_test.h \
	"$REGIONPM_SRC"/tools/testing/selftests/memory-hotplug/mem-on-off-test.sh; do
	sync_file "$f" "$src/${f#"$REGIONPM_SRC"/}"
done
(cd "$REGIONPM_SRC/tools/include/uapi" && find . -type f -name '*.h') |
while read -r f; do
	sync_file "$REGIONPM_SRC/tools/include/uapi/$f" "$src/tools/include/uapi/$f"
done
exec 9>&-

# check_config.sh's result, without liburing (no test here uses it).
echo "// No liburing support found" > "$work/local_config.h.new"
sync_file "$work/local_config.h.new" "$sel/mm/local_config.h"
rm -f "$work/local_config.h.new"

# migration.c runs each of its six tests for a fixed 20 s; make the length
# a compile-time option so the guest run fits its time budget.
sed 's/^#define RUNTIME[[:space:]]*(20)$/#ifndef RUNTIME\n#define RUNTIME (20)\n#endif/' \
	"$sel/mm/migration.c" > "$work/migration.c.new"
grep -q '^#ifndef RUNTIME' "$work/migration.c.new" ||
	die "migration.c: RUNTIME definition not found (selftest changed?)"
sync_file "$work/migration.c.new" "$sel/mm/migration-bounded.c"
rm -f "$work/migration.c.new"

cflags=(-Wall -O2 -I "$src" -D_GNU_SOURCE= -U_FORTIFY_SOURCE
	-isystem "$khdr/include" -isystem "$src/tools/include/uapi")
declare -A defs=([migration]="-DRUNTIME=5")
# Debian's 6.12.118 khugepaged.c returns KSFT_SKIP without including
# kselftest.h (a stable backport that missed the include): it does not build
# with the upstream Makefile either.
if ! grep -q 'kselftest.h' "$sel/mm/khugepaged.c"; then
	defs[khugepaged]="-DKSFT_SKIP=4"
fi

cd "$sel/mm"
for t in "${tests[@]}"; do
	main=$t.c
	[ "$t" = migration ] && main=migration-bounded.c
	srcs=("$main" vm_util.c thp_settings.c)
	libs=(-lrt -lpthread -lm)
	for x in ${extra[$t]}; do
		case "$x" in -l*) libs+=("$x") ;; *) srcs+=("$x") ;; esac
	done
	if [ -x "$out/$t" ] && [ -z "$(find "$sel" "$khdr" -newer "$out/$t" -type f -print -quit)" ]; then
		continue
	fi
	log "building mm selftest $t"
	# shellcheck disable=SC2086 # defs holds zero or more flags
	"$CC" "${cflags[@]}" ${defs[$t]:-} "${srcs[@]}" "${libs[@]}" -o "$out/$t.tmp"
	mv "$out/$t.tmp" "$out/$t"
done

# The memory hotplug selftest (offlining a block migrates everything out of
# it: the range evacuation regionpm builds on) is a shell script.
sync_file "$sel/memory-hotplug/mem-on-off-test.sh" "$out/mem-on-off-test.sh"
chmod +x "$out/mem-on-off-test.sh"

echo "$stamp_want" > "$work/stamp"
