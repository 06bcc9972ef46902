#!/bin/sh
# The benchmark, start to end: install what is missing, build the benchmark
# binaries, build the guest initramfs with them, boot the patched kernel
# (built beforehand by "make bench-kernel", or BENCH_KERNEL) and run bench/run-in-guest.sh in it,
# showing its progress as it runs (bench/boot-guest.sh: run K of N, which
# round, configuration, workload and job count, and the time left), then
# save the raw TSV to build/bench/raw.tsv, summarise it
# (build/bench/summary.{tsv,md,png}, cost.tsv), print the markdown tables
# and the list of files written.
# Usage: sh bench/run.sh   (from anywhere; paths are relative to the repo)
# Environment:
#   BENCH_ROUNDS, BENCH_SECONDS, BENCH_WORKLOADS, BENCH_TRANSPORTS,
#   BENCH_PIN, BENCH_DEPTH, BENCH_BONNIE_FILES, BENCH_POLL_US, BENCH_COST,
#   BENCH_LATENCY_US, BENCH_ASYNC_DIO, BENCH_WRITEBACK:
#     passed to run-in-guest.sh
#   BENCH_ICOUNT=1 (the default under TCG; 0 under KVM): deterministic
#     guest clock (-icount shift=0,sleep=off,
#     single-threaded TCG: one virtual ns per guest instruction, so host
#     load no longer shows in the figures; about 10x slower in wall time,
#     hence 1 round of 1 s runs unless BENCH_ROUNDS/BENCH_SECONDS say
#     otherwise). shift=5 makes the debug kernel so slow in virtual time
#     that the soft-lockup watchdog fires while the initramfs unpacks.
#     Needs ci/run-guest.sh to pass $QEMU_EXTRA_ARGS to qemu.
#     Turns BENCH_COST on unless BENCH_COST=0.
#   BENCH_COST=1: the cost per operation table (instructions, context
#     switches, IPIs; unpinned and with everything on CPU 0) in summary.md
#   GUEST_SMP (2), GUEST_TIMEOUT (3600), QEMU_ACCEL: as for ci/run-guest.sh
#   BENCH_OUT: where the results go (build/bench), with the staged
#     binaries (stage/) and the guest image (initramfs.cpio.gz)
#   BENCH_FIO=0, BENCH_BONNIE=0: leave fio / bonnie++ out of the image
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
# Under TCG wall-clock figures swing with the host's load, so the default
# there is the deterministic clock; under KVM it is the wall clock.
if [ -z "${BENCH_ICOUNT:-}" ]; then
	case $(sh ci/pick-accel.sh) in
	kvm*) BENCH_ICOUNT=0 ;;
	*) BENCH_ICOUNT=1 ;;
	esac
fi
export BENCH_ICOUNT
if [ "$BENCH_ICOUNT" = 1 ]; then
	echo "bench: guest clock: -icount, guest instructions (BENCH_ICOUNT=0 for wall clock)"
else
	echo "bench: guest clock: host wall clock (BENCH_ICOUNT=1 for -icount)"
fi
bzimage=${BENCH_KERNEL:-build/obj-guest/arch/x86/boot/bzImage}
out=${BENCH_OUT:-build/bench}
stage=$out/stage
initrd=$out/initramfs.cpio.gz

missing=
command -v bonnie++ >/dev/null || missing="$missing bonnie++"
command -v fio >/dev/null || missing="$missing fio"
command -v gnuplot >/dev/null || missing="$missing gnuplot-nox"
dpkg -s liburing-dev >/dev/null 2>&1 || missing="$missing liburing-dev"
if [ -n "$missing" ]; then
	echo "bench: installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi

if [ ! -f "$bzimage" ]; then
	echo "bench: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi

sh bench/build.sh "$stage"
sh initramfs/build.sh "$initrd" "$stage"

if [ "${BENCH_ICOUNT:-0}" = 1 ]; then
	BENCH_ROUNDS=${BENCH_ROUNDS:-1}
	BENCH_SECONDS=${BENCH_SECONDS:-1}
	BENCH_COST=${BENCH_COST:-1}
	export BENCH_ROUNDS BENCH_SECONDS BENCH_COST
fi

mkdir -p "$out"
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/guest-out.txt" \
	run-in-guest.sh BENCH_ROUNDS BENCH_SECONDS BENCH_WORKLOADS \
	BENCH_TRANSPORTS BENCH_PIN BENCH_DEPTH BENCH_BONNIE_FILES BENCH_POLL_US \
	BENCH_COST BENCH_LATENCY_US BENCH_ASYNC_DIO BENCH_WRITEBACK
status=$?
set -e
# result rows: "ROUND\t..." and "cost\t..."; the "bench: " lines were
# shown as the guest ran, the rest (tools' errors) is shown here
rows="$(printf '^([0-9]+|cost)\t')"
grep -Ev "$rows" "$out/guest-out.txt" | grep -v '^bench: ' || true
grep -E "$rows" "$out/guest-out.txt" >"$out/raw.tsv" || true
if [ ! -s "$out/raw.tsv" ]; then
	echo "bench: no results (guest status $status); see" \
		"$out/guest-out.txt and $out/console.log" >&2
	exit 1
fi
# Every table of the summary comes from this one boot: say how it ran.
if [ "${BENCH_ICOUNT:-0}" = 1 ]; then
	accel="${QEMU_ACCEL:-tcg,thread=single}, -icount shift=0"
else
	accel=$(sh ci/pick-accel.sh)
fi
rm -f "$out/summary.png"	# a picture only if gnuplot draws this one
BENCH_ACCEL=$accel sh bench/summarize.sh "$out/raw.tsv" "$out"
{ printf 'Guest accelerator: %s\n\n' "$accel"; cat "$out/summary.md"; } >"$out/summary.md.new"
mv "$out/summary.md.new" "$out/summary.md"
echo
cat "$out/summary.md"
echo
echo "bench: files written:"
for f in raw.tsv summary.tsv summary.md summary.png cost.tsv guest-out.txt \
    console.log; do
	if [ -s "$out/$f" ]; then echo "  $out/$f"; fi
done
if [ -s "$out/summary.png" ]; then
	echo "bench: the picture to look at: $out/summary.png" \
		"(ops/s of each configuration relative to dev-1)"
else
	echo "bench: no picture (gnuplot missing or no data)"
fi
if [ "$status" -ne 0 ]; then
	echo "bench: the guest run failed (status $status); see above and $out/console.log" >&2
	exit "$status"
fi
