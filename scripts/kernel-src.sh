#!/bin/bash
# Prepare the patched Linux 6.12 source tree in the cache.
#
#   kernel-src.sh           make the tree match kernel/ (waits for builds)
#   kernel-src.sh --check   exit 0 if it already does, 1 if not; no changes
#   kernel-src.sh --stock   unpack the unpatched tree for KERNEL_VARIANT=stock
#
# The pristine tree from Debian's linux-source-6.12 is unpacked once and
# committed to a private git repository, so that going back to pristine is a
# cheap "git checkout -f && git clean": only files we touched are rewritten
# (with a new mtime, so kbuild recompiles exactly them).  On top of pristine
# we copy the files under kernel/ that mirror kernel paths and apply the
# quilt-style series kernel/patches/series.  The tree is only reset when the
# hash of those inputs changes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src_version=$(dpkg-query -W -f='${Version}' "$REGIONPM_SRC_PKG" 2>/dev/null) ||
	die "$REGIONPM_SRC_PKG is not installed (run 'make deps')"

check=0
[ "${1:-}" = --check ] && check=1

# The stock tree: the same tarball unpacked once more, next to the patched
# tree and never patched (builds use O=, so nothing writes into it).  Not a
# git worktree of the patched tree's repository: re-unpacking that one
# must not take this one with it.
if [ "${1:-}" = --stock ]; then
	mkdir -p "$REGIONPM_CACHE/src"
	exec 7>"$REGIONPM_CACHE/.stock-tree-lock"
	flock -x 7
	[ "$(cat "$REGIONPM_STOCK_SRC/.regionpm-pristine" 2>/dev/null)" = "$src_version" ] && exit 0
	log "unpacking $REGIONPM_SRC_PKG $src_version into $REGIONPM_STOCK_SRC (once)"
	rm -rf "$REGIONPM_STOCK_SRC" "$REGIONPM_STOCK_SRC.tmp"
	mkdir -p "$REGIONPM_STOCK_SRC.tmp"
	tar -xJf "$REGIONPM_SRC_TARBALL" -C "$REGIONPM_STOCK_SRC.tmp" --strip-components=1
	echo "$src_version" > "$REGIONPM_STOCK_SRC.tmp/.regionpm-pristine"
	mv "$REGIONPM_STOCK_SRC.tmp" "$REGIONPM_STOCK_SRC"
	exit 0
fi

# Builds hold this lock shared while they read the tree (kernel-build.sh);
# unpacking or resetting it takes it exclusively.
mkdir -p "$REGIONPM_CACHE"
exec 8>"$REGIONPM_CACHE/.tree-lock"

# Unpack once per package version.
[ "$check" = 1 ] || [ "$(cat "$REGIONPM_SRC/.regionpm-pristine" 2>/dev/null)" = "$src_version" ] ||
	flock -x 8
if [ "$check" = 0 ] && [ "$(cat "$REGIONPM_SRC/.regionpm-pristine" 2>/dev/null)" != "$src_version" ]; then
	log "unpacking $REGIONPM_SRC_PKG $src_version into $REGIONPM_SRC (once)"
	rm -rf "$REGIONPM_SRC" "$REGIONPM_SRC.tmp"
	mkdir -p "$REGIONPM_SRC.tmp"
	tar -xJf "$REGIONPM_SRC_TARBALL" -C "$REGIONPM_SRC.tmp" --strip-components=1
	(
		cd "$REGIONPM_SRC.tmp"
		git init -q -b pristine
		git -c user.name=regionpm -c user.email=regionpm@localhost \
			-c core.autocrlf=false add -A -f .
		git -c user.name=regionpm -c user.email=regionpm@localhost \
			commit -q -m "Linux $src_version (Debian $REGIONPM_SRC_PKG)"
	)
	echo "$src_version" > "$REGIONPM_SRC.tmp/.regionpm-pristine"
	mv "$REGIONPM_SRC.tmp" "$REGIONPM_SRC"
fi

# Hash of everything that changes the tree.
overlay_files() {
	(cd "$REGIONPM_TOP/kernel" && find . -type f \
		! -path './patches/*' ! -path './config/*' | LC_ALL=C sort)
}
tree_hash=$( {
	echo "$src_version"
	sha256sum < "$0"  # content only: the path differs between clones
	(cd "$REGIONPM_TOP/kernel" && find . -type f ! -path './config/*' |
		LC_ALL=C sort | xargs -r sha256sum)
	(cd "$REGIONPM_TOP" && find include/uapi -type f | LC_ALL=C sort | xargs -r sha256sum)
} | sha256sum | cut -d' ' -f1)

up_to_date() {
	[ "$(cat "$REGIONPM_SRC/.regionpm-pristine" 2>/dev/null)" = "$src_version" ] &&
		[ "$(cat "$REGIONPM_SRC/.regionpm-tree" 2>/dev/null)" = "$tree_hash" ]
}
up_to_date && exit 0
[ "$check" = 1 ] && exit 1
flock -x 8
up_to_date && exit 0

log "laying kernel/ over the pristine tree"
cd "$REGIONPM_SRC"
rm -f .regionpm-tree
git checkout -q -f pristine
git clean -q -fdx -e .regionpm-pristine
overlay_files | while read -r f; do
	mkdir -p "$(dirname "$f")"
	cp "$REGIONPM_TOP/kernel/$f" "$f"
done
# The generated uapi headers live at the top of the repo (user space builds
# against them); the kernel needs them at the same place in its tree.
(cd "$REGIONPM_TOP" && find include/uapi -type f) | while read -r f; do
	mkdir -p "$(dirname "$f")"
	cp "$REGIONPM_TOP/$f" "$f"
done
series="$REGIONPM_TOP/kernel/patches/series"
if [ -f "$series" ]; then
	{ grep -v -e '^#' -e '^[[:space:]]*$' "$series" || true; } | while read -r p _; do
		log "applying $p"
		patch -p1 -s -N --no-backup-if-mismatch \
			-i "$REGIONPM_TOP/kernel/patches/$p" ||
			die "patch $p does not apply"
	done
fi
echo "$tree_hash" > .regionpm-tree
