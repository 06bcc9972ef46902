#!/bin/sh
# make check: install, extract and patch, build, run KUnit on UML, boot the
# guest and run the kselftests there; report each stage's time and end with
# one line "N passed, N failed". A skip not listed in ci/expected-skips/
# fails the run. Logs go to build/logs/.
set -u
cd "$(dirname "$0")/.."
logs=build/logs
mkdir -p "$logs"
bzimage=build/obj-guest/arch/x86/boot/bzImage
initramfs=build/initramfs.cpio.gz
broken=

# stage NAME COMMAND...: run COMMAND with its output in $logs/NAME.log.
stage() {
	name=$1
	shift
	start=$(date +%s)
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	echo "check: stage $name took $(( $(date +%s) - start ))s (exit $rc)"
	if [ "$rc" -ne 0 ]; then
		echo "check: stage $name failed; end of $logs/$name.log:"
		tail -n 60 "$logs/$name.log"
	fi
	return "$rc"
}

total_start=$(date +%s)
# The counts of this run, for the README and the cover letter to quote,
# with the day and the project commit that ran them; a copy committed as
# series/check-summary.txt is what make verify-series compares. No times.
summary=$logs/summary.txt
{
	echo "date: $(date -u +%Y-%m-%d)"
	# -dirty: the run had changes not committed yet
	dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | head -n 1)
	echo "commit: $(git rev-parse --short=12 HEAD 2>/dev/null || echo none)${dirty:+-dirty}"
} >"$summary"
stage deps make -s deps || exit 1
stage tree make -s tree || exit 1

kunit_pass=0 kunit_fail=0 kunit_skip=0
for arch in uml x86; do
	target=kunit
	[ "$arch" = uml ] || target=kunit-$arch
	stage "kunit-$arch" make -s "$target" || broken="$broken kunit-$arch"
	set -- $(sh ci/count-kunit.sh "$logs/kunit-$arch.log")
	echo "check: kunit ($arch): $1 passed, $2 failed, $3 skipped"
	echo "kunit-$arch: $1 passed, $2 failed, $3 skipped" >>"$summary"
	sh ci/check-skips.sh kunit "$logs/kunit-$arch.log" \
		"ci/expected-skips/kunit-$arch" || broken="$broken skips-kunit-$arch"
	kunit_pass=$(( kunit_pass + $1 )) kunit_fail=$(( kunit_fail + $2 ))
	kunit_skip=$(( kunit_skip + $3 ))
done

ksft_pass=0 ksft_fail=1 ksft_skip=0
if stage kernel make -s kernel && stage initramfs make -s initramfs; then
	# 4 possible CPUs, 2 online, as on a machine with CPU hot-plug: the
	# ring has a queue per possible CPU. (QEMU's -smp 2,maxcpus=4 is not
	# seen by this guest: Linux counts the absent CPUs of the MADT only
	# under a hypervisor it knows, and TCG is none.)
	GUEST_SMP=4 GUEST_LOG=$logs/guest-console.log \
	GUEST_TIMEOUT=${CHECK_GUEST_TIMEOUT:-1800} \
		stage kselftest sh ci/run-guest.sh "$bzimage" "$initramfs" \
		"$(cat ci/guest-kselftest.sh)" || broken="$broken kselftest"
	set -- $(sh ci/count-kselftest.sh "$logs/kselftest.log")
	ksft_pass=$1 ksft_fail=$2 ksft_skip=$3
	sh ci/check-skips.sh kselftest "$logs/kselftest.log" \
		ci/expected-skips/kselftest || broken="$broken skips-kselftest"
	grep -E '^(not )?ok [0-9]+ |^# (not )?ok [0-9]+ ' "$logs/kselftest.log" || true
else
	broken="$broken build"
fi
echo "check: kselftest (guest): $ksft_pass passed, $ksft_fail failed, $ksft_skip skipped"
echo "kselftest: $ksft_pass passed, $ksft_fail failed, $ksft_skip skipped" >>"$summary"

# An unmodified libfuse3 file system over the ring (fuse-ring/).
ring_pass=0 ring_fail=1
if [ -f "$bzimage" ]; then
	stage fuse-ring sh fuse-ring/run-guest-test.sh "$bzimage" || broken="$broken fuse-ring"
	set -- $(sed -n 's/^fuse-ring-test: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' \
		"$logs/fuse-ring.log" | tail -n 1)
	ring_pass=${1:-0} ring_fail=${2:-1}
fi
echo "check: fuse-ring (guest): $ring_pass passed, $ring_fail failed"
echo "fuse-ring: $ring_pass passed, $ring_fail failed" >>"$summary"

passed=$(( kunit_pass + ksft_pass + ring_pass ))
failed=$(( kunit_fail + ksft_fail + ring_fail ))
skipped=$(( kunit_skip + ksft_skip ))
# A stage that failed without a failed test case still fails the run.
if [ -n "$broken" ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
# Last, where CI's shortened output keeps it: why each failed stage failed.
for name in $broken; do
	sh ci/show-failures.sh "$logs/$name.log"
done
echo "check: total $(( $(date +%s) - total_start ))s; failed stages:${broken:- none}"
{
	echo "total: $passed passed, $failed failed, $skipped skipped"
	echo "series: $(sh ci/series-hash.sh)"
} >>"$summary"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
