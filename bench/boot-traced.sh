#!/bin/sh
# Build the benchmark binaries and image (no bonnie++, no libfuse) in
# OUTDIR, boot the benchmark kernel with GUEST_SMP (4) CPUs under -icount
# (BENCH_ICOUNT=0: on the accelerator ci/pick-accel.sh picks, KVM or
# multi-threaded TCG, where the vCPUs run side by side) and run one of
# the trace-reading guest scripts there; shared by bench/waits.sh,
# bench/create-tail.sh and bench/dirlock.sh. The guest's output goes to
# OUTDIR/NAME.txt, its table (the lines that are not "bench: ...") to
# OUTDIR/NAME.md, which is printed. Exits with the guest's status.
# Usage: sh bench/boot-traced.sh OUTDIR NAME SCRIPT [VAR...]
#   SCRIPT and VAR as for bench/boot-guest.sh.
# Environment: BENCH_ICOUNT (1), BENCH_KERNEL, BENCH_UAPI_INCLUDE,
#   GUEST_SMP, GUEST_TIMEOUT, QEMU_ACCEL: as for bench/run.sh.
set -eu
out=$1 name=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$here")"
bzimage=${BENCH_KERNEL:-build/obj-bench/arch/x86/boot/bzImage}
stage=$out/stage
initrd=$out/initramfs.cpio.gz

if [ ! -f "$bzimage" ]; then
	echo "$name: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi
# The guest scripts drive fio; bench/build.sh leaves out what is missing
command -v fio >/dev/null || {
	echo "$name: installing fio"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio
}
BENCH_BONNIE=0 BENCH_LIBFUSE=0 sh bench/build.sh "$stage"
sh initramfs/build.sh "$initrd" "$stage"

mkdir -p "$out"
GUEST_SMP=${GUEST_SMP:-4}
BENCH_ICOUNT=${BENCH_ICOUNT:-1}
export GUEST_SMP BENCH_ICOUNT
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/$name.txt" "$@"
status=$?
set -e
grep -v '^bench:' "$out/$name.txt" >"$out/$name.md" || true
cat "$out/$name.md"
exit "$status"
