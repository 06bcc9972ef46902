#!/bin/sh
# Print the QEMU accelerator for the guests: QEMU_ACCEL if set; KVM when
# /dev/kvm opens and the CPU has hardware virtualisation (vmx or svm);
# TCG otherwise. A /dev/kvm without vmx/svm (a nested, paravirtual KVM)
# emulates every guest instruction, far slower than TCG: not used.
if [ -n "${QEMU_ACCEL:-}" ]; then
	echo "$QEMU_ACCEL"
elif [ -r /dev/kvm ] && [ -w /dev/kvm ] && { : </dev/kvm; } 2>/dev/null &&
	grep -qwE 'vmx|svm' /proc/cpuinfo; then
	echo kvm
else
	echo tcg,thread=multi
fi
