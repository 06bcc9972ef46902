# The one place the kernel source is pinned: Debian's linux-source-6.12
# package at this exact version. To move it, change the version below to one
# that `apt-cache policy linux-source-6.12` lists, run `make tree-rebuild` and
# `make check`, then refresh series/ with `make series` if a patch needed fixing.
LINUX_SOURCE_PACKAGE = linux-source-6.12
LINUX_SOURCE_VERSION = 6.12.118-1~deb12u1
