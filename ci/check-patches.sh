#!/bin/sh
# make check-patches: what each patch of series/ must be on its own. Apply
# the patches one by one to the pristine source, in a scratch worktree of
# TREE, and after each one build fs/fuse/ with W=1 and sparse (C=1), with
# the io_uring transport on (ci/patches-on.config: its KUnit tests and
# trace events too) and off (ci/patches-off.config); a warning about
# fs/fuse fails the patch. Then run checkpatch --strict on it and print
# what it reports, which the cover letters account for.
# Usage: ci/check-patches.sh TREE SERIES_DIR OBJ_PREFIX
set -eu
tree=$(cd "$1" && pwd) series=$(cd "$2" && pwd)
mkdir -p "$3-on" "$3-off"
objs="$(cd "$3-on" && pwd) $(cd "$3-off" && pwd)"
ci=$(cd "$(dirname "$0")" && pwd)
scratch=$tree.patches
git -C "$tree" worktree remove --force "$scratch" 2>/dev/null || rm -rf "$scratch"
git -C "$tree" worktree add -q --detach "$scratch" debian-base
trap 'git -C "$tree" worktree remove --force "$scratch"' EXIT
kmake() { make -s -C "$scratch" O="$obj" ARCH=x86_64 CC="ccache gcc" "$@"; }
rm -f "$3-on/.config" "$3-off/.config"

# The fragment goes on again after every patch: the symbols the series
# adds exist only from the patch that adds them.
configure() {	# obj
	obj=$1
	case $1 in
	*-on) frag=$ci/patches-on.config want='CONFIG_FUSE_IO_URING=y' ;;
	*) frag=$ci/patches-off.config want='# CONFIG_FUSE_IO_URING is not set' ;;
	esac
	[ -f "$1/.config" ] || kmake tinyconfig >/dev/null
	"$scratch/scripts/kconfig/merge_config.sh" -m -O "$1" "$1/.config" "$frag" >/dev/null
	kmake olddefconfig >/dev/null
	if grep -q '^config FUSE_IO_URING$' "$scratch/fs/fuse/Kconfig"; then
		grep -qx "$want" "$1/.config"
	fi
}

failed=0 n=0
while IFS= read -r patch; do
	case $patch in ''|'#'*) continue ;; esac
	n=$((n + 1))
	git -C "$scratch" am -q "$series/$patch"
	status=ok
	for obj in $objs; do
		configure "$obj"
		log=$obj/build.log
		if ! kmake -j"$(nproc)" W=1 C=1 fs/fuse/ >"$log" 2>&1; then
			status="build failed (${obj##*-})"
		elif grep -q 'fs/fuse/' "$log"; then
			status="warnings (${obj##*-})"
		fi
		if [ "$status" != ok ]; then
			sed -n '1,30p' "$log"
			failed=$((failed + 1))
			break
		fi
	done
	cp=$("$scratch/scripts/checkpatch.pl" --strict --no-tree -q \
		"$series/$patch" | sed -n 's/^\(ERROR\|WARNING\|CHECK\): \(.*\)/\1: \2/p' |
		sort | uniq -c | sed 's/^ */    /')
	echo "check-patches: $patch: $status"
	[ -z "$cp" ] || echo "$cp"
done <"$series/series"
echo "check-patches: $((n - failed)) of $n patches build clean"
[ "$failed" -eq 0 ]
