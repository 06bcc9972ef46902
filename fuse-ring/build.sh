#!/bin/sh
# Build libfuse-ring (.a and .so), its pkg-config file and the example
# passthrough_ring into OUT (default /work/main/build/fuse-ring-out).
# Usage: fuse-ring/build.sh [OUT]
# Needs libfuse3-dev and liburing-dev; the kernel uAPI headers of the
# patched tree (FUSE 7.42) come from build/obj-hdr, made if missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${1:-$repo/build/fuse-ring-out}
hdr=$repo/build/obj-hdr/usr/include
CC=${CC:-cc}

if ! grep -q FUSE_OVER_IO_URING "$hdr/linux/fuse.h" 2>/dev/null; then
	make -s -C "$repo/build/linux" O="$repo/build/obj-hdr" ARCH=x86_64 headers
fi
for pkg in fuse3 liburing; do
	pkg-config --exists "$pkg" || { echo "build.sh: $pkg development files missing" >&2; exit 1; }
done

mkdir -p "$out/obj" "$out/lib/pkgconfig" "$out/include" "$out/bin"
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -pthread -isystem $hdr $(pkg-config --cflags fuse3 liburing)"
LIBS="$(pkg-config --libs fuse3 liburing) -pthread"

objs=
for src in fuse_ring_session fuse_ring_queue fuse_ring_request fuse_ring_hash fuse_ring_cpus; do
	# shellcheck disable=SC2086
	$CC $CFLAGS -fvisibility=hidden -c "$here/$src.c" -o "$out/obj/$src.o"
	objs="$objs $out/obj/$src.o"
done
rm -f "$out/lib/libfuse-ring.a"
# shellcheck disable=SC2086
ar rcs "$out/lib/libfuse-ring.a" $objs
# shellcheck disable=SC2086
$CC -shared -Wl,-soname,libfuse-ring.so.0 -o "$out/lib/libfuse-ring.so.0" $objs $LIBS
ln -sf libfuse-ring.so.0 "$out/lib/libfuse-ring.so"
# The preload: the same objects plus the interposers, exporting only
# libfuse's session calls, under libfuse's own symbol versions.
cat >"$out/obj/preload.map" <<'EOF'
FUSE_3.0 { global: fuse_session_mount; fuse_session_unmount; fuse_session_loop;
	fuse_session_receive_buf; fuse_session_loop_mt; local: *; };
FUSE_3.2 { global: fuse_session_loop_mt_31; fuse_session_loop_mt_32; } FUSE_3.0;
FUSE_3.12 { global: fuse_session_loop_mt_312; } FUSE_3.2;
EOF
# shellcheck disable=SC2086
$CC $CFLAGS -c "$here/fuse_ring_preload.c" -o "$out/obj/fuse_ring_preload.o"
# shellcheck disable=SC2086
$CC -shared -Wl,-soname,libfuse-ring-preload.so -Wl,--version-script="$out/obj/preload.map" \
	-o "$out/lib/libfuse-ring-preload.so" "$out/obj/fuse_ring_preload.o" $objs $LIBS -ldl
cp "$here/fuse_ring.h" "$out/include/"
sed "s|@PREFIX@|$out|" "$here/fuse-ring.pc.in" >"$out/lib/pkgconfig/fuse-ring.pc"

# The example links the static library (no rpath needed in the guest),
# taking its flags from the .pc file as a user of the library would.
# shellcheck disable=SC2086
$CC $CFLAGS -o "$out/bin/passthrough_ring" "$here/passthrough_ring.c" \
	$(PKG_CONFIG_PATH="$out/lib/pkgconfig" pkg-config --cflags --static fuse-ring) \
	"$out/lib/libfuse-ring.a" $LIBS
# shellcheck disable=SC2086
$CC $CFLAGS -o "$out/bin/xattr_tool" "$here/xattr_tool.c"
echo "build.sh: built $out/lib/libfuse-ring.{a,so}, $out/lib/libfuse-ring-preload.so, $out/lib/pkgconfig/fuse-ring.pc, $out/bin/passthrough_ring, $out/bin/xattr_tool"
