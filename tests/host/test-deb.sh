#!/bin/bash
# The regionpmd Debian package as built by "make deb" (make check builds it
# first): where its files go, what dpkg and dh_installsystemd make of it,
# and lintian.  Reads build/deb/ only; changes nothing.  tests/guest/deb.sh
# installs, runs and purges it in the VM.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
cd "$top" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
deb=build/deb/regionpmd_${version}_$(dpkg --print-architecture).deb
if [ ! -f "$deb" ]; then
	tap_fail "the package $deb exists" "make check builds it (scripts/build-deb.sh); run 'make deb'"
	tap_done
	exit 1
fi
tap_ok "the package $deb exists"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^$' > "$tmp/files"
dpkg-deb -e "$deb" "$tmp/control"

# systemd.pc says where a package's units go on this release (Debian 12:
# /lib/systemd/system; dh_installsystemd only handles that directory there).
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
fhs() {
	local f rc=0
	for f in /usr/sbin/regionpmd /usr/bin/regionpmctl "$unitdir/regionpmd.service" \
		/usr/share/dbus-1/system.d/org.regionpm1.conf \
		/usr/share/dbus-1/system-services/org.regionpm1.service /etc/regionpmd.conf \
		/usr/share/man/man8/regionpmd.8.gz /usr/share/man/man8/regionpmctl.8.gz \
		/usr/share/man/man5/regionpmd.conf.5.gz /usr/share/man/man5/org.regionpm1.5.gz \
		/usr/share/man/man7/regionpm.7.gz /usr/share/doc/regionpmd/copyright; do
		grep -qxF "$f" "$tmp/files" || { echo "missing: $f"; rc=1; }
	done
	grep -E '^/usr/local|^/etc/dbus-1' "$tmp/files" && { echo "files outside the FHS package paths"; rc=1; }
	return $rc
}
tap_check "files at the FHS paths (unit in $unitdir, bus policy in /usr/share/dbus-1)" fhs

# Whatever is in systemd/ and man/ reaches the package (make install does
# the installing; a new file there that it forgets shows up here).
all_shipped() {
	local f name rc=0
	for f in systemd/* man/*.[578]; do
		name=${f##*/}
		case "$name" in
		regionpmd.conf.example) name=regionpmd.conf ;;
		*.[578]) name=$name.gz ;;
		esac
		grep -q "/$name\$" "$tmp/files" || { echo "not in the package: $f"; rc=1; }
	done
	return $rc
}
tap_check "every file in systemd/ and man/ is in the package" all_shipped

unit_ok() {
	dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$unitdir/regionpmd.service" > "$tmp/unit" &&
		grep -qx 'ExecStart=/usr/sbin/regionpmd' "$tmp/unit" && ! grep -q '@sbindir@' "$tmp/unit"
}
tap_check "packaged unit runs /usr/sbin/regionpmd" unit_ok
tap_check "/etc/regionpmd.conf is a conffile (and the only one)" \
	bash -c "[ \"\$(cat '$tmp/control/conffiles')\" = /etc/regionpmd.conf ]"
# dh_installsystemd: enable and start on install (the unit's
# ConditionPathExists skips the start on a kernel without regionpm), stop
# on removal, purge the enablement state on purge.
scripts_ok() {
	grep -q "deb-systemd-helper enable 'regionpmd.service'" "$tmp/control/postinst" &&
		grep -q "deb-systemd-invoke \$_dh_action 'regionpmd.service'" "$tmp/control/postinst" &&
		grep -q "deb-systemd-invoke stop 'regionpmd.service'" "$tmp/control/prerm" &&
		grep -q "deb-systemd-helper purge 'regionpmd.service'" "$tmp/control/postrm"
}
tap_check "maintainer scripts enable, start, stop and purge the unit (dh_installsystemd)" scripts_ok
depends_ok() {
	local dep
	dep=$(dpkg-deb -f "$deb" Depends)
	echo "Depends: $dep"
	echo "$dep" | grep -q 'dbus-system-bus' && echo "$dep" | grep -q 'libsystemd0' &&
		{ ! grep -q '^ExecReload=/bin/kill' systemd/regionpmd.service || echo "$dep" | grep -qw procps; }
}
tap_check "depends on a system bus, its libraries (and procps while ExecReload runs /bin/kill)" depends_ok

# lintian, pedantic, experimental and informational tags included; a tag
# that stays must be overridden with a reason in
# debian/regionpmd.lintian-overrides.
changes=${deb%.deb}.changes
lint() {
	local out tags
	out=$(lintian -E --pedantic --info "$changes" 2>&1 | grep -v '^running with root privileges')
	tags=$(printf '%s\n' "$out" | grep -E '^[EWIPXCO]: ')
	[ -z "$tags" ] || { printf '%s\n' "$tags"; return 1; }
}
if command -v lintian >/dev/null; then
	tap_check "lintian -E --pedantic --info: no tag" lint
else
	tap_fail "lintian -E --pedantic --info: no tag" "lintian is not installed (make deps)"
fi
tap_done
