#!/bin/sh
# Memory per connection of the io_uring ring with 1, 2 and every possible
# CPU's queue registered, against /dev/fuse (dev-1): build the benchmark
# binaries and image, boot the benchmark kernel and run
# bench/memory-in-guest.sh there. Writes $BENCH_OUT/memory.txt (the guest's
# output) and $BENCH_OUT/memory.md (the table), and prints the table.
# Usage: sh bench/memory.sh
# Environment: BENCH_MEM_MOUNTS (20), BENCH_ROUNDS (3), BENCH_DEPTH (2):
#   passed to memory-in-guest.sh; BENCH_KERNEL, BENCH_UAPI_INCLUDE,
#   GUEST_TIMEOUT, QEMU_ACCEL: as for bench/run.sh; GUEST_SMP (4, so
#   that "every possible CPU" differs from 2 queues: QEMU 7.2's hotplug
#   CPUs, -smp 2,maxcpus=8, do not count as possible on 6.12);
#   BENCH_OUT (build/bench-memory).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
bzimage=${BENCH_KERNEL:-build/obj-bench/arch/x86/boot/bzImage}
out=${BENCH_OUT:-build/bench-memory}
stage=$out/stage
initrd=$out/initramfs.cpio.gz

if [ ! -f "$bzimage" ]; then
	echo "memory: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi
BENCH_FIO=0 BENCH_BONNIE=0 BENCH_LIBFUSE=0 sh bench/build.sh "$stage"
sh initramfs/build.sh "$initrd" "$stage"

mkdir -p "$out"
GUEST_SMP=${GUEST_SMP:-4}
export GUEST_SMP
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/memory.txt" \
	memory-in-guest.sh BENCH_MEM_MOUNTS BENCH_ROUNDS BENCH_DEPTH
status=$?
set -e
sed -n '/^Memory per connection/,$p' "$out/memory.txt" | grep -v '^bench:' \
	>"$out/memory.md" || true
cat "$out/memory.md"
echo "memory: $out/memory.txt, $out/memory.md"
exit "$status"
