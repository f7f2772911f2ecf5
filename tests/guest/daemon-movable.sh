#!/bin/bash
# regionpmd with half of memory in ZONE_MOVABLE (boot with movablecore=),
# as virtio-mem, CXL and memory_hotplug.online_policy=auto-movable set
# memory up: no slab or page table can land in the movable half, so the
# daemon must reach 95 % of the simple bound (total - ceil(used / region)),
# not only of the bound that keeps regions with unmovable pages.  The
# simple bound with the free pages the kernel keeps (watermarks, lowmem
# reserves) counted as used: regionpmd keeps them free, as the kernel
# would evict cache to restore them (at 2 GiB they are about a third of a
# region, and the used pages of this workload pack within that of full
# regions in some runs).
here=$(cd "$(dirname "$0")" && pwd)
REGIONPM_DAEMON_BOUND=kept REGIONPM_DAEMON_RATIO=95 exec "$here/daemon.sh"
