#!/bin/bash
# make deb: the regionpmd Debian package (debian/), built with
# "dpkg-buildpackage -us -uc -b" in a copy of the tree under build/deb/src,
# because dpkg-buildpackage cleans the tree it builds in ("debian/rules
# clean" runs "make clean", which would remove build/) and writes its
# results to the parent directory.  The .deb and the .buildinfo/.changes
# end up in build/deb/.
#
#   scripts/build-deb.sh [OUTDIR]   (default build/deb)
#
# Quick when nothing changed: the copy is what "git ls-files" lists under
# the paths the package is built from (tracked, plus untracked files that
# are not ignored: a new file counts before it is committed), and a hash of
# its content decides whether the package must be built again; a change to
# the kernel, the tests or the README does not rebuild it.  Prints the path
# of the .deb on stdout.
#
#   REGIONPM_DEB_LINTIAN=1   also run lintian on the result (make deb does)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REGIONPM_TOP"

out=$(realpath -m "${1:-build/deb}")
src="$out/src"
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	die "dpkg-buildpackage or debhelper is missing (make deps)"

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg --print-architecture)
deb="$out/regionpmd_${version}_${arch}.deb"

# The files of the package's source tree: the user space, what installs it,
# and debian/.  build/ is ignored (.gitignore), so the copy never contains
# itself.
PKG_PATHS=(Makefile debian daemon include man systemd)
list_files() {
	git ls-files -z --cached --others --exclude-standard -- "${PKG_PATHS[@]}" |
	while IFS= read -r -d '' f; do
		[ -f "$f" ] && printf '%s\0' "$f"  # (deleted but not yet committed)
	done
}
hash=$(list_files | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
hash=$(printf '%s %s\n' "$hash" "$(sha256sum < "$0")" | sha256sum | cut -d' ' -f1)
if [ -f "$deb" ] && [ "$(cat "$out/.inputs" 2>/dev/null)" = "$hash" ]; then
	echo "$deb"
	exit 0
fi

log "building the regionpmd package (dpkg-buildpackage -us -uc -b in $src)"
rm -rf "$src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out/.inputs"
mkdir -p "$src/regionpmd-$version"
list_files | tar -c --null -T - | tar -x -C "$src/regionpmd-$version"
(
	cd "$src/regionpmd-$version"
	# No signing; binary packages only.  Its output goes to build/deb/build.log.
	dpkg-buildpackage -us -uc -b > "$out/build.log" 2>&1
) || {
	tail -n 40 "$out/build.log" >&2
	die "dpkg-buildpackage failed (full log: $out/build.log)"
}
mv "$src"/*.deb "$src"/*.buildinfo "$src"/*.changes "$out/"
rm -rf "$src"
[ -f "$deb" ] || die "dpkg-buildpackage did not produce $deb"
echo "$hash" > "$out/.inputs"
if [ "${REGIONPM_DEB_LINTIAN:-0}" = 1 ]; then
	command -v lintian >/dev/null || die "lintian is missing (make deps)"
	log "lintian $(basename "$deb")"
	lintian --info --display-info --pedantic "$out"/regionpmd_*.changes >&2 || true
fi
echo "$deb"
