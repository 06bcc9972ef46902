#!/bin/sh
# Boot the benchmark kernel and run one of the bench/ guest scripts in it;
# shared by bench/run.sh, bench/profile.sh and bench/memory.sh.
# Usage: sh bench/boot-guest.sh BZIMAGE INITRD OUTFILE SCRIPT [VAR...]
#   SCRIPT runs as "sh /bench/SCRIPT", with each VAR set in the environment
#   passed in its command line. Its output goes to OUTFILE, the console to
#   console.log beside it. Exits with the guest's status.
#   While the guest runs, its "bench: ..." lines (what it is doing, errors)
#   are shown on stderr as they come; a progress line "bench: [K/N] ..."
#   (run K of N is starting) gets an estimate of the time left, from the
#   host's wall clock per run so far.
# Environment: BENCH_ICOUNT=1 (QEMU -icount shift=0,sleep=off on
#   single-threaded TCG: one virtual ns per guest instruction), GUEST_SMP
#   (2), GUEST_TIMEOUT (3600), QEMU_ACCEL: as for ci/run-guest.sh.
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

# Show the guest's "bench: " lines from stdin, not the others; to progress
# lines "bench: [K/N] ..." add the time left: the host time since the first
# of them, per run ended since, times the runs left (this one included).
show_progress() {
	cr=$(printf '\r')
	first_run='' first_time=''
	while IFS= read -r line; do
		line=${line%"$cr"}
		case $line in
		"bench: ["[0-9]*/[0-9]*"] "*) ;;
		"bench: "*)
			echo "$line" >&2
			continue
			;;
		*) continue ;;
		esac
		counter=${line#"bench: ["}
		counter=${counter%%"]"*}
		run=${counter%/*} runs=${counter#*/}
		now=$(date +%s)
		if [ -z "$first_run" ] || [ "$run" -le "$first_run" ]; then
			first_run=$run first_time=$now
			echo "$line" >&2
			continue
		fi
		left=$(((now - first_time) * (runs - run + 1) /
			(run - first_run)))
		if [ "$left" -lt 90 ]; then
			echo "$line (about $left s left)" >&2
		else
			echo "$line (about $(((left + 30) / 60)) min left)" >&2
		fi
	done
}

# The guest writes its output to $live as it runs (ci/run-guest.sh's
# GUEST_OUT); follow it until run-guest.sh exits, then take its status.
# (No awk in the pipe: mawk would hold the lines back until its input
# buffer fills.)
live=$(mktemp)
trap 'rm -f "$live"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "bench: guest command: $cmd" >&2
GUEST_SMP=${GUEST_SMP:-2} GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600} \
	GUEST_LOG=$(dirname "$outfile")/console.log GUEST_OUT=$live \
	sh ci/run-guest.sh "$bzimage" "$initrd" "$cmd" >"$outfile" &
guest=$!
tail -n +1 -f --pid="$guest" "$live" | show_progress
status=0
wait "$guest" || status=$?
exit "$status"
