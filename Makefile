# FUSE over io_uring for Linux 6.12: build, test and benchmark the series.
# See README.md for what each target does.

include kernel-source.mk

BUILD     := build
TREE      := $(BUILD)/linux
GUEST_OBJ := $(BUILD)/obj-guest
KSFT_OBJ  := $(BUILD)/obj-ksft
STAGE     := $(BUILD)/stage
BENCH_OBJ := $(BUILD)/obj-bench
KCSAN_OBJ := $(BUILD)/obj-kcsan
BZIMAGE   := $(GUEST_OBJ)/arch/x86/boot/bzImage
INITRAMFS := $(BUILD)/initramfs.cpio.gz
TARBALL   := /usr/src/$(LINUX_SOURCE_PACKAGE).tar.xz

# ccache keys on paths relative to the repository, so that a fresh clone in
# another folder (as CI makes) still hits the cache.
export CCACHE_MAXSIZE ?= 10G
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: check check-kcsan check-flakes check-patches check-mutations run run-latency run-packaged waits create-tail dirlock profile guest deps tree tree-rebuild series \
	verify-series submission kernel bench-kernel kcsan-kernel selftests initramfs \
	kunit kunit-x86

# The test command: everything from a fresh machine to "N passed, N failed".
check:
	sh ci/check.sh

# The kselftests on a second test kernel, with the data-race detector
# KCSAN in place of KASAN (they cannot be combined). Not part of check:
# it builds a whole kernel more.
check-kcsan: kcsan-kernel initramfs
	sh ci/check-kcsan.sh $(KCSAN_OBJ)/arch/x86/boot/bzImage $(INITRAMFS)

# The race and stress kselftests, 20 times each in one guest boot (ci/check-flakes.sh).
check-flakes: kernel initramfs
	sh ci/check-flakes.sh $(BZIMAGE) $(INITRAMFS)

# Each mutation of ci/mutations/ applied to the tree in turn, with the
# tests it names run against it: which caught it (ci/check-mutations.sh).
check-mutations: tree
	sh ci/check-mutations.sh

# Each patch of series/ on its own: builds with W=1 and sparse, with the
# io_uring transport on and off, and what checkpatch --strict says of it.
check-patches: tree
	sh ci/check-patches.sh $(TREE) series $(BUILD)/obj-patches

# The main job: boot the patched kernel and compare the transports on the
# same workloads in one boot (bench/README.md), then the backend latency
# family (run-latency). The benchmark kernel is the test kernel without its
# debug options.
run: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/run.sh
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/run-latency.sh

# The backend latency family: a server that waits 200 us per request, the
# workloads where one caller has many requests in flight, one -icount boot
# with 2 guest CPUs and one with 4 (bench/run-latency.sh).
run-latency: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/run-latency.sh

# Debian's packaged file systems (squashfuse_ll, fuse-overlayfs) over the
# ring with the fuse-ring preload against /dev/fuse (bench/packaged.sh).
run-packaged: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/packaged.sh

# Where the ring's READs wait, from its trace events (bench/waits.sh).
waits: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/waits.sh

# Where one job's slowest creates go, from trace events (bench/create-tail.sh).
create-tail: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/create-tail.sh

# What creates in one directory by a job per CPU wait for: rwsem waits
# from trace events (bench/dirlock.sh).
dirlock: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/dirlock.sh

# Where the guest's CPU time goes per transport: perf in the guest, under
# -icount (bench/profile.sh).
profile: bench-kernel initramfs
	BENCH_KERNEL=$(BENCH_OBJ)/arch/x86/boot/bzImage \
	BENCH_UAPI_INCLUDE=$(CURDIR)/$(KSFT_OBJ)/usr/include sh bench/profile.sh

# Run CMD in the test guest, with extra cpio archives appended.
guest: kernel initramfs
	sh ci/run-guest.sh $(BZIMAGE) $(INITRAMFS) "$$CMD" $(EXTRA_INITRD)

deps:
	sh ci/install-deps.sh $(LINUX_SOURCE_PACKAGE)=$(LINUX_SOURCE_VERSION)

# The patched kernel tree, as git commits on top of the Debian source.
# An existing tree is left alone: it may hold work not exported yet.
tree: deps
	test -d $(TREE) || sh ci/make-tree.sh $(TARBALL) $(TREE) series

tree-rebuild: deps
	rm -rf $(TREE)
	sh ci/make-tree.sh $(TARBALL) $(TREE) series

series:
	sh ci/export-series.sh $(TREE) series

verify-series:
	sh ci/verify-series.sh $(TREE) series

# The patches as git send-email takes them, under the submitter's own git
# identity and Signed-off-by (ci/make-submission.sh).
submission: tree
	sh ci/make-submission.sh $(TREE) series $(BUILD)/submission

kernel: tree
	sh ci/build-guest.sh $(TREE) $(GUEST_OBJ) selftests/guest.config selftests/debug.config \
		selftests/module.config

bench-kernel: tree
	sh ci/build-guest.sh $(TREE) $(BENCH_OBJ) selftests/guest.config

kcsan-kernel: tree
	sh ci/build-guest.sh $(TREE) $(KCSAN_OBJ) selftests/guest.config selftests/kcsan.config

selftests: tree
	sh selftests/install.sh $(TREE) $(KSFT_OBJ) $(STAGE)

initramfs: selftests
	sh initramfs/build.sh $(INITRAMFS) $(STAGE)

# kunit.py's UML configuration asks for PCI over virtio with no device ID,
# which 6.12 answers with a WARNING at boot; the suites need no PCI.
kunit: tree
	sh ci/run-kunit.sh $(TREE) $(BUILD)/kunit-uml kunit/fuse_io_uring.kunitconfig \
		--kconfig_add CONFIG_UML_PCI_OVER_VIRTIO=n

# The same suites on x86_64 with 4 CPUs, where per-CPU queue choice is seen,
# with KASAN and 32-bit tasks (so that the compat REGISTER case runs).
kunit-x86: tree
	sh ci/run-kunit.sh $(TREE) $(BUILD)/kunit-x86 kunit/fuse_io_uring.kunitconfig \
		--arch=x86_64 --kconfig_add CONFIG_SMP=y --kconfig_add CONFIG_KASAN=y \
		--kconfig_add CONFIG_IA32_EMULATION=y --qemu_args='-smp 4'
