#!/bin/sh
# Build the kselftests the guest runs and install them under STAGE/kselftest
# (STAGE is merged into the guest's initramfs).
# Usage: selftests/install.sh TREE OBJDIR STAGE
set -eu
mkdir -p "$2" "$3"
tree=$(cd "$1" && pwd) obj=$(cd "$2" && pwd) stage=$(cd "$3" && pwd)
targets=$(grep -v '^#' "$(dirname "$0")/targets" | tr '\n' ' ')
make -s -C "$tree" O="$obj" ARCH=x86_64 headers
rm -rf "$stage/kselftest"
make -s -C "$tree/tools/testing/selftests" O="$obj" ARCH=x86_64 \
	CC="ccache gcc" TARGETS="$targets" KSFT_INSTALL_PATH="$stage/kselftest" install >/dev/null
