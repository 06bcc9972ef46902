#!/bin/sh
# What creates in one directory by a job per CPU wait for, from trace
# events: build the benchmark binaries and image, boot the benchmark
# kernel under -icount (BENCH_ICOUNT=0: KVM, or TCG with the vCPUs side
# by side) and run bench/dirlock-in-guest.sh there:
# fuse_bench_load's create with a job per CPU, no backend latency, over
# dev-N and over the ring. Prints per transport the load's p50/p99, how
# many times its tasks waited for an rwsem (of them for writing), those
# waits' p50/p99/max, and how many lasted 1 ms or more; then, for all
# ops and for the slowest percent, where an op's time went on average:
# on a CPU, runnable, asleep in a lock's wait, asleep with a FUSE request
# out, asleep otherwise, and how many timer interrupts its CPU took while
# it ran there (about one per 4 ms at HZ=250 where the CPU really ran).
# Usage: sh bench/dirlock.sh   (make dirlock)
# Environment: DL_OPS (4000), DL_TRANSPORTS ("dev-N uring"), GUEST_SMP
#   (4); BENCH_ICOUNT (1), BENCH_KERNEL, BENCH_UAPI_INCLUDE,
#   GUEST_TIMEOUT, QEMU_ACCEL: as for bench/run.sh; BENCH_OUT
#   (build/bench-dirlock).
set -eu
cd "$(dirname "$0")/.."
exec sh bench/boot-traced.sh "${BENCH_OUT:-build/bench-dirlock}" \
	dirlock dirlock-in-guest.sh DL_OPS DL_TRANSPORTS
