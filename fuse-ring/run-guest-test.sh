#!/bin/sh
# Host side: build fuse-ring, stage it into an initramfs with the repo's
# harness, boot the guest kernel and run test-in-guest.sh there.
# Usage: fuse-ring/run-guest-test.sh [BZIMAGE]
# Environment: GUEST_SMP, GUEST_TIMEOUT (see ci/run-guest.sh).
# Needs fuse-overlayfs, squashfuse, fuse3 and squashfs-tools (ci/install-deps.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
kernel=${1:-$repo/build/obj-guest/arch/x86/boot/bzImage}
out=$repo/build/fuse-ring-out
stage=$repo/build/fuse-ring-stage
cpio=$repo/build/fuse-ring-initramfs.cpio.gz

sh "$here/build.sh" "$out"
rm -rf "$stage"
mkdir -p "$stage/fuse-ring"
cp "$out/bin/passthrough_ring" "$out/bin/xattr_tool" "$here/test-in-guest.sh" "$stage/fuse-ring/"
# glibc dlopens libgcc_s for pthread_cancel (fuse_session_loop_mt's
# shutdown); ldd does not list it, so the harness would not copy it.
gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ { print $NF; exit }')
mkdir -p "$stage$(dirname "$gcc_s")"
cp -L "$gcc_s" "$stage$gcc_s"
cp "$out/lib/libfuse-ring-preload.so" "$stage/fuse-ring/"
# Debian's packaged file systems, run unmodified under the preload; the
# harness copies their libraries. The squashfs image is made here.
mkdir -p "$stage/usr/bin"
for b in fuse-overlayfs squashfuse squashfuse_ll fusermount3; do
	cp "$(command -v "$b")" "$stage/usr/bin/"
done
sh "$here/make-tree.sh" "$stage/fuse-ring/tree"
mksquashfs "$stage/fuse-ring/tree" "$stage/fuse-ring/tree.sqfs" -noappend -quiet -no-progress >/dev/null
sh "$repo/initramfs/build.sh" "$cpio" "$stage"
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} GUEST_LOG=${GUEST_LOG:-$repo/build/fuse-ring-console.log} \
	sh "$repo/ci/run-guest.sh" "$kernel" "$cpio" "FUSE_RING_ONLY='${FUSE_RING_ONLY:-}' sh /fuse-ring/test-in-guest.sh"
