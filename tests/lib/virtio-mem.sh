# Play the host of the virtio-mem device of a test guest (tests/vm/run-vm
# --virtio-mem): requests go to tests/vm/virtio-mem-agent.py on the host
# through the run-vm share.  Source it after tap.sh.

VMEM_SHARE=${VMEM_SHARE:-/mnt/regionpm-vm}

# vmem_call REQUEST: the agent's reply line ("ok size=N requested=N" or
# "error ..."); fails when there is no answer within 20 s.
vmem_call() {
	local i
	rm -f "$VMEM_SHARE/virtio-mem-reply"
	echo "$*" > "$VMEM_SHARE/virtio-mem-request.tmp" &&
		mv "$VMEM_SHARE/virtio-mem-request.tmp" "$VMEM_SHARE/virtio-mem-request" || return 1
	for i in $(seq 1 100); do
		if [ -s "$VMEM_SHARE/virtio-mem-reply" ]; then
			cat "$VMEM_SHARE/virtio-mem-reply"
			return 0
		fi
		sleep 0.2
	done
	echo "error no answer from the virtio-mem agent in 20 s"
	return 1
}

# The device's plugged size in bytes, as the host sees it; empty on error.
vmem_plugged() {
	vmem_call get | sed -n 's/^ok size=\([0-9]*\) .*/\1/p'
}

# vmem_resize BYTES: set the requested size; fails unless the host took it.
vmem_resize() {
	local out
	out=$(vmem_call set "$1")
	echo "$out"
	case "$out" in "ok "*"requested=$1") return 0 ;; esac
	return 1
}

# vmem_wait_plugged BYTES SECONDS: wait until the plugged size is BYTES;
# prints the last size seen (MiB) and how long it took.
vmem_wait_plugged() {
	local want=$1 secs=$2 t0 size
	t0=$(date +%s)
	while :; do
		size=$(vmem_plugged)
		[ "$size" = "$want" ] && break
		[ $(( $(date +%s) - t0 )) -ge "$secs" ] && break
		sleep 2
	done
	echo "plugged $(( ${size:-0} >> 20 )) MiB after $(( $(date +%s) - t0 )) s (want $(( want >> 20 )) MiB)"
	[ "$size" = "$want" ]
}

# vmem_stall_report: what the guest looks like when a resize or a daemon
# stops making progress, for the test log: the device's memory blocks,
# the kernel stacks of tasks in D state, and the kernel log after sysrq
# w (blocked tasks) and l (what the CPUs run).  A virtio-mem offline that
# loops runs in a kworker; one that waits on a lock shows up blocked.
vmem_stall_report() {
	local p st
	echo "memory blocks at or above 4 GiB:"
	hot_blocks | sed 's/^/  /'
	for p in /proc/[0-9]*; do
		st=$(awk '$1 == "State:" { print $2 }' "$p/status" 2>/dev/null)
		[ "$st" = D ] || continue
		echo "task ${p#/proc/} ($(cat "$p/comm" 2>/dev/null)) in D state:"
		sed 's/^/  /' "$p/stack" 2>/dev/null
	done
	if [ -w /proc/sysrq-trigger ]; then
		echo w > /proc/sysrq-trigger
		echo l > /proc/sysrq-trigger
	fi
	echo "kernel log, last 150 lines:"
	dmesg | tail -n 150 | sed 's/^/  /'
}
