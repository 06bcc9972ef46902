# In the benchmark guest: how often the io_uring server's /dev/fuse thread
# (the one that takes FORGETs and INTERRUPTs) is woken while bonnie++'s
# metadata run deletes 2 x 4096 files: its voluntary context switches.
# Usage (host): sh ci/run-guest.sh BZIMAGE build/bench/initramfs.cpio.gz \
#	"sh /bench/bonnie-wakes-in-guest.sh"
mnt=/mnt/bonnie-wakes
files=${1:-4:1:1:4}
mkdir -p $mnt
echo 1 >/sys/module/fuse/parameters/enable_uring
/bench/fuse_bench_server --transport uring --depth 2 --pin $mnt 2>/tmp/s.log &
pid=$!
n=0
# ready once it says so (bounded, as guest-servers.sh waits)
while ! grep -q serving /tmp/s.log; do
	n=$((n + 1))
	[ $n -gt 400 ] && break
	sleep 0.05
done
# the server starts its /dev/fuse thread first: the lowest tid after its own
ftid=$(ls /proc/$pid/task | sort -n | sed -n 2p)
vs() { awk '/^voluntary_ctxt_switches/ {print $2}' /proc/$pid/task/$ftid/status; }
b=$(vs)
bonnie++ -x 1 -q -s0 -n "$files" -r 0 -u root -d $mnt 2>/dev/null | tail -1
a=$(vs)
echo "bonnie-wakes: /dev/fuse thread $ftid woken $((a - b)) times for 2 x the files of -n $files ($(uname -r))"
umount $mnt
