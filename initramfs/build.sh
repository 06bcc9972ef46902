#!/bin/sh
# Build the guest's base initramfs: busybox, the init script, the host tools
# the kselftest runner needs, and the shared libraries of every binary in it.
# Usage: initramfs/build.sh OUT.cpio.gz [STAGING_DIR_TO_MERGE...]
set -eu
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" \
	"$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/mnt" "$root/etc"
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
mknod -m 600 "$root/dev/console" c 5 1
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

# run_kselftest.sh wants GNU timeout (busybox's has no --foreground).
cp /usr/bin/timeout "$root/usr/bin/timeout"

for dir in "$@"; do
	cp -a "$dir/." "$root/"
done

# Shared libraries of every dynamically linked file, with the loader.
find "$root" -type f -perm -u+x | while IFS= read -r f; do
	ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
done | sort -u | while IFS= read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
