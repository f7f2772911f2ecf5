#!/bin/bash
# File server workload of the benchmark (issue 9); runs in the guest.
#
#   fileserver.sh fill | free | hot SECS | cleanup | all [SECS]
#
# Tens of thousands of small files, so dentry and inode slab (and ext4
# metadata) is allocated between the page cache pages of the files and ends
# up in many regions, then half of the files deleted and a hot subset read
# over and over.  Sized from BENCH_MEM_KB (bench/lib.sh):
#   fill  files of 4 to 64 KiB (sizes from a fixed seed, mean 34 KiB),
#         half of memory in all, in 256 directories, written by one Python
#         process, then sync (clean page cache);
#   free  every file whose hashed index is odd deleted (half of them,
#         scattered over the disk and over memory);
#   hot   every tenth kept file (about 5 % of the data) read in a loop for
#         SECS; the rest of the kept files is not touched.
# The hot phase's measure is bytes read per second (bench/lib.sh
# hot_result).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
dir=$BENCH_DIR/fs
data_kib=$((mem_kib / 2))

py() { /usr/bin/python3 - "$dir" "$data_kib" "$@"; }

# The file list is a pure function of the data size: index, size in KiB,
# deleted by free?, hot?
PYLIB='
import os, random, sys
d, data_kib = sys.argv[1], int(sys.argv[2])
def files():
    rng = random.Random(9)
    total, i = 0, 0
    while total < data_kib:
        kib = 4 * rng.randint(1, 16)
        deleted = ((i * 2654435761) >> 7) & 1 == 1
        yield i, kib, deleted
        total += kib
        i += 1
def path(i):
    return "%s/%02x/f%06d" % (d, i % 256, i)
def kept():
    return [(i, kib) for i, kib, dele in files() if not dele]
def hot():
    return [(i, kib) for n, (i, kib) in enumerate(kept()) if n % 10 == 0]
'

wl_fill() {
	echo "fileserver fill: MemTotal ${mem_kib} kB, ${data_kib} kB of small files"
	py <<PY || return 1
$PYLIB
for s in range(256):
    os.makedirs("%s/%02x" % (d, s), exist_ok=True)
n = 0
buf = bytes(range(256)) * 256    # 64 KiB
for i, kib, _ in files():
    with open(path(i), "wb") as f:
        f.write(buf[:kib * 1024])
    n += 1
print("fileserver fill: %d files" % n)
PY
	sync
}

wl_free() {
	py <<PY
$PYLIB
n = 0
for i, kib, dele in files():
    if dele:
        os.unlink(path(i))
        n += 1
print("fileserver free: %d files deleted" % n)
PY
	sync
	sleep 1
}

wl_hot() { # seconds
	py "$1" <<PY
$PYLIB
import time
secs = float(sys.argv[3])
hs = hot()
hot_bytes = sum(kib for _, kib in hs) * 1024
t0 = time.monotonic()
done = 0
while time.monotonic() - t0 < secs:
    for i, _ in hs:
        with open(path(i), "rb") as f:
            done += len(f.read())
el = time.monotonic() - t0
with open(os.environ.get("BENCH_STATE", "/tmp/bench-state") + "/hot.args", "w") as f:
    f.write("%d bytes %.2f %d\n" % (done, el, hot_bytes))
print("fileserver hot: %d hot files, %d bytes read in %.1f s" % (len(hs), done, el))
PY
	hot_result $(cat "$BENCH_STATE/hot.args")
}

wl_cleanup() {
	rm -rf "$dir"
}

workload_main "$@"
