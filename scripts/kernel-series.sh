#!/bin/bash
# Export the whole kernel change as a "git format-patch" series against
# the 6.12.y source of Debian's linux-source-6.12 (not 6.12.0: patch 0003 needs
# 6.12.y's __rmqueue_claim()) and check it with the kernel's checkpatch.pl --strict.
#
#   scripts/kernel-series.sh [OUTDIR]   (default: build/kernel-series)
#
# The series is built in a temporary git worktree of the cached kernel
# repository ($REGIONPM_SRC, branch "pristine"), so neither the cached work
# tree nor a build running in it is touched.  One commit per patch in
# kernel/patches/series, in order, with the patch's own author and message;
# the new files under kernel/ (and the generated uapi header) are added to
# the commit they belong to according to the table below.  Commits named in
# the table but absent from the series are created at the end with a message
# from this script.
#
# Exit status: 0 when checkpatch reports no error and no warning (its
# "CHECK" findings are printed but do not fail), 1 otherwise or on any
# setup problem.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Which commit each file of the overlay lands in.  First column: a patch in
# kernel/patches/series, or the name of an extra commit defined below.
# Second column: a bash pattern on the path relative to the repository top
# ('*' also matches '/').  Every file under kernel/ (except kernel/patches
# and kernel/config) and under include/uapi/ must match a row, so that a new
# file is never silently left out of the series.
MAP=(
	"0002-mm-add-regionpm.patch kernel/mm/regionpm*"
	"0002-mm-add-regionpm.patch kernel/include/linux/regionpm.h"
	"0002-mm-add-regionpm.patch kernel/Documentation/netlink/specs/regionpm.yaml"
	"0002-mm-add-regionpm.patch include/uapi/linux/regionpm.h"
	"docs kernel/Documentation/admin-guide/*"
)

# Extra commits, appended after the series: subject and body (a
# Signed-off-by line with the identity of the first patch is added).  Once a
# patch with the same subject is in the series, the files go into that patch
# instead and its own message is used.
declare -A EXTRA_SUBJECT EXTRA_BODY
EXTRA_ORDER=(docs)
EXTRA_SUBJECT[docs]="Documentation: admin-guide/mm: document regionpm"
EXTRA_BODY[docs]="Describe regionpm for administrators: why keeping physical memory
regions idle saves DRAM background power, how regions relate to memory
blocks, the boot and runtime parameters, the \"regionpm\" generic netlink
family (operations, attributes, events and errors), how parked regions
are held and when they are given back, the allocation bias and what it
costs, the privileges needed, and the limitations."

out=${1:-$REGIONPM_TOP/build/kernel-series}
series="$REGIONPM_TOP/kernel/patches/series"

[ -d "$REGIONPM_SRC/.git" ] ||
	die "no kernel repository at $REGIONPM_SRC (run 'make kernel' once)"
git -C "$REGIONPM_SRC" rev-parse -q --verify 'pristine^{commit}' >/dev/null ||
	die "$REGIONPM_SRC has no 'pristine' branch"
[ -f "$series" ] || die "missing $series"

# --- the plan: commits in order, and the overlay files of each ------------

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$series" | awk '{print $1}')
[ "${#patches[@]}" -gt 0 ] || die "$series lists no patches"
for p in "${patches[@]}"; do
	[ -f "$REGIONPM_TOP/kernel/patches/$p" ] || die "series names missing patch $p"
done

