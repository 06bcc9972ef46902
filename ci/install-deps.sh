#!/bin/sh
# Install from apt what building and testing need. Quiet and quick when
# everything is there already.
# Usage: ci/install-deps.sh LINUX_SOURCE_PACKAGE=VERSION
set -eu
packages="$1 build-essential bc bison flex libelf-dev libssl-dev dwarves
	cpio kmod rsync xz-utils python3 git ccache sparse
	qemu-system-x86 busybox-static liburing-dev libfuse3-dev
	fuse3 fuse-overlayfs squashfuse squashfs-tools"
missing=
for p in $packages; do
	name=${p%%=*}
	want=${p#*=}
	have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
	case $have in
	"install ok installed "*)
		[ "$name" = "$p" ] || [ "${have##* }" = "$want" ] || missing="$missing $p" ;;
	*) missing="$missing $p" ;;
	esac
done
[ -n "$missing" ] || exit 0
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
