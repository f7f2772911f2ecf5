#!/bin/bash
# regionpmd on a DIMM hotplugged with memory_hotplug.memmap_on_memory=1
# (suite daemon-dimm-memmap): every region of the DIMM holds its block's
# memmap, so it can never be emptied, however free it is.  Judged against
# the bound that counts regions holding reserved pages as occupied
# (bound-tight), which the judge knows the memmap to be; the daemon must
# reach it without asking the kernel to park those regions again and again.
here=$(cd "$(dirname "$0")" && pwd)
REGIONPM_DAEMON_BOUND=tight REGIONPM_DAEMON_RATIO=95 \
	REGIONPM_DAEMON_REFUSED_ONCE=memmap_on_memory exec "$here/daemon.sh"
