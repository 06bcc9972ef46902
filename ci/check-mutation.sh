#!/bin/sh
# Apply one mutation of ci/mutations/ to the kernel tree, run the tests its
# header names, take it out again, and say which of them caught it: a KUnit
# run or a guest command that fails (a failed case or a kernel report in
# the log). A mutation that nothing catches is a promise without a test.
# Header lines of ci/mutations/NAME.patch (before its diff, which git
# apply skips):
#   # kunit: yes                        make kunit (UML)
#   # kunit: x86                        make kunit-x86 (SMP: cases that
#                                       need more than one CPU)
#   # guest: PROGRAM [harness filters]  one kselftest program in the guest
# Prints "mutation NAME: caught by: kunit guest; failed: TESTS" (or
# "caught by: nothing") and exits 0 if caught. Logs:
# build/logs/mutation-NAME-*.log.
# Usage: ci/check-mutation.sh NAME
set -u
name=$1 tree=build/linux
patch=$(pwd)/ci/mutations/$name.patch
logs=build/logs
mkdir -p "$logs"
kunit=$(sed -n 's/^# kunit: //p' "$patch")
guest=$(sed -n 's/^# guest: //p' "$patch")
rm -f "$logs/mutation-$name-"*.log
git -C "$tree" apply "$patch" || exit 2
trap 'git -C "$tree" apply -R "$patch"' EXIT
caught=
if [ -n "$kunit" ]; then
	target=kunit
	[ "$kunit" != x86 ] || target=kunit-x86
	make -s "$target" >"$logs/mutation-$name-kunit.log" 2>&1 ||
		caught="$caught $target"
	# A kernel that does not build is no catch
	if ! grep -q 'Testing complete\|CRASHED' "$logs/mutation-$name-kunit.log"; then
		echo "mutation $name: the mutated KUnit kernel does not build"
		exit 2
	fi
fi
if [ -n "$guest" ]; then
	if make -s kernel initramfs >"$logs/mutation-$name-build.log" 2>&1; then
		GUEST_SMP=4 GUEST_LOG="$logs/mutation-$name-console.log" \
		sh ci/run-guest.sh build/obj-guest/arch/x86/boot/bzImage \
			build/initramfs.cpio.gz "for cpu in 2 3; do
	echo 0 >/sys/devices/system/cpu/cpu\$cpu/online
done
cd /kselftest/filesystems/fuse && ./$guest" \
			>"$logs/mutation-$name-guest.log" 2>&1 || caught="$caught guest"
	else
		echo "mutation $name: the mutated kernel does not build"
		exit 2
	fi
fi
# What failed: KUnit's failed cases, a kernel report, kselftest's not ok
what=
for log in "$logs/mutation-$name-kunit.log" "$logs/mutation-$name-guest.log"; do
	[ -f "$log" ] || continue
	what="$what $(sed -n 's/.*\[FAILED\] \(fuse_[a-z0-9_]*test_[a-z0-9_]*\).*/\1/p' "$log" | tr '\n' ' ')"
	grep -q '^check-log:' "$log" && what="$what (kernel report)"
	what="$what $(tr -d '\r' <"$log" | sed -n 's/^\(# \)*not ok [0-9]* \([^ #]*\).*/\2/p' | grep -v '^selftests:' | tr '\n' ' ')"
done
echo "mutation $name: caught by:${caught:- nothing}; failed: $(echo $what)"
[ -n "$caught" ]
