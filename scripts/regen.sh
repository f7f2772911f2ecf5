#!/bin/bash
# Regenerate the netlink code from the spec with the kernel's own generator:
#   include/uapi/linux/regionpm.h            (uapi; the daemon compiles against it)
#   kernel/mm/regionpm_nl_gen.{c,h}          (kernel policy and op tables)
#
#   scripts/regen.sh          rewrite the generated files
#   scripts/regen.sh --check  fail if any committed file is stale
#
# The generator wants the spec inside a kernel tree (it looks for MAINTAINERS
# and for Documentation/netlink/genetlink.yaml next to specs/), so it runs on
# the copy that kernel-src.sh laid into the cached tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=0
[ "${1:-}" = --check ] && check=1

"$REGIONPM_TOP/scripts/kernel-src.sh" >&2
spec=Documentation/netlink/specs/regionpm.yaml
cmp -s "$REGIONPM_TOP/kernel/$spec" "$REGIONPM_SRC/$spec" || die "spec copy in $REGIONPM_SRC is stale"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gen() { # mode kind output
	(cd "$REGIONPM_SRC" && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 \
		tools/net/ynl/ynl-gen-c.py --mode "$1" "--$2" --spec "$spec" -o "$3")
}
gen uapi header "$out/regionpm.h"
gen kernel source "$out/regionpm_nl_gen.c"
gen kernel header "$out/regionpm_nl_gen.h"

stale=0
place() { # generated target
	if [ "$check" = 1 ]; then
		if ! cmp -s "$1" "$REGIONPM_TOP/$2"; then
			echo "stale generated file: $2 (run 'make regen')" >&2
			stale=1
		fi
	elif ! cmp -s "$1" "$REGIONPM_TOP/$2"; then
		mkdir -p "$(dirname "$REGIONPM_TOP/$2")"
		cp "$1" "$REGIONPM_TOP/$2"
		echo "regenerated $2" >&2
	fi
}
place "$out/regionpm.h" include/uapi/linux/regionpm.h
place "$out/regionpm_nl_gen.c" kernel/mm/regionpm_nl_gen.c
place "$out/regionpm_nl_gen.h" kernel/mm/regionpm_nl_gen.h
exit $stale
