#!/bin/bash
# make check-fresh: the README's two commands on a fresh Debian 12 machine.
#
# A repository that works on the developers' machines can still need a tool
# that "make deps" does not install (rsync and procps were found this way):
# only a machine that starts with nothing finds that class of bug.  This
# script builds a minimal Debian 12 root (mmdebstrap --variant=apt plus git,
# make and ca-certificates, nothing else), clones the committed HEAD of this
# repository into it, and runs "make check" and then "make demo" in it as
# root, through chroot, with an empty HOME (no kernel cache, no ccache): a
# truly cold run.  The test VM (tests/vm/run-vm) shares the chroot's / with
# the guest over virtio-9p, so the guest sees the fresh root too.
#
#   scripts/fresh-machine.sh [--keep] [TARGET...]   (default targets: check demo)
#
#   REGIONPM_FRESH_DIR     where the root is built (default /var/tmp/regionpm-fresh;
#                          must be outside the repository); removed at the
#                          end unless --keep or REGIONPM_FRESH_KEEP=1
#   REGIONPM_FRESH_MIRROR  Debian mirror (default http://deb.debian.org/debian)
#   REGIONPM_FRESH_SECURITY  security mirror (default http://deb.debian.org/debian-security)
#
# Needs root (mmdebstrap, mount, chroot) and network access to the Debian
# archive.  It takes as long as a cold "make check" plus "make demo": a full
# kernel build and every test.  Uncommitted changes are NOT tested (a fresh
# machine gets what "git clone" gives); the script says so when there are any.
#
# /dev/kvm is hidden from the chroot: the test VM runs under TCG, and a fresh
# machine (or a CI container) may have no KVM at all.
#
# Exit status: 0 when every target passed, 1 otherwise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The whole script is one function, parsed before it runs: bash reads a
# script file as it goes, and this one runs for an hour while its file may
# change (a git checkout or an edit in the same tree).
main() {
	keep=${REGIONPM_FRESH_KEEP:-0}
	targets=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--keep) keep=1 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
		-*) die "unknown option $1" ;;
		*) targets+=("$1") ;;
		esac
		shift
	done
	[ ${#targets[@]} -gt 0 ] || targets=(check demo)

	dir=$(realpath -m "${REGIONPM_FRESH_DIR:-/var/tmp/regionpm-fresh}")
	mirror=${REGIONPM_FRESH_MIRROR:-http://deb.debian.org/debian}
	security=${REGIONPM_FRESH_SECURITY:-http://deb.debian.org/debian-security}
	suite=bookworm

	[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, mount, chroot)"
	case "$dir/" in
	"$REGIONPM_TOP"/*) die "REGIONPM_FRESH_DIR ($dir) must be outside the repository" ;;
	/|/tmp/|/var/tmp/|/root/) die "REGIONPM_FRESH_DIR ($dir) is too broad: it is removed afterwards" ;;
	esac

	# Everything below mounts things; do it in a private mount namespace so that
	# no mount can leak to the host.  The trap below unmounts in order, so the
	# root can be removed.  (After a kill -9 the mounts vanish with the last
	# process in the namespace; the directory then stays until the next run.)
	if [ "${REGIONPM_FRESH_NS:-}" != 1 ]; then
		command -v unshare >/dev/null || die "unshare (util-linux) is missing"
		REGIONPM_FRESH_NS=1 REGIONPM_FRESH_KEEP=$keep exec \
			unshare --mount --propagation private -- "$0" "${targets[@]}"
	fi

	# The host needs mmdebstrap; the Debian package is all it takes.
	if ! command -v mmdebstrap >/dev/null; then
		log "installing mmdebstrap on the host"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null ||
			{ apt-get update -q >/dev/null &&
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null; } ||
			die "cannot install mmdebstrap"
	fi

	head=$(git -C "$REGIONPM_TOP" rev-parse HEAD)
	if [ -n "$(git -C "$REGIONPM_TOP" status --porcelain --untracked-files=no)" ]; then
		log "warning: uncommitted changes in $REGIONPM_TOP are not part of this run (HEAD $head)"
	fi

	root="$dir/root"
	mounted=()	# mount points, in mount order
	job=	# pid of the chroot command running in the root
	owned=0	# 1 once $dir is ours to remove
	# Every process whose root directory is the fresh root: all of them were
	# started by this script (make, the kernel build, QEMU in its own process
	# group under timeout(1)).
	procs_in_root() {
		local p
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
		done
	}
	cleanup() {
		local rc=$? i pids
		set +e
		# Killed or interrupted while a make runs in the root: end everything
		# in it first, or it would hold the mounts and write into a root being
		# removed.
		pids=$(procs_in_root)
		if [ -n "$pids" ]; then
			log "stopping what still runs in the root: $(echo $pids)"
			kill -TERM $pids 2>/dev/null
			for _ in $(seq 1 20); do [ -n "$(procs_in_root)" ] || break; sleep 0.5; done
			pids=$(procs_in_root)
			[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
		fi
		[ -z "$job" ] || wait "$job" 2>/dev/null
		# Unmount in reverse order; lazily if something still holds one.
		for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
			umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}"
		done
		if [ "$keep" = 1 ]; then
			log "kept the fresh root in $root"
		elif [ "$owned" = 1 ] && [ -d "$dir" ]; then
			# --one-file-system: never descend into anything still mounted.
			if findmnt -rn -o TARGET | grep -q "^$root/"; then
				log "something is still mounted under $root: not removing it"
			else
				rm -rf --one-file-system "$dir"
			fi
		fi
		exit "$rc"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM HUP

	mnt() { # mount args... target (last): mount and remember it for the trap
		mount "$@"
		mounted+=("${!#}")
	}

	t_start=$(date +%s)
	elapsed() { local s=$(( $(date +%s) - $1 )); printf '%d min %02d s' $((s / 60)) $((s % 60)); }

	# ---- 1. a minimal Debian 12 root ------------------------------------------
	# linux-source-6.12 is only in bookworm-security (and bookworm-updates
	# carries point-release updates), so the root gets the same three suites a
	# Debian 12 installation has by default.
	# The directory is removed, now and afterwards: only one this script made
	# (it carries a marker) or an empty one.
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -e "$dir/.regionpm-fresh" ]; then
		die "$dir exists and was not made by $0: not removing it (set REGIONPM_FRESH_DIR)"
	fi
	rm -rf --one-file-system "$dir"
	mkdir -p "$dir"
	touch "$dir/.regionpm-fresh"
	owned=1
	log "mmdebstrap --variant=apt --include=git,make,ca-certificates $suite -> $root"
	mmdebstrap --quiet --variant=apt --include=git,make,ca-certificates --components=main \
		"$suite" "$root" \
		"deb $mirror $suite main" \
		"deb $mirror $suite-updates main" \
		"deb $security $suite-security main"
	echo "fresh root: $(chroot "$root" dpkg-query -W -f '.\n' | wc -l) packages, $(du -sh --one-file-system "$root" | cut -f1)"

	# ---- 2. the repository: a clone of the committed HEAD -----------------------
	# --no-local: objects are copied, not hard-linked, so nothing in the clone is
	# shared with the host's repository.
	clone=/root/regionpm
	git clone -q --no-local "$REGIONPM_TOP" "$root$clone"
	git -C "$root$clone" checkout -q --detach "$head"
	echo "clone: $clone at $(git -C "$root$clone" log -1 --format='%h %s')"

	# ---- 3. what a machine has: /proc, /sys, /dev, DNS ---------------------------
	mnt -t proc proc "$root/proc"
	mnt -t sysfs sysfs "$root/sys"
	mnt --rbind /dev "$root/dev"
	# (private namespace: nothing mounted under $root/dev reaches the host's /dev)
	if [ -e "$root/dev/kvm" ]; then
		mnt --bind /dev/null "$root/dev/kvm"	# TCG only: KVM must not matter
	fi
	mountpoint -q "$root/dev/pts" || mnt -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
	# /tmp stays the root's own directory (on disk): the VM's scratch images
	# (4 GiB, sparse) live there and must not eat RAM.
	chmod 1777 "$root/tmp"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"

	# ---- 4. the README's commands ---------------------------------------------
	# A clean environment: HOME=/root is empty, so the kernel cache and ccache
	# start cold; nothing of the caller's REGIONPM_* or CCACHE_* settings leaks in.
	# In the background: "wait" returns as soon as this script gets a signal,
	# so the trap runs at once (and ends what runs in the root).
	in_root() {
		env -i HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			chroot "$root" /bin/bash -c "cd $clone && $*" < /dev/null &
		job=$!
		local rc=0
		wait "$job" || rc=$?
		job=
		return $rc
	}
	rc=0
	summary=()
	for t in "${targets[@]}"; do
		echo
		echo "==== make $t (fresh root, cold) ===="
		t0=$(date +%s)
		if in_root "make $t"; then
			res=passed
		else
			res="FAILED (exit $?)"
			rc=1
		fi
		summary+=("make $t: $res in $(elapsed "$t0")")
		echo "==== make $t: $res in $(elapsed "$t0")"
		[ "$rc" = 0 ] || break	# the demo after a failed check says nothing new
	done

	echo
	echo "check-fresh summary (HEAD $(git -C "$REGIONPM_TOP" rev-parse --short "$head"), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)):"
	printf '  %s\n' "${summary[@]}"
	echo "  total $(elapsed "$t_start") (root setup included)"
	exit "$rc"
}
main "$@"
