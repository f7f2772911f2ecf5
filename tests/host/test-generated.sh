#!/bin/bash
# Generated files are up to date with the netlink spec, and the kernel change
# exports as a format-patch series that checkpatch.pl --strict accepts.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
tap_check "uapi header and netlink tables match the spec (make regen)" "$top/scripts/regen.sh" --check
tap_check "kernel series passes checkpatch.pl --strict (make kernel-series)" \
	"$top/scripts/kernel-series.sh" "$top/build/kernel-series"
tap_done
