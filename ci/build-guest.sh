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
# does not test what we think it tests.
# shellcheck disable=SC2086
bad=$(cat $fragments | grep -E '^CONFIG_|^# CONFIG_.* is not set$' | while IFS= read -r line; do
	grep -qx "$line" "$obj/.config" || echo "$line"
done)
if [ -n "$bad" ]; then
	echo "build-guest: these options of$fragments did not stick:" >&2
	echo "$bad" >&2
	exit 1
fi
kmake -j"$(nproc)" bzImage
