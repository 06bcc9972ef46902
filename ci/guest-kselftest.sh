# Run in the guest by make check and make check-kcsan (booted with 4 CPUs):
# take CPUs 2 and 3 offline, so that more CPUs are possible than online,
# then run the kselftests.
for cpu in 2 3; do
	echo 0 >/sys/devices/system/cpu/cpu$cpu/online || exit 1
done
cd /kselftest && ./run_kselftest.sh