in_list() { # needle list...
	local n=$1 x
	shift
	for x in "$@"; do [ "$x" = "$n" ] && return 0; done
	return 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/regionpm-series.XXXXXX")
wt="$tmp/linux"
cleanup() {
	if [ -e "$wt" ]; then
		git -C "$REGIONPM_SRC" worktree remove --force "$wt" 2>/dev/null || true
	fi
	git -C "$REGIONPM_SRC" worktree prune 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

subject_of() { # patch file
	git mailinfo "$tmp/mi.msg" "$tmp/mi.diff" < "$1" | sed -n 's/^Subject: //p'
}

commits=("${patches[@]}")
declare -A alias_of  # extra commit -> series patch with the same subject
for e in "${EXTRA_ORDER[@]}"; do
	for p in "${patches[@]}"; do
		if [ "$(subject_of "$REGIONPM_TOP/kernel/patches/$p")" = "${EXTRA_SUBJECT[$e]}" ]; then
			alias_of[$e]=$p
		fi
	done
	[ -n "${alias_of[$e]:-}" ] || commits+=("$e")
done
resolve() { echo "${alias_of[$1]:-$1}"; }
for row in "${MAP[@]}"; do
	key=$(resolve "${row%% *}")
	in_list "$key" "${commits[@]}" ||
		die "table row '$row' names '$key', which is neither in the series nor an extra commit"
done

# The overlay, exactly as scripts/kernel-src.sh lays it over the tree.
mapfile -t overlay < <(cd "$REGIONPM_TOP" && {
	find kernel -type f ! -path 'kernel/patches/*' ! -path 'kernel/config/*'
	find include/uapi -type f
} | LC_ALL=C sort)

declare -A files_of  # commit -> newline-separated repo paths
unmapped=()
junk=()
for f in "${overlay[@]}"; do
	case ${f##*/} in
	.* | *~ | *.orig | *.rej | *.swp | *.o | *.pyc)
		junk+=("$f")
		continue ;;
	esac
	hit=
	for row in "${MAP[@]}"; do
		key=$(resolve "${row%% *}")
		pat=${row#* }
		# shellcheck disable=SC2053  # $pat is a pattern on purpose
		if [[ $f == $pat ]]; then
			hit=$key
			break
		fi
	done
	if [ -z "$hit" ]; then
		unmapped+=("$f")
	else
		files_of[$hit]+="$f"$'\n'
	fi
done
if [ "${#junk[@]}" -gt 0 ]; then
	printf 'error: editor or build leftovers in the overlay (kernel-src.sh would copy them too):\n' >&2
	printf '  %s\n' "${junk[@]}" >&2
	exit 1
fi
if [ "${#unmapped[@]}" -gt 0 ]; then
	printf 'error: not assigned to any commit (add a row to MAP in %s):\n' "$0" >&2
	printf '  %s\n' "${unmapped[@]}" >&2
	exit 1
fi

# Path of an overlay file inside the kernel tree.
tree_path() {
	case $1 in
	kernel/*) echo "${1#kernel/}" ;;
	*) echo "$1" ;;
	esac
}

# --- build the commits in a throwaway worktree ----------------------------

log "checking out pristine 6.12 into a temporary worktree"
git -C "$REGIONPM_SRC" worktree add -q --detach "$wt" pristine
g() { git -C "$wt" -c core.hooksPath=/dev/null -c core.autocrlf=false "$@"; }

# Identity for extra commits: the author of the first patch.
first_author=
first_email=

commit_with() { # name email date msgfile
	GIT_AUTHOR_NAME=$1 GIT_AUTHOR_EMAIL=$2 GIT_COMMITTER_NAME=$1 \
		GIT_COMMITTER_EMAIL=$2 GIT_AUTHOR_DATE=$3 GIT_COMMITTER_DATE=$3 \
		g commit -q --allow-empty-message -F "$4"
}

date_now=${SOURCE_DATE_EPOCH:+@$SOURCE_DATE_EPOCH}
date_now=${date_now:-$(date -R)}

for c in "${commits[@]}"; do
	msg="$tmp/msg"
	if in_list "$c" "${patches[@]}"; then
		pf="$REGIONPM_TOP/kernel/patches/$c"
		git mailinfo "$tmp/body" "$tmp/diff" < "$pf" > "$tmp/info"
		author=$(sed -n 's/^Author: //p' "$tmp/info")
		email=$(sed -n 's/^Email: //p' "$tmp/info")
		subject=$(sed -n 's/^Subject: //p' "$tmp/info")
		date=$(sed -n 's/^Date: //p' "$tmp/info")
		[ -n "$author" ] || die "$c: no From: header"
		[ -n "$subject" ] || die "$c: no Subject: header"
		{ printf '%s\n\n' "$subject"; cat "$tmp/body"; } > "$msg"
		if [ -s "$tmp/diff" ]; then
			if ! g apply --index "$tmp/diff" 2>"$tmp/apply.err"; then
				# kernel-src.sh applies with patch(1), which allows fuzz.
				log "warning: $c does not apply exactly; retrying with patch -p1"
				cat "$tmp/apply.err" >&2
				(cd "$wt" && patch -p1 -s -N --no-backup-if-mismatch \
					-i "$tmp/diff") || die "patch $c does not apply"
				g add -A
			fi
		fi
		log "commit $c"
	else
		[ -n "$first_author" ] || die "extra commit '$c' needs a patch before it"
		author=$first_author
		email=$first_email
		date=
		printf '%s\n\n%s\n\nSigned-off-by: %s <%s>\n' "${EXTRA_SUBJECT[$c]}" \
			"${EXTRA_BODY[$c]}" "$author" "$email" > "$msg"
		log "commit (extra) ${EXTRA_SUBJECT[$c]}"
	fi
	if [ -z "$first_author" ]; then
		first_author=$author
		first_email=$email
	fi
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		t=$(tree_path "$f")
		if g cat-file -e "HEAD:$t" 2>/dev/null; then
			log "note: $t already exists in the tree; the overlay replaces it"
		fi
		mkdir -p "$wt/$(dirname "$t")"
		cp "$REGIONPM_TOP/$f" "$wt/$t"
		g add -f -- "$t"
	done <<< "${files_of[$c]:-}"
	if g diff --cached --quiet; then
		die "commit $c would be empty"
	fi
	commit_with "$author" "$email" "${date:-$date_now}" "$msg"
done
[ -z "$(g status --porcelain)" ] || {
	g status --short >&2
	die "stray changes left in the worktree"
}

# --- export and check -----------------------------------------------------

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.patch
g format-patch -q -o "$out" pristine..HEAD
mapfile -t series_out < <(ls "$out"/*.patch)
log "wrote ${#series_out[@]} patches to $out"

# checkpatch validates SPDX license ids with scripts/spdxcheck.py, which
# needs the python modules ply and git (Debian: python3-ply python3-git);
# without them it silently accepts any id.  Use a python3 that has them.
spdx_ok=0
for py in "$(command -v python3 || true)" /usr/bin/python3; do
	if [ -n "$py" ] && "$py" -c 'import ply, git' 2>/dev/null; then
		mkdir -p "$tmp/bin"
		ln -sf "$py" "$tmp/bin/python3"
		spdx_ok=1
		break
	fi
done
[ "$spdx_ok" = 1 ] ||
	log "warning: python3 lacks ply/git: SPDX license ids are NOT checked (install python3-ply python3-git)"

report="$tmp/checkpatch.txt"
log "running checkpatch.pl --strict"
set +e
(cd "$wt" && PATH="$tmp/bin:$PATH" ./scripts/checkpatch.pl --strict "${series_out[@]}") > "$report" 2>&1
set -e
cat "$report"
cp "$report" "$out/checkpatch.txt"

# checkpatch prints one "total:" line per file, in argument order.
errors=0 warnings=0 checks=0 i=0
echo
echo "checkpatch --strict summary:"
while read -r _ e _ w _ c _; do
	printf '  %-70s %3d errors %3d warnings %3d checks\n' \
		"$(basename "${series_out[$i]}")" "$e" "$w" "$c"
	errors=$((errors + e)) warnings=$((warnings + w)) checks=$((checks + c))
	i=$((i + 1))
done < <(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks, .*/total: \1 errors \2 warnings \3 checks/p' "$report")
[ "$i" -eq "${#series_out[@]}" ] ||
	die "checkpatch reported on $i of ${#series_out[@]} patches (see $out/checkpatch.txt)"
printf '  %-70s %3d errors %3d warnings %3d checks\n' total "$errors" "$warnings" "$checks"
if [ "$errors" -ne 0 ] || [ "$warnings" -ne 0 ]; then
	echo "series is NOT clean: fix the errors and warnings above" >&2
	exit 1
fi
echo "series is clean (no errors, no warnings)"
[ "$spdx_ok" = 1 ] || echo "(SPDX license ids were not validated, see above)"
