# Shared settings for regionpm's build and test scripts (sourced, not run).
# Everything big lives outside the repo so a fresh clone reuses it.
: "${REGIONPM_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/regionpm}"
REGIONPM_SRC_PKG=linux-source-6.12
REGIONPM_SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
REGIONPM_SRC="$REGIONPM_CACHE/src/linux-6.12"
# The same source without the regionpm series (KERNEL_VARIANT=stock).
REGIONPM_STOCK_SRC="$REGIONPM_CACHE/src/linux-6.12-stock"
REGIONPM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export REGIONPM_CACHE REGIONPM_SRC REGIONPM_STOCK_SRC REGIONPM_TOP

die() { echo "error: $*" >&2; exit 1; }
log() { echo "[regionpm] $*" >&2; }
