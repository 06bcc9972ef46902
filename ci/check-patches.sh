#!/bin/sh
# make check-patches: what each patch of series/ must be on its own. Apply
# the patches one by one to the pristine source, in a scratch worktree of
# TREE, and after each one build fs/fuse/ with W=1 and sparse (C=1), with
# the io_uring transport on (ci/patches-on.config: its KUnit tests and
# trace events too) and off (ci/patches-off.config), each with FUSE built
# in and as a module (ci/patches-module.config: fuse.ko is linked against
# a vmlinux built once, so that modpost checks every symbol it uses is
# exported); a warning about fs/fuse fails the patch. Then run checkpatch
# --strict on it and print what it reports, which the cover letters
# account for.
# Usage: ci/check-patches.sh TREE SERIES_DIR OBJ_PREFIX
# Environment: CHECK_PATCHES_FROM=N applies patches 1 to N-1 without
# building or checking them, to check again from patch N on after a fix;
# CHECK_PATCHES_TO=N stops after patch N (patches count from 1 in the
# order of series/series, both series together).
set -eu
from=${CHECK_PATCHES_FROM:-1} to=${CHECK_PATCHES_TO:-}
tree=$(cd "$1" && pwd) series=$(cd "$2" && pwd)
objs=
for kind in on off mod-on mod-off; do
	mkdir -p "$3-$kind"
	objs="$objs $(cd "$3-$kind" && pwd)"
done
ci=$(cd "$(dirname "$0")" && pwd)
scratch=$tree.patches
git -C "$tree" worktree remove --force "$scratch" 2>/dev/null || rm -rf "$scratch"
git -C "$tree" worktree add -q --detach "$scratch" debian-base
trap 'git -C "$tree" worktree remove --force "$scratch"' EXIT
kmake() { make -s -C "$scratch" O="$obj" ARCH=x86_64 CC="ccache gcc" "$@"; }
for obj in $objs; do
	rm -f "$obj/.config" "$obj/vmlinux"
done

# The fragment goes on again after every patch: the symbols the series
# adds exist only from the patch that adds them.
configure() {	# obj
	obj=$1
	case $1 in
	*-on) frag=$ci/patches-on.config want='CONFIG_FUSE_IO_URING=y' ;;
	*) frag=$ci/patches-off.config want='# CONFIG_FUSE_IO_URING is not set' ;;
	esac
	case $1 in
	*-mod-*) frag="$frag $ci/patches-module.config" ;;
	esac
	[ -f "$1/.config" ] || kmake tinyconfig >/dev/null
	# shellcheck disable=SC2086
	"$scratch/scripts/kconfig/merge_config.sh" -m -O "$1" "$1/.config" $frag >/dev/null
	kmake olddefconfig >/dev/null
	if grep -q '^config FUSE_IO_URING$' "$scratch/fs/fuse/Kconfig"; then
		grep -qx "$want" "$1/.config"
	fi
}

# Build fs/fuse in OBJ; as a module, link fuse.ko against vmlinux (built
# once: the series changes nothing that vmlinux exports).
build() {	# obj
	obj=$1
	case $1 in
	*-mod-*)
		[ -f "$1/vmlinux" ] || kmake -j"$(nproc)" vmlinux || return
		kmake -j"$(nproc)" W=1 C=1 modules
		;;
	*)
		kmake -j"$(nproc)" W=1 C=1 fs/fuse/
		;;
	esac
}

failed=0 n=0
while IFS= read -r patch; do
	case $patch in ''|'#'*) continue ;; esac
	[ -z "$to" ] || [ "$n" -lt "$to" ] || break
	n=$((n + 1))
	git -C "$scratch" am -q "$series/$patch"
	if [ "$n" -lt "$from" ]; then
		echo "check-patches: $patch: applied, not checked"
		continue
	fi
	status=ok
	for obj in $objs; do
		configure "$obj"
		log=$obj/build.log
		if ! build "$obj" >"$log" 2>&1; then
			status="build failed (${obj##*patches-})"
		elif grep -q 'fs/fuse/' "$log"; then
			status="warnings (${obj##*patches-})"
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
checked=$((n - from + 1))
echo "check-patches: $((checked - failed)) of $checked patches build clean"
[ "$failed" -eq 0 ]
