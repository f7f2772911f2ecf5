#!/bin/bash
# Build the regionpm test kernel (bzImage) in the cache, with ccache.
#
#   scripts/kernel-build.sh [default|debug|stock]
#
# Prints the path of the bzImage on stdout.  Does nothing but print it when
# neither the tree (kernel/ overlay + patches) nor the config fragments nor
# this script changed since the last successful build of that variant.
#
# stock: the same Linux source version and configuration without the
# regionpm series (the kernel regionpmd's stock backend runs on).  Its
# source is a second, never patched tree next to the patched one
# (kernel-src.sh --stock), its inputs do not include kernel/, and the
# CONFIG_REGIONPM* lines of the fragments are left out (the options do not
# exist there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:-default}
case "$variant" in
default) fragments=(base.config) ;;
debug) fragments=(base.config debug.config) ;;
stock) fragments=(base.config stock.config) ;;
*) die "unknown kernel variant '$variant' (default, debug or stock)" ;;
esac

build="$REGIONPM_CACHE/build/$variant"

image="$build/arch/x86/boot/bzImage"

# The tree must not change under a build: hold the tree lock shared (the
# reset in kernel-src.sh takes it exclusively), and retry if it went stale
# between preparing it and locking it.  Variants build side by side, but
# one build at a time per variant: two makes in one O= dir corrupt it.
if [ "$variant" = stock ]; then
	"$REGIONPM_TOP/scripts/kernel-src.sh" --stock
	src=$REGIONPM_STOCK_SRC
	tree_id=$src/.regionpm-pristine
else
	while :; do
		"$REGIONPM_TOP/scripts/kernel-src.sh"
		exec 8>"$REGIONPM_CACHE/.tree-lock"
		flock -s 8
		"$REGIONPM_TOP/scripts/kernel-src.sh" --check && break
		exec 8>&-
	done
	src=$REGIONPM_SRC
	tree_id=$src/.regionpm-tree
fi
mkdir -p "$build"
exec 9>"$build/.build-lock"
flock -x 9
inputs_hash=$( {
	echo "$variant"
	cat "$tree_id"
	sha256sum < "$0"  # content only: the path differs between clones
	for f in "${fragments[@]}"; do (cd "$REGIONPM_TOP/kernel/config" && sha256sum "$f"); done
} | sha256sum | cut -d' ' -f1)

if [ -f "$image" ] && [ "$(cat "$build/.regionpm-inputs" 2>/dev/null)" = "$inputs_hash" ]; then
	echo "$image"
	exit 0
fi

mkdir -p "$build" "$REGIONPM_CACHE/ccache"
rm -f "$build/.regionpm-inputs"
export CCACHE_DIR="$REGIONPM_CACHE/ccache" CCACHE_MAXSIZE=5G CCACHE_NOHASHDIR=1
# Fixed build identity: reproducible version strings and ccache hits across
# clones and rebuilds.
export KBUILD_BUILD_USER=regionpm KBUILD_BUILD_HOST=regionpm \
	KBUILD_BUILD_TIMESTAMP="2024-11-17" KBUILD_BUILD_VERSION=1
kmake=(make -s -C "$src" O="$build" ARCH=x86_64 LOCALVERSION= CC="ccache gcc" HOSTCC="ccache gcc")

log "configuring $variant kernel (tinyconfig + ${fragments[*]})"
"${kmake[@]}" tinyconfig >/dev/null
paths=()
for f in "${fragments[@]}"; do
	if [ "$variant" = stock ]; then
		# No regionpm in the stock tree: its options must simply not exist.
		grep -v '^CONFIG_REGIONPM' "$REGIONPM_TOP/kernel/config/$f" > "$build/$f"
		paths+=("$build/$f")
	else
		paths+=("$REGIONPM_TOP/kernel/config/$f")
	fi
done
(cd "$build" && "$src/scripts/kconfig/merge_config.sh" -m -O "$build" \
	"$build/.config" "${paths[@]}" >/dev/null)
"${kmake[@]}" olddefconfig >/dev/null

# Kconfig drops options whose dependencies are not met without a word: check
# that every requested value made it into the final .config.  Later
# fragments override earlier ones (debug.config's LOCALVERSION, SLUB_TINY),
# so only the last request for each option is checked.
declare -A wanted=()
for p in "${paths[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) wanted[${line%%=*}]=$line ;;
		"# CONFIG_"*" is not set") name=${line#\# }; wanted[${name%% *}]=$line ;;
		esac
	done < "$p"
done
missing=0
for name in "${!wanted[@]}"; do
	line=${wanted[$name]}
	if ! grep -qxF -- "$line" "$build/.config"; then
		# "is not set" is also satisfied by the option not existing at all.
		case "$line" in
		"# "*) grep -qE "^$name=" "$build/.config" || continue ;;
		esac
		got=$(grep -E "^(# )?$name[= ]" "$build/.config" || echo "$name undefined")
		log "config: wanted '$line', got '$got'"
		missing=1
	fi
done
[ "$missing" = 0 ] || die "kernel config fragments not satisfied (see above)"

log "building $variant kernel (-j$(nproc), ccache $CCACHE_DIR)"
"${kmake[@]}" -j"$(nproc)" bzImage
echo "$inputs_hash" > "$build/.regionpm-inputs"
echo "$image"
