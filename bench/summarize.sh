#!/bin/sh
# Summarise the benchmark's raw TSV (rows "round workload transport jobs
# ops_per_s p50_us p99_us", as printed by run-in-guest.sh) into medians per
# (workload, transport, jobs):
#   OUTDIR/summary.tsv  the medians, with a header line
#   OUTDIR/summary.md   markdown tables: ops/s per transport, uring/dev-1,
#                       uring/dev-N, each transport as a fraction of the tmpfs
#                       floor (with uring-1q in the runs: its ops/s,
#                       uring-1q/dev-N and uring-1q/uring too); p50/p99 latencies; the other configurations
#                       (dev-1-poll, uring-free, ...) as ops/s and ratio to dev-1;
#                       MiB/s of the workloads with a fixed block size; the
#                       cost per operation when RAW.tsv has cost rows
#   OUTDIR/summary.png  clustered bars of ops/s normalised to dev-1 (gnuplot)
#   OUTDIR/cost.tsv     from the rows "cost mode round workload transport
#                       jobs ops busy_ns elapsed_ns ctxt cal res"
#                       (BENCH_COST=1), medians over rounds of the figures
#                       per operation
# Usage: bench/summarize.sh RAW.tsv [OUTDIR]   (OUTDIR default build/bench)
# Environment: BENCH_ACCEL, the guest's accelerator, named in the cost
# table's heading; BENCH_ICOUNT=1: busy ns are guest instructions.
set -eu
raw=$1
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$(dirname "$here")/build/bench}
mkdir -p "$out"
tsv=$out/summary.tsv md=$out/summary.md png=$out/summary.png
cost=$out/cost.tsv

