#!/bin/sh
# Build the guest kernel (bzImage) from the patched tree: x86_64 tinyconfig
# plus the config fragments given, in order.
# Usage: ci/build-guest.sh TREE OBJDIR FRAGMENT...
set -eu
mkdir -p "$2"
tree=$(cd "$1" && pwd) obj=$(cd "$2" && pwd)
shift 2
fragments=
for f in "$@"; do
	fragments="$fragments $(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
done
kmake() { make -s -C "$tree" O="$obj" ARCH=x86_64 CC="ccache gcc" "$@"; }

kmake tinyconfig >/dev/null
# shellcheck disable=SC2086
"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $fragments >/dev/null
kmake olddefconfig >/dev/null
# Every option of the fragments must survive olddefconfig, or the guest
# does not test what we think it tests. Where fragments set an option
# twice, the later one counts, as in merge_config.sh.
# shellcheck disable=SC2086
bad=$(cat $fragments | grep -E '^CONFIG_|^# CONFIG_.* is not set$' |
	awk '{ s = $0; sub(/^# /, "", s); sub(/[= ].*/, "", s); last[s] = $0; order[NR] = s }
	     END { for (i = 1; i <= NR; i++) if (!done[order[i]]++) print last[order[i]] }' |
	while IFS= read -r line; do
	grep -qx "$line" "$obj/.config" || echo "$line"
done)
if [ -n "$bad" ]; then
	echo "build-guest: these options of$fragments did not stick:" >&2
	echo "$bad" >&2
	exit 1
fi
kmake -j"$(nproc)" bzImage

# A kernel with modules: build them and pack the file systems' (fuse.ko;
# the tests need no other) for the guest's /lib/modules, where its init
# loads them (initramfs/init); ci/run-guest.sh appends the archive when it
# is next to the kernel's objects.
if grep -qx CONFIG_MODULES=y "$obj/.config"; then
	kmake -j"$(nproc)" modules
	mods=$(mktemp -d)
	mkdir -p "$mods/lib/modules"
	find "$obj/fs" -name '*.ko' -exec cp {} "$mods/lib/modules/" \;
	(cd "$mods" && find . | cpio -o -H newc --quiet) | gzip -1 >"$obj/modules.cpio.gz.new"
	rm -rf "$mods"
	mv "$obj/modules.cpio.gz.new" "$obj/modules.cpio.gz"
else
	rm -f "$obj/modules.cpio.gz"
fi
