#!/bin/sh
# Boot the benchmark kernel and run one of the bench/ guest scripts in it;
# shared by bench/run.sh and bench/profile.sh.
# Usage: sh bench/boot-guest.sh BZIMAGE INITRD OUTFILE SCRIPT [VAR...]
#   SCRIPT runs as "sh /bench/SCRIPT", with each VAR set in the environment
#   passed in its command line. Its output goes to OUTFILE, the console to
#   console.log beside it. Exits with the guest's status.
# Environment: BENCH_ICOUNT=1 (QEMU -icount shift=0,sleep=off on
#   single-threaded TCG: one virtual ns per guest instruction), GUEST_SMP
#   (2), GUEST_TIMEOUT (1800), QEMU_ACCEL: as for ci/run-guest.sh.
set -eu
bzimage=$1 initrd=$2 outfile=$3 script=$4
shift 4

# Settings for the guest script travel in its command line.
cmd=
for v in "$@"; do
	eval "isset=\${$v+x} val=\${$v-}"
	[ -n "$isset" ] && cmd="$cmd$v='$val' "
done
cmd="${cmd}sh /bench/$script"

if [ "${BENCH_ICOUNT:-0}" = 1 ]; then
	if ! grep -q QEMU_EXTRA_ARGS ci/run-guest.sh; then
		echo "bench: BENCH_ICOUNT=1 needs ci/run-guest.sh to pass" \
			"\$QEMU_EXTRA_ARGS to qemu" >&2
		exit 1
	fi
	# icount does not work with multi-threaded TCG
	QEMU_EXTRA_ARGS="-icount shift=0,sleep=off"
	QEMU_ACCEL=${QEMU_ACCEL:-tcg,thread=single}
	export QEMU_EXTRA_ARGS QEMU_ACCEL
fi

echo "bench: guest command: $cmd" >&2
GUEST_SMP=${GUEST_SMP:-2} GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} \
	GUEST_LOG=$(dirname "$outfile")/console.log \
	exec sh ci/run-guest.sh "$bzimage" "$initrd" "$cmd" >"$outfile"