# Medians, each column on its own; NA values are left out ("NA" if none).
awk -F'\t' '
function median(key, col,    n, i, j, t, v, a) {
	n = 0
	for (i = 1; i <= cnt[key]; i++) {
		t = val[key, i, col]
		if (t != "NA" && t != "") a[++n] = t + 0
	}
	if (!n) return "NA"
	for (i = 2; i <= n; i++) {	# insertion sort: a handful of rounds
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
		a[j + 1] = v
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
NF >= 7 && $1 ~ /^[0-9]+$/ {
	key = $2 "\t" $3 "\t" $4
	if (!(key in cnt)) order[++nkeys] = key
	c = ++cnt[key]
	val[key, c, 5] = $5; val[key, c, 6] = $6; val[key, c, 7] = $7
}
END {
	print "workload\ttransport\tjobs\tops_per_s\tp50_us\tp99_us"
	for (k = 1; k <= nkeys; k++) {
		key = order[k]
		printf "%s\t%s\t%s\t%s\n", key, median(key, 5), median(key, 6),
		       median(key, 7)
	}
}' "$raw" >"$tsv"

# Markdown tables and the chart's data: one line per (workload, jobs).
dat=$out/summary-chart.dat
awk -F'\t' -v dat="$dat" '
function fmt(x) {
	if (x == "" || x == "NA") return "-"
	return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x)
}
function ratio(a, b) {
	if (a == "" || b == "" || a == "NA" || b == "NA" || b + 0 == 0)
		return "-"
	return sprintf("%.2f", a / b)
}
function pct(a, b) {
	if (a == "" || b == "" || a == "NA" || b == "NA" || b + 0 == 0)
		return "-"
	return sprintf("%.0f%%", 100 * a / b)
}
NR > 1 {
	wj = $1 "\t" $3
	if (!(wj in seen)) { seen[wj] = 1; rows[++n] = wj }
	ops[wj, $2] = $4; p50[wj, $2] = $5; p99[wj, $2] = $6
	if ($2 == "uring-1q")
		has1q = 1
	else if ($2 !~ /^(tmpfs|dev-1|dev-N|uring)$/ && !($2 in known)) {
		known[$2] = 1; other[++nother] = $2
	}
}
END {
	# uring-1q (entries on one queue only), when the runs have it
	ops1q = has1q ? " uring-1q ops/s |" : ""
	ratios1q = has1q ? " uring-1q/dev-N | uring-1q/uring |" : ""
	print "| workload | jobs | tmpfs ops/s | dev-1 ops/s | dev-N ops/s | uring ops/s |" ops1q " uring/dev-1 | uring/dev-N |" ratios1q " % of tmpfs floor: dev-1 / dev-N / uring |"
	print "|---|---:|---:|---:|---:|---:|" (has1q ? "---:|" : "") "---:|---:|" (has1q ? "---:|---:|" : "") "---:|"
	for (i = 1; i <= n; i++) {
		r = rows[i]; split(r, f, "\t")
		t = ops[r, "tmpfs"]; d1 = ops[r, "dev-1"]
		dn = ops[r, "dev-N"]; u = ops[r, "uring"]; u1 = ops[r, "uring-1q"]
		printf "| %s | %s | %s | %s | %s | %s |", f[1], f[2], fmt(t),
		       fmt(d1), fmt(dn), fmt(u)
		if (has1q)
			printf " %s |", fmt(u1)
		printf " %s | %s |", ratio(u, d1), ratio(u, dn)
		if (has1q)
			printf " %s | %s |", ratio(u1, dn), ratio(u1, u)
		printf " %s / %s / %s |\n", pct(d1, t), pct(dn, t), pct(u, t)
		if (d1 != "" && d1 != "NA" && d1 + 0 > 0)
			printf "%s-j%s\t%s\t%s\t%s\t%s\n", f[1], f[2], 1,
			       ratio(dn, d1) == "-" ? "0" : ratio(dn, d1),
			       ratio(u, d1) == "-" ? "0" : ratio(u, d1),
			       ratio(u1, d1) == "-" ? "0" : ratio(u1, d1) >dat
	}
	print ""
	print "Latency, median over rounds of each run'"'"'s p50 / p99, in microseconds:"
	print ""
	print "| workload | jobs | tmpfs | dev-1 | dev-N | uring |" (has1q ? " uring-1q |" : "")
	print "|---|---:|---:|---:|---:|---:|" (has1q ? "---:|" : "")
	ntr = split("tmpfs dev-1 dev-N uring" (has1q ? " uring-1q" : ""), tr, " ")
	for (i = 1; i <= n; i++) {
		r = rows[i]; split(r, f, "\t")
		line = "| " f[1] " | " f[2] " |"
		some = 0	# bonnie++ gives no percentiles: no row
		for (k = 1; k <= ntr; k++) {
			line = line " " fmt(p50[r, tr[k]]) " / " fmt(p99[r, tr[k]]) " |"
			if (fmt(p99[r, tr[k]]) != "-")
				some = 1
		}
		if (some)
			print line
	}
	if (!nother)
		exit
	# The other configurations (polling, libfuse, ...)
	print ""
	print "Other configurations, ops/s and (in brackets) ratio to dev-1:"
	print ""
	line = "| workload | jobs | dev-1 |"; sep = "|---|---:|---:|"
	for (k = 1; k <= nother; k++) {
		line = line " " other[k] " |"; sep = sep "---:|"
	}
	print line; print sep
	for (i = 1; i <= n; i++) {
		r = rows[i]; split(r, f, "\t")
		d1 = ops[r, "dev-1"]
		line = "| " f[1] " | " f[2] " | " fmt(d1) " |"
		for (k = 1; k <= nother; k++)
			line = line " " fmt(ops[r, other[k]]) " (" \
			       ratio(ops[r, other[k]], d1) ") |"
		print line
	}
}' "$tsv" >"$md"

# Throughput of the workloads with one block size, in MiB/s.
awk -F'\t' '
function kib(w) {
	if (w ~ /-1m(-direct)?$/) return 1024
	if (w == "read128k") return 128
	if (w == "read4k" || w == "fio-randread4k" || w == "fio-qd16")
		return 4
	return 0
}
function mib(x, w) {
	if (x == "" || x == "NA") return "-"
	x = x * kib(w) / 1024
	return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x)
}
NR > 1 && kib($1) {
	wj = $1 "\t" $3
	if (!(wj in seen)) { seen[wj] = 1; rows[++n] = wj }
	ops[wj, $2] = $4
	if ($2 == "uring-1q")
		has1q = 1
}
END {
	if (!n)
		exit
	print ""
	print "Throughput in MiB/s (ops/s x block size: 4 KiB for read4k and the fio ones, 128 KiB for read128k, 1 MiB for the seq ones):"
	print ""
	print "| workload | jobs | tmpfs | dev-1 | dev-N | uring |" (has1q ? " uring-1q |" : "")
	print "|---|---:|---:|---:|---:|---:|" (has1q ? "---:|" : "")
	for (i = 1; i <= n; i++) {
		r = rows[i]; split(r, f, "\t")
		printf "| %s | %s | %s | %s | %s | %s |", f[1], f[2],
		       mib(ops[r, "tmpfs"], f[1]), mib(ops[r, "dev-1"], f[1]),
		       mib(ops[r, "dev-N"], f[1]), mib(ops[r, "uring"], f[1])
		if (has1q)
			printf " %s |", mib(ops[r, "uring-1q"], f[1])
		printf "\n"
	}
}' "$tsv" >>"$md"

