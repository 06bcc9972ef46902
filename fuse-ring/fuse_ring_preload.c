/*
 * libfuse-ring-preload.so: LD_PRELOAD it under an unmodified libfuse3
 * (3.14) file system to serve it over the FUSE io_uring transport.
 *
 * It takes libfuse's session calls, which the file system and libfuse's
 * own high-level API (fuse_main(), fuse_mount(), fuse_loop*()) reach
 * through the PLT: fuse_session_mount() mounts and records the session,
 * the session loops install the ring's I/O before INIT is read (so a
 * daemon sets its ring up in the process that serves, after
 * fuse_daemonize() forked) and then run libfuse's own loop, whose threads
 * run the handlers as over /dev/fuse. fuse_session_unmount() stops the
 * queues. A server that reads requests itself
 * (fuse_session_receive_buf()) stays on /dev/fuse.
 *
 * Environment: FUSE_RING=0 (off), FUSE_RING_QUEUES, FUSE_RING_DEPTH,
 * FUSE_RING_SETUP=defer|plain|coop, FUSE_RING_POLL_US, FUSE_RING_STATS=1
 * (counts on stderr at unmount), FUSE_RING_VERBOSE=1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse_ring_internal.h"

/* libfuse 3.14's loop configurations, as its versioned entry points take them */
struct fr_loop_config_v1 {
	int clone_fd;
	unsigned int max_idle_threads;
};

static struct {
	int off;
	struct fuse_ring_opts opts;
	int (*loop)(struct fuse_session *se);
	int (*loop_mt)(struct fuse_session *se, struct fuse_loop_config *cfg);
	int (*receive_buf)(struct fuse_session *se, struct fuse_buf *buf);
} pl;

static unsigned int fr_env_uint(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 10) : def;
}

static void *fr_sym(const char *name, const char *version)
{
	void *p = dlvsym(RTLD_NEXT, name, version);

	if (!p) {
		fprintf(stderr, "fuse-ring: %s@%s not found in libfuse3: preload off\n",
			name, version);
		pl.off = 1;
	}
	return p;
}

__attribute__((constructor)) static void fr_preload_init(void)
{
	const char *v = getenv("FUSE_RING");
	const char *setup = getenv("FUSE_RING_SETUP");

	pl.off = v && (!strcmp(v, "0") || !strcmp(v, "off"));
	pl.opts.use_ring = 1;
	pl.opts.nr_queues = fr_env_uint("FUSE_RING_QUEUES", 0);
	pl.opts.queue_depth = fr_env_uint("FUSE_RING_DEPTH", 0);
	pl.opts.poll_us = fr_env_uint("FUSE_RING_POLL_US", 0);
	pl.opts.verbose = fr_env_uint("FUSE_RING_VERBOSE", 0);
	pl.opts.no_stats = !fr_env_uint("FUSE_RING_STATS", 0);
	if (setup && !strcmp(setup, "plain"))
		pl.opts.setup = FUSE_RING_SETUP_PLAIN;
	else if (setup && !strcmp(setup, "coop"))
		pl.opts.setup = FUSE_RING_SETUP_COOP;
	fr_real_mount = fr_sym("fuse_session_mount", "FUSE_3.0");
	fr_real_unmount = fr_sym("fuse_session_unmount", "FUSE_3.0");
	pl.loop = fr_sym("fuse_session_loop", "FUSE_3.0");
	pl.loop_mt = fr_sym("fuse_session_loop_mt_312", "FUSE_3.12");
	pl.receive_buf = fr_sym("fuse_session_receive_buf", "FUSE_3.0");
}

int fuse_session_mount(struct fuse_session *se, const char *mountpoint)
{
	if (pl.off)
		return fr_real_mount(se, mountpoint);
	return fr_mount(se, mountpoint, &pl.opts) ? 0 : -1;
}

void fuse_session_unmount(struct fuse_session *se)
{
	if (fr_by_se(se))
		fuse_ring_unmount(se);
	else
		fr_real_unmount(se);
}

/* A session loop is about to read INIT: put the ring's I/O in place. */
static void fr_loop_starts(struct fuse_session *se)
{
	struct fr_session *s = fr_by_se(se);

	if (s)
		fr_install(s);
}

int fuse_session_loop(struct fuse_session *se)
{
	fr_loop_starts(se);
	return pl.loop(se);
}

int fuse_session_loop_mt_312(struct fuse_session *se, struct fuse_loop_config *cfg)
{
	fr_loop_starts(se);
	return pl.loop_mt(se, cfg);
}

/* The 3.2 entry point: a v1 configuration, converted as libfuse does. */
int fuse_session_loop_mt_32(struct fuse_session *se, struct fr_loop_config_v1 *v1)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret;

	if (!cfg)
		return -1;
	if (v1) {
		fuse_loop_cfg_set_clone_fd(cfg, v1->clone_fd);
		fuse_loop_cfg_set_idle_threads(cfg, v1->max_idle_threads);
	}
	ret = fuse_session_loop_mt_312(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

/* The 3.0 entry point: only clone_fd. */
int fuse_session_loop_mt_31(struct fuse_session *se, int clone_fd)
{
	struct fr_loop_config_v1 v1 = { .clone_fd = clone_fd, .max_idle_threads = 10 };

	return fuse_session_loop_mt_32(se, &v1);
}

__asm__(".symver fuse_session_loop_mt_312, fuse_session_loop_mt@@FUSE_3.12");
__asm__(".symver fuse_session_loop_mt_32, fuse_session_loop_mt@FUSE_3.2");
__asm__(".symver fuse_session_loop_mt_31, fuse_session_loop_mt@FUSE_3.0");

/*
 * A server with its own loop (QEMU, pyfuse3): its session keeps libfuse's
 * I/O, served over /dev/fuse as without the preload.
 */
int fuse_session_receive_buf(struct fuse_session *se, struct fuse_buf *buf)
{
	struct fr_session *s = fr_by_se(se);

	if (s && s->opts.use_ring && !s->io_installed) {
		fprintf(stderr, "fuse-ring: the server reads its requests itself (fuse_session_receive_buf), not through a libfuse session loop; serving over /dev/fuse\n");
		s->opts.use_ring = 0;
	}
	return pl.receive_buf(se, buf);
}
