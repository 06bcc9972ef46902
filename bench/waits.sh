#!/bin/sh
# Where the ring's READs wait, from its trace events: build the benchmark
# binaries and image, boot the benchmark kernel under -icount and run
# bench/waits-in-guest.sh there: fio's libaio 4 KiB random reads at queue
# depth 16 over the ring, with the backend latency family's server (a
# 200 us wait per request). Prints, per job count, fio's p50/p99 and, per
# READ, the time from queued to copied into an entry ("waiting") and from
# copied to committed ("in the server": the server's backend wait and the
# requests its thread serves first), and the share served by another
# queue than the one it was queued on.
# Usage: sh bench/waits.sh   (make waits)
# Environment: BENCH_JOBS ("1 N": N the guest's CPUs), BENCH_DEPTH (2),
#   BENCH_LATENCY_US (200), GUEST_SMP (4); BENCH_ICOUNT (1; 0: KVM or
#   TCG with the vCPUs side by side, as for bench/boot-traced.sh),
#   BENCH_KERNEL, BENCH_UAPI_INCLUDE, GUEST_TIMEOUT, QEMU_ACCEL: as for
#   bench/run.sh; BENCH_OUT (build/bench-waits).
set -eu
cd "$(dirname "$0")/.."
BENCH_LATENCY_US=${BENCH_LATENCY_US:-200}
BENCH_ASYNC_DIO=1
export BENCH_LATENCY_US BENCH_ASYNC_DIO
exec sh bench/boot-traced.sh "${BENCH_OUT:-build/bench-waits}" waits \
	waits-in-guest.sh BENCH_JOBS BENCH_DEPTH BENCH_LATENCY_US \
	BENCH_ASYNC_DIO
