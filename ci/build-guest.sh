#!/bin/sh
# Build the guest kernel (bzImage) from the patched tree.
# Usage: ci/build-guest.sh TREE OBJDIR CONFIG_FRAGMENT
set -eu
mkdir -p "$2"
tree=$(cd "$1" && pwd) obj=$(cd "$2" && pwd) fragment=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
kmake() { make -s -C "$tree" O="$obj" ARCH=x86_64 CC="ccache gcc" "$@"; }

kmake tinyconfig >/dev/null
"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >/dev/null
kmake olddefconfig >/dev/null
# Every option of the fragment must survive olddefconfig, or the guest does
# not test what we think it tests.
bad=$(grep -E '^CONFIG_|^# CONFIG_.* is not set$' "$fragment" | while IFS= read -r line; do
	grep -qx "$line" "$obj/.config" || echo "$line"
done)
if [ -n "$bad" ]; then
	echo "build-guest: these options of $fragment did not stick:" >&2
	echo "$bad" >&2
	exit 1
fi
kmake -j"$(nproc)" bzImage
