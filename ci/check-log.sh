#!/bin/sh
# Scan a guest console log for kernel reports (KASAN, lockdep, BUG, WARNING,
# kmemleak, hung tasks). Print each report's first lines; exit 1 if any.
# Usage: ci/check-log.sh CONSOLE.LOG
set -eu
pattern='BUG:|WARNING:|KASAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|unreferenced object|INFO: task .* blocked|Kernel panic|general protection fault|Oops:|list_add corruption|list_del corruption|UBSAN'
if grep -Eq "$pattern" "$1"; then
	echo "check-log: kernel reports in the guest log:"
	grep -En -A 25 "$pattern" "$1" | tr -d '\r' | head -n 120
	exit 1
fi
