# Run in the guest by make check-flakes (booted with 4 CPUs; ci/check-flakes.sh
# sets FLAKES_RUNS before this): take CPUs 2 and 3 offline, as make check
# does, then run the race and stress kselftests FLAKES_RUNS times each, in
# turns, and print a line "flakes: pass|fail|skip TEST" per test and turn.
# A failed program's output follows its lines; each program's start goes to
# the console too, so that a kernel report there names the test it came in.
for cpu in 2 3; do
	echo 0 >/sys/devices/system/cpu/cpu$cpu/online || exit 1
done
cd /kselftest/filesystems/fuse || exit 1
runs=${FLAKES_RUNS:-20}

# PROGRAM [kselftest_harness filters]: all of fuse_uring_race_test; of the
# others, the stress runs, the tests that race set-up or teardown, the
# tests whose server goes away (its rings' teardown is asynchronous) or
# execs, the forgets' wake-up count, the batch waits, the READs served
# by another CPU's queue (spread: stalls and a bound), the polling readers
# and the CPUs that come online. A filter that selects no test prints
# "flakes: fail filter:ARG": a renamed test must not drop out silently.
tests='fuse_uring_race_test
fuse_uring_test -t stress_random_ops -t concurrent_register -t abort_races_register -t register_same_buffers_concurrent -t teardown_ring_closed -t teardown_server_exits -t kill_server_in_read -t kill_server_in_write -t kill_server_in_readdir -t kill_server_idle -t forgets_all_arrive_gathered
fuse_uring_setup_test -t server_killed_with_request_in_flight -t rings_closed_then_device -f shared_ring_exit -f batch_wait
fuse_uring_resend_test
fuse_uring_queues_test -t queue_exit_hands_cpu_over -t waiting_requests_move_to_new_queue -t closed_ring_hands_cpu_over_fetched_request_waits_for_resend -f spread -f spread_queue_loss
fuse_uring_fault_test
fuse_dev_poll_test
fuse_uring_cpu_online_test
fuse_smoke_test -t stress -r server_process.server_death'

out=/tmp/flakes.out
i=1
while [ "$i" -le "$runs" ]; do
	echo "$tests" | while read -r prog args; do
		echo "<2>flakes: turn $i: $prog" >/dev/kmsg
		start=$(date +%s)
		# shellcheck disable=SC2086
		timeout -k 10 1800 "./$prog" $args </dev/null >"$out" 2>&1
		rc=$?
		echo "flakes: turn $i: $prog took $(( $(date +%s) - start ))s (exit $rc)"
		awk '/^ok [0-9]+ /     { print "flakes: " ($0 ~ /# SKIP/ ? "skip " : "pass ") $3 }
		     /^not ok [0-9]+ / { print "flakes: " ($0 ~ /# SKIP/ ? "skip " : "fail ") $4 }' "$out"
		set -- $args
		while [ "$#" -ge 2 ]; do
			case $1 in
			-t) re="[^ ]*\\.$2" ;;
			-f) re="$2\\.[^ ]*" ;;
			*) re="$2" ;;
			esac
			grep -Eq "^(not )?ok [0-9]+ $re( |\$)" "$out" ||
				echo "flakes: fail filter:$1:$2"
			shift 2
		done
		if [ "$rc" -ne 0 ]; then
			echo "flakes: --- output of $prog, turn $i"
			cat "$out"
			echo "flakes: --- end"
		fi
	done
	i=$(( i + 1 ))
done
exit 0
