#!/bin/sh
# The backend latency family of the benchmark: the server waits
# BENCH_LATENCY_US (200) in the thread serving each request, as a file
# system on a disk or a network does, and accepts FUSE_ASYNC_DIO and
# FUSE_WRITEBACK_CACHE as libfuse servers do; the workloads are the ones
# where one caller has many requests in flight: 1 MiB sequential buffered
# reads (readahead), 1 MiB O_DIRECT reads and writes (async DIO), 1 MiB
# buffered writes (writeback cache, an fsync every 8 MiB) and fio's libaio
# 4 KiB random reads at queue depth 16. One -icount boot per guest CPU count
# (LATENCY_SMP, "2 4"): the guest's clock skips the time every thread
# sleeps, so sleeps that overlap show as parallelism and the figures do not
# depend on the host's load.
# Usage: sh bench/run-latency.sh   (make run-latency)
# Output: LATENCY_OUT/smpN/ (BENCH_OUT of bench/run.sh; LATENCY_OUT is
# build/bench-latency), with summary.md per boot.
# Environment: LATENCY_SMP, BENCH_LATENCY_US, BENCH_WORKLOADS,
# BENCH_TRANSPORTS (dev-1 dev-N uring uring-1q), BENCH_SECONDS (1),
# BENCH_KERNEL: as for bench/run.sh.
set -eu
cd "$(dirname "$0")/.."
status=0
for smp in ${LATENCY_SMP:-2 4}; do
	echo "bench: backend latency family, $smp guest CPUs"
	BENCH_ICOUNT=1 BENCH_COST=${BENCH_COST:-0} GUEST_SMP=$smp \
	BENCH_OUT=${LATENCY_OUT:-build/bench-latency}/smp$smp \
	BENCH_LATENCY_US=${BENCH_LATENCY_US:-200} BENCH_ASYNC_DIO=1 \
	BENCH_WRITEBACK=1 \
	BENCH_WORKLOADS=${BENCH_WORKLOADS:-seqread-1m seqread-1m-direct \
seqwrite-1m-direct seqwrite-1m-fsync fio-libaio-qd16} \
	BENCH_TRANSPORTS=${BENCH_TRANSPORTS:-dev-1 dev-N uring uring-1q} \
		sh bench/run.sh || status=1
done
exit "$status"
