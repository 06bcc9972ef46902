#!/bin/sh
# Where the guest's CPU time goes, per FUSE transport: build the benchmark
# image with Debian's perf in it, boot the benchmark kernel (make
# bench-kernel) under QEMU's -icount, so that guest time counts
# instructions, and run bench/profile-in-guest.sh there. Writes
# $BENCH_OUT/profile.txt (build/bench-profile) and prints the cost rows:
# per operation, guest time, CPU time (load tool, server), context
# switches and CPU migrations; and for the ring, from its trace events,
# the share of requests taken by the issuing CPU's own queue and by a
# server thread on the issuing CPU.
# Usage: sh bench/profile.sh   (make profile)
# Environment: BENCH_TRANSPORTS, BENCH_WORKLOADS, BENCH_OPS, BENCH_JOBS,
#   BENCH_DEPTH, BENCH_PIN, BENCH_POLL_US, BENCH_PERF_HZ, BENCH_PERF_LIMIT,
#   BENCH_PERF_GRAPH, and the backend latency family's BENCH_LATENCY_US,
#   BENCH_ASYNC_DIO, BENCH_WRITEBACK (see bench/run-latency.sh): passed to
#   profile-in-guest.sh;
#   BENCH_ICOUNT=0 for host time instead; BENCH_KERNEL, GUEST_SMP (2),
#   GUEST_TIMEOUT (3600), QEMU_ACCEL: as for bench/run.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
bzimage=${BENCH_KERNEL:-build/obj-bench/arch/x86/boot/bzImage}
stage=build/profile-stage
initrd=build/profile-initramfs.cpio.gz
out=${BENCH_OUT:-build/bench-profile}

if ! command -v perf >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf
fi
if [ ! -f "$bzimage" ]; then
	echo "profile: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi

BENCH_PERF=1 BENCH_FIO=0 BENCH_BONNIE=0 sh bench/build.sh "$stage"
sh initramfs/build.sh "$initrd" "$stage"

# -icount unless BENCH_ICOUNT=0: guest time counts instructions
BENCH_ICOUNT=${BENCH_ICOUNT:-1}
export BENCH_ICOUNT
mkdir -p "$out"
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/profile.txt" \
	profile-in-guest.sh BENCH_TRANSPORTS BENCH_WORKLOADS BENCH_OPS \
	BENCH_JOBS BENCH_PERF_HZ BENCH_PERF_LIMIT BENCH_PERF_GRAPH BENCH_DEPTH \
	BENCH_PIN BENCH_POLL_US BENCH_LATENCY_US BENCH_ASYNC_DIO BENCH_WRITEBACK
status=$?
set -e
printf 'workload\ttransport\tops\tus_per_op\tload_us\tserver_us\tcs_per_op\tmig_per_op\n'
grep "$(printf '^cost\t')" "$out/profile.txt" | cut -f2- || true
echo
echo "requests over the ring, from the fuse_uring_* trace events:"
printf 'workload\ttransport\trequests\town_queue_pct\tserved_on_issuing_cpu_pct\n'
grep "$(printf '^queues\t')" "$out/profile.txt" | cut -f2- || true
echo "profile: $out/profile.txt (perf report per configuration)"
exit "$status"
