#!/bin/sh
# Scan a kernel log (a guest's console, KUnit's test.log) for kernel
# reports: KASAN, lockdep, BUG, WARNING, kmemleak, hung tasks, RCU stalls,
# SLUB's own reports ("BUG kmalloc-64 (Not tainted): Poison overwritten").
# Print each report's first lines; exit 1 if any.
# Usage: ci/check-log.sh LOG
set -eu
pattern='BUG:|WARNING:|KASAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|unreferenced object|INFO: task .* blocked|Kernel panic|general protection fault|Oops:|list_add corruption|list_del corruption|UBSAN|rcu: INFO: .*detected stall|self-detected stall|BUG [^ ]+ \((Not tainted|Tainted)'
if grep -Eq "$pattern" "$1"; then
	echo "check-log: kernel reports in $1:"
	grep -En -A 25 "$pattern" "$1" | tr -d '\r' | head -n 120
	exit 1
fi
