#!/bin/sh
# Boot the guest kernel with the base initramfs plus extra archives, run a
# shell command in it, print the command's output and exit with its status.
# The console carries every kernel message level (loglevel=8: WARN(),
# lockdep and RCU reports print at KERN_WARNING) and is scanned for kernel
# reports; any report fails the run.
# A kernel built with modules (ci/build-guest.sh) gets its modules.cpio.gz,
# found beside its objects, appended too.
# Usage: ci/run-guest.sh BZIMAGE BASE.cpio.gz 'CMD' [EXTRA.cpio.gz...]
# Environment: QEMU_ACCEL (default: ci/pick-accel.sh, KVM where the CPU has
# vmx/svm, TCG otherwise), GUEST_SMP (2),
# GUEST_MEM (2G), GUEST_TIMEOUT seconds (600), GUEST_LOG (console log path),
# QEMU_EXTRA_ARGS (more QEMU options, split on spaces, e.g. -icount ...),
# GUEST_OUT (file the command's output goes to as the guest runs, with the
# serial line's \r\n; default a temporary file).
set -eu
kernel=$1 base=$2 cmd=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=${GUEST_LOG:-$work/console.log}
accel=$(sh "$here/pick-accel.sh")
echo "run-guest: accelerator $accel" >&2
limit=${GUEST_TIMEOUT:-600}
out=${GUEST_OUT:-$work/out}

mkdir "$work/cmd"
printf '%s\n' "$cmd" >"$work/cmd/cmd"
(cd "$work/cmd" && echo cmd | cpio -o -H newc --quiet) | gzip -1 >"$work/cmd.cpio.gz"
# BZIMAGE is OBJDIR/arch/x86/boot/bzImage
modules=$(dirname "$(dirname "$(dirname "$(dirname "$kernel")")")")/modules.cpio.gz
[ -f "$modules" ] || modules=
cat "$base" "$@" $modules "$work/cmd.cpio.gz" >"$work/initrd"

set +e
timeout -k 10 "$limit" qemu-system-x86_64 \
	-accel "$accel" -smp "${GUEST_SMP:-2}" -m "${GUEST_MEM:-2G}" \
	-kernel "$kernel" -initrd "$work/initrd" \
	-append "console=ttyS0 panic=-1 oops=panic kasan.fault=report loglevel=8 kmemleak=on" \
	-display none -no-reboot -monitor none \
	-serial "file:$log" -serial "file:$out" ${QEMU_EXTRA_ARGS:-} </dev/null
qemu=$?
set -e
cat "$out" 2>/dev/null | tr -d '\r'

if [ "$qemu" -eq 124 ] || [ "$qemu" -eq 137 ]; then
	echo "run-guest: guest did not finish within ${limit}s; last console lines:" >&2
	tail -n 40 "$log" >&2
	exit 124
fi
status=$(sed -n 's/^guest: exit status \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$status" ]; then
	echo "run-guest: guest stopped without an exit status (qemu $qemu); last console lines:" >&2
	tail -n 40 "$log" >&2
	exit 125
fi
if ! "$here/check-log.sh" "$log" >&2; then
	exit 126
fi
exit "$status"