# Cost per operation: medians over rounds, per (mode, workload, transport,
# jobs), of busy ns, min(busy, elapsed) ns (guest instructions under
# -icount: fuse_bench_cost.c says why), context switches, CAL and RES
# IPIs per operation, and busy / elapsed (vCPUs busy on average).
awk -F'\t' '
function median(key, col,    n, i, j, v, a) {
	n = cnt[key]
	for (i = 1; i <= n; i++) a[i] = val[key, i, col]
	for (i = 2; i <= n; i++) {
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
		a[j + 1] = v
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$1 == "cost" && NF >= 12 && $7 > 0 && $9 > 0 {
	key = $2 "\t" $4 "\t" $5 "\t" $6
	if (!(key in cnt)) order[++nkeys] = key
	c = ++cnt[key]
	val[key, c, 1] = $7
	val[key, c, 2] = $8 / $7
	val[key, c, 3] = ($8 < $9 ? $8 : $9) / $7
	val[key, c, 4] = $8 / $9
	val[key, c, 5] = $10 / $7
	val[key, c, 6] = $11 / $7
	val[key, c, 7] = $12 / $7
}
END {
	if (!nkeys)
		exit
	print "mode\tworkload\ttransport\tjobs\tops\tbusy_ns_per_op\tinstr_per_op\tcpus_busy\tctxt_per_op\tcal_per_op\tres_per_op"
	for (k = 1; k <= nkeys; k++) {
		key = order[k]
		printf "%s\t%d\t%.0f\t%.0f\t%.2f\t%.3f\t%.4f\t%.4f\n", key,
		       median(key, 1), median(key, 2), median(key, 3),
		       median(key, 4), median(key, 5), median(key, 6),
		       median(key, 7)
	}
}' "$raw" >"$cost"
if [ -s "$cost" ]; then
	awk -F'\t' -v accel="${BENCH_ACCEL:-unknown}" \
	    -v icount="${BENCH_ICOUNT:-0}" '
	function f(fmt, x,    v) {	# no "-0.000" from the subtraction
		v = sprintf(fmt, x)
		return v ~ /^-0\.0*$/ ? substr(v, 2) : v
	}
	NR > 1 {
		if (!($2 in wseen)) { wseen[$2] = 1; wl[++nw] = $2 }
		if (!($3 in tseen)) { tseen[$3] = 1; tr[++nt] = $3 }
		if (!($4 in jseen)) { jseen[$4] = 1; jb[++nj] = $4 }
		key = $2 "\t" $3 "\t" $4
		fig[key, $1] = f("%.1f", (icount == 1 ? $7 : $6) / 1000) " | " \
			f("%.2f", $8) " | " f("%.2f", $9) " | " \
			f("%.3f", $10) " | " f("%.3f", $11)
		have[key] = 1
	}
	END {
		unit = icount == 1 ? "k instr/op" : "CPU us/op"
		print ""
		print "Cost per operation, from this boot (" accel "), median over rounds; from fuse_bench_cost around each run, net of the same command doing one operation per job:"
		print ""
		if (icount == 1)
			print "- k instr/op: thousands of guest instructions per operation, all vCPUs and tasks (load, server, kernel threads), estimated as min(busy, elapsed) guest ns: under -icount on single-threaded TCG the clock advances 1 ns per instruction of any vCPU, so busy time counts twice where both vCPUs run at once (CPUs busy near 2) and elapsed time counts the skipped all-idle time; exact when either never happens."
		else
			print "- CPU us/op: guest CPU time per operation, all tasks (load, server, kernel threads), host-clocked TCG: not instructions."
		print "- CPUs busy: busy time over elapsed time, vCPUs busy on average."
		print "- cs/op: context switches (/proc/stat ctxt); CAL/op, RES/op: function-call and rescheduling IPIs (/proc/interrupts, all CPUs)."
		print "- CPU 0: load and server started under taskset 1, the server without --pin; io_uring io-wq workers and kernel threads are not pinned."
		print ""
		print "| workload | jobs | transport | " unit " | CPUs busy | cs/op | CAL/op | RES/op | CPU 0: " unit " | CPUs busy | cs/op | CAL/op | RES/op |"
		print "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		none = "- | - | - | - | -"
		for (w = 1; w <= nw; w++)
		for (j = 1; j <= nj; j++)
		for (t = 1; t <= nt; t++) {
			key = wl[w] "\t" tr[t] "\t" jb[j]
			if (!(key in have))
				continue
			printf "| %s | %s | %s | %s | %s |\n", wl[w], jb[j], tr[t],
			       (key, "free") in fig ? fig[key, "free"] : none,
			       (key, "cpu0") in fig ? fig[key, "cpu0"] : none
		}
	}' "$cost" >>"$md"
else
	rm -f "$cost"
fi

if command -v gnuplot >/dev/null && [ -s "$dat" ]; then
	plot1q=
	grep -q "$(printf '\turing-1q\t')" "$tsv" &&
		plot1q=", '' using 5 title 'uring-1q (entries on one queue)'"
	gnuplot <<EOF
set terminal png size 1400,600
set output '$png'
set title 'FUSE transports: ops/s normalised to dev-1 (median of rounds)'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -35 scale 0 font ',9'
set ylabel 'ops/s relative to dev-1'
set yrange [0:*]
set grid ytics
set key top left
plot '$dat' using 2:xtic(1) title 'dev-1 (/dev/fuse, 1 thread)', \
     '' using 3 title 'dev-N (/dev/fuse, 1 thread per CPU)', \
     '' using 4 title 'uring (1 queue per CPU, each on its CPU)'$plot1q
EOF
else
	echo "summarize: no gnuplot or no data: $png not drawn" >&2
fi
