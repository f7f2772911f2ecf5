#!/bin/bash
# Tests of the VM runner itself: exit status, timeout, a panicking guest,
# host binaries in the guest, and systemd as PID 1.  Each boots a guest.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/tap.sh"
run_vm() { "$here/run-vm" --quiet --scratch 0 "$@"; }
# Without --quiet: the console is streamed to stdout.
run_vm_out() { "$here/run-vm" --scratch 0 "$@"; }

expect_rc() { # expected-rc run-vm-args...
	local want=$1 got
	shift
	run_vm "$@" >/dev/null 2>&1
	got=$?
	[ "$got" = "$want" ] || { echo "exit status $got, wanted $want"; return 1; }
}
tap_check "command's exit status 0 comes back" expect_rc 0 -- true
tap_check "command's exit status 7 comes back" expect_rc 7 -- sh -c 'exit 7'
tap_check "a hung guest is killed at the timeout (124)" expect_rc 124 --timeout 25 -- sleep 600
# --icount: guest time is instructions, so an idle guest's clock jumps
# ahead: twenty minutes of sleep end well before a 4-minute host timeout
# (without --icount the guest would be killed at it: 124).
tap_check "--icount: an idle guest's clock runs ahead of the host's" expect_rc 0 \
	--icount 0 --timeout 240 -- sleep 1200
icount_refuses() {
	local out
	out=$("$here/run-vm" --icount "$1" -- true 2>&1)
	[ $? = 1 ] && grep -q -- "--icount wants a shift" <<<"$out" || { echo "$out"; return 1; }
}
tap_check "--icount refuses a shift that is not 0 to 10" icount_refuses 11
tap_check "--icount refuses a shift that is not a number" icount_refuses x
tap_check "--icount refuses a leading zero (QEMU reads octal)" icount_refuses 010
vmem_refuses() {
	local out
	out=$("$here/run-vm" --virtio-mem "$1" -- true 2>&1)
	[ $? = 1 ] && grep -q -- "--virtio-mem wants a size" <<<"$out" || { echo "$out"; return 1; }
}
tap_check "--virtio-mem refuses a size that is not one" vmem_refuses 1Q
tap_check "--virtio-mem refuses a size of 0" vmem_refuses 0
dimm_refuses() {
	local out
	out=$("$here/run-vm" --dimm "$1" -- true 2>&1)
	[ $? = 1 ] && grep -q -- "--dimm wants" <<<"$out" || { echo "$out"; return 1; }
}
tap_check "--dimm refuses a size that is not one" dimm_refuses 1Q
tap_check "--dimm refuses a size that is not whole memory blocks" dimm_refuses 100M
kvm_icount_refused() {
	local out
	out=$("$here/run-vm" --kvm --icount 0 -- true 2>&1)
	[ $? = 1 ] && grep -q -- "--icount needs TCG" <<<"$out" || { echo "$out"; return 1; }
}
tap_check "--icount refuses --kvm" kvm_icount_refused
tap_check "a panicking guest fails (125), it does not hang" expect_rc 125 --timeout 120 -- \
	sh -c 'echo c > /proc/sysrq-trigger; sleep 60'

# QEMU crashing before the guest boots (seen once under TCG): run-vm boots
# once more and says so; crashing again fails, it does not loop.  A stand-in
# qemu-system-x86_64 first in PATH dies of SIGSEGV on its first N calls.
qemu_crashes() { # crashes expected-rc
	local d rc real
	real=$(command -v qemu-system-x86_64) || return 1
	d=$(mktemp -d /tmp/regionpm-qemu.XXXXXX)
	cat > "$d/qemu-system-x86_64" <<EOF2
#!/bin/bash
n=\$(cat "$d/calls" 2>/dev/null || echo 0)
echo \$((n + 1)) > "$d/calls"
[ "\$n" -lt $1 ] && kill -SEGV \$\$
exec "$real" "\$@"
EOF2
	chmod +x "$d/qemu-system-x86_64"
	PATH="$d:$PATH" run_vm -- true > "$d/out" 2>&1
	rc=$?
	[ "$rc" = "$2" ] && [ "$(cat "$d/calls")" = 2 ] && grep -q 'booting once more' "$d/out" ||
		{ echo "exit $rc, $(cat "$d/calls") calls"; tail -5 "$d/out"; rm -rf "$d"; return 1; }
	rm -rf "$d"
}
tap_check "qemu crashing before the guest boots: booted once more, command runs" qemu_crashes 1 0
tap_check "qemu crashing twice: fails (125), no third boot" qemu_crashes 2 125

output_streams() {
	local out
	out=$(run_vm_out -- sh -c 'echo hello-from-$(uname -r)' 2>&1)
	grep -q 'hello-from-.*-regionpm' <<<"$out" || { echo "$out" | tail -5; return 1; }
}
tap_check "guest output is streamed and the guest runs our kernel" output_streams

host_binaries_and_cwd() {
	local out
	# The serial console ends lines with CR LF.
	out=$(cd "$here" && run_vm_out -- sh -c 'pwd; python3 -c "print(6*7)"; stress-ng --version' 2>&1 |
		tr -d '\r')
	grep -qx "$here" <<<"$out" && grep -qx 42 <<<"$out" && grep -q stress-ng <<<"$out" ||
		{ echo "$out" | tail -8; return 1; }
}
tap_check "host binaries run in the guest, in the caller's directory" host_binaries_and_cwd

tmp_dir_is_visible() {
	local d rc
	d=$(mktemp -d /tmp/regionpm-probe.XXXXXX)
	echo hello > "$d/probe"
	(cd "$d" && run_vm -- grep -qx hello probe)
	rc=$?
	rm -rf "$d"
	return $rc
}
tap_check "the host's /tmp is visible in the guest (CI clones live there)" tmp_dir_is_visible

root_is_writable_overlay() {
	run_vm -- sh -c 'touch /usr/regionpm-probe && findmnt -n -o FSTYPE / | grep -qx overlay'
}
tap_check "guest root is a writable overlay that leaves the host alone" root_is_writable_overlay
tap_check "the host saw none of it" test ! -e /usr/regionpm-probe

out_and_side_files() {
	local d rc
	d=$(mktemp -d /tmp/regionpm-out.XXXXXX)
	run_vm --out "$d/r.json" -- sh -c \
		'echo main > "$REGIONPM_VM_OUT"; echo side > "$REGIONPM_VM_OUT.extra.log"'
	grep -qx main "$d/r.json" && grep -qx side "$d/r.json.extra.log"
	rc=$?
	rm -rf "$d"
	return $rc
}
tap_check "--out FILE gets \$REGIONPM_VM_OUT, FILE.SUFFIX its side files" out_and_side_files

systemd_is_pid1() {
	local out
	out=$(run_vm_out --systemd --timeout 300 -- sh -c '
		echo "pid1=$(cat /proc/1/comm)"
		systemctl is-system-running --wait
		systemctl show -p ActiveState dbus.socket' 2>&1)
	local rc=$?
	grep -q '^pid1=systemd' <<<"$out" && grep -q 'ActiveState=active' <<<"$out" && [ $rc = 0 ] ||
		{ echo "exit $rc"; echo "$out" | tail -15; return 1; }
}
tap_check "systemd boots as PID 1 and runs the command as a service" systemd_is_pid1
tap_done
