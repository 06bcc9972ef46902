#!/bin/sh
# Debian's packaged file systems (squashfuse_ll, fuse-overlayfs) over the
# ring with the fuse-ring preload against /dev/fuse without it: build and
# stage them, boot the benchmark kernel and run bench/packaged-in-guest.sh
# there. Writes $BENCH_OUT/packaged.txt (the guest's output) and
# $BENCH_OUT/packaged.md (the table), and prints the table.
# Usage: sh bench/packaged.sh
# Environment: BENCH_ROUNDS (3); BENCH_ICOUNT (1 under TCG: the counts are
#   guest instructions), BENCH_KERNEL, BENCH_UAPI_INCLUDE, GUEST_SMP (2),
#   GUEST_TIMEOUT, QEMU_ACCEL: as for bench/run.sh; BENCH_OUT
#   (build/bench-packaged).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
bzimage=${BENCH_KERNEL:-build/obj-bench/arch/x86/boot/bzImage}
out=${BENCH_OUT:-build/bench-packaged}
stage=$out/stage
initrd=$out/initramfs.cpio.gz

if [ ! -f "$bzimage" ]; then
	echo "packaged: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi
BENCH_FIO=0 BENCH_BONNIE=0 BENCH_LIBFUSE=0 sh bench/build.sh "$stage"
sh fuse-ring/build.sh build/fuse-ring-out >/dev/null
cp build/fuse-ring-out/lib/libfuse-ring-preload.so "$stage/bench/"
# glibc dlopens libgcc_s for pthread_cancel (libfuse's threaded loop)
gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ { print $NF; exit }')
mkdir -p "$stage$(dirname "$gcc_s")" "$stage/usr/bin"
cp -L "$gcc_s" "$stage$gcc_s"
for b in squashfuse_ll fuse-overlayfs fusermount3; do
	cp "$(command -v "$b")" "$stage/usr/bin/"
done
sh fuse-ring/make-tree.sh "$stage/bench/tree"
mksquashfs "$stage/bench/tree" "$stage/bench/tree.sqfs" -noappend -quiet \
	-no-progress >/dev/null
sh initramfs/build.sh "$initrd" "$stage"

if [ -z "${BENCH_ICOUNT:-}" ]; then
	case $(sh ci/pick-accel.sh) in
	kvm*) BENCH_ICOUNT=0 ;;
	*) BENCH_ICOUNT=1 ;;
	esac
fi
GUEST_SMP=${GUEST_SMP:-2}
export BENCH_ICOUNT GUEST_SMP
mkdir -p "$out"
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/packaged.txt" \
	packaged-in-guest.sh BENCH_ROUNDS
status=$?
set -e

# Medians over the rounds, per workload, jobs and transport; the ring
# against /dev/fuse side by side. Instructions: min(busy_ns, elapsed_ns)
# under -icount (see fuse_bench_cost.c).
{
	echo "Packaged file systems, ring (fuse-ring preload) vs /dev/fuse" \
		"(no preload): $(date -u +%Y-%m-%d), $GUEST_SMP guest CPUs," \
		"-icount $BENCH_ICOUNT, medians of the rounds"
	echo
	echo "| workload | jobs | files/s ring/dev | kinstr/file dev | kinstr/file ring | switches/file dev | switches/file ring | IPIs/file dev | IPIs/file ring | ring requests/file |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	awk '$1 == "pkg" && $2 ~ /^[0-9]+$/ {
		k = $3 " " $5 " " $4
		n[k]++
		ins = ($7 < $8) ? $7 : $8
		v[k, "t", n[k]] = $8 / $6
		v[k, "i", n[k]] = ins / $6 / 1000
		v[k, "c", n[k]] = $9 / $6
		v[k, "p", n[k]] = ($10 + $11) / $6
		v[k, "r", n[k]] = ($12 == "-") ? 0 : $12 / $6
		if (!((($3 " " $5) in seen))) { seen[$3 " " $5] = 1; order[++rows] = $3 " " $5 }
	}
	function med(k, f,   i, j, m, a, t) {
		m = n[k]
		for (i = 1; i <= m; i++) a[i] = v[k, f, i]
		for (i = 1; i <= m; i++)
			for (j = i + 1; j <= m; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		for (r = 1; r <= rows; r++) {
			split(order[r], w, " ")
			d = order[r] " dev"; u = order[r] " uring"
			if (!(d in n) || !(u in n)) continue
			printf "| %s | %s | %.2f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
				w[1], w[2], med(d, "t") / med(u, "t"), med(d, "i"), med(u, "i"),
				med(d, "c"), med(u, "c"), med(d, "p"), med(u, "p"), med(u, "r")
		}
	}' "$out/packaged.txt"
	echo
	echo "files/s from the guest's elapsed time; kinstr: guest instructions" \
		"(all CPUs) per file; switches and IPIs (CAL+RES): whole guest."
} >"$out/packaged.md"
cat "$out/packaged.md"
echo "packaged: $out/packaged.txt, $out/packaged.md"
exit "$status"
