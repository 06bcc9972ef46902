#!/bin/sh
# Where one job's slowest creates go, from trace events: build the
# benchmark binaries and image, boot the benchmark kernel under -icount
# and run bench/create-tail-in-guest.sh there: fuse_bench_load's create
# with one job, no backend latency, over dev-N and over the ring. Prints
# per transport the load's p50/p99, the p50/p99/p99.9 of the ops as the
# trace spans them (one LOOKUP to the next), the share of ops during
# which the server's /dev/fuse thread ran (over the ring it receives the
# forgets, which the kernel holds back for a batch), and the p99 of the
# others.
# Usage: sh bench/create-tail.sh   (make create-tail)
# Environment: CT_OPS (3000), CT_TRANSPORTS ("dev-N uring"), GUEST_SMP
#   (4); BENCH_ICOUNT (1; 0: KVM or TCG with the vCPUs side by side, as
#   for bench/boot-traced.sh), BENCH_KERNEL, BENCH_UAPI_INCLUDE,
#   GUEST_TIMEOUT, QEMU_ACCEL: as for bench/run.sh; BENCH_OUT
#   (build/bench-create-tail).
set -eu
cd "$(dirname "$0")/.."
exec sh bench/boot-traced.sh "${BENCH_OUT:-build/bench-create-tail}" \
	create-tail create-tail-in-guest.sh CT_OPS CT_TRANSPORTS
