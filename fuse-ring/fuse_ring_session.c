/*
 * The session side: mount through libfuse, install the custom I/O
 * callbacks, watch the INIT exchange on /dev/fuse, turn the ring on in the
 * INIT reply, route replies by unique, count requests per transport.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse_ring_internal.h"

#define FR_MAX_SESSIONS 16
#define FR_DEFAULT_DEPTH 4
#define FR_ENABLE_PARAM "/sys/module/fuse/parameters/enable_uring"

static struct fr_session *fr_sessions[FR_MAX_SESSIONS];
static pthread_mutex_t fr_sessions_lock = PTHREAD_MUTEX_INITIALIZER;

static struct fr_session *fr_by_fd(int fd)
{
	int i;

	for (i = 0; i < FR_MAX_SESSIONS; i++) {
		struct fr_session *s = __atomic_load_n(&fr_sessions[i], __ATOMIC_ACQUIRE);

		if (s && s->fd == fd)
			return s;
	}
	return NULL;
}

static struct fr_session *fr_by_se(struct fuse_session *se)
{
	int i;

	for (i = 0; i < FR_MAX_SESSIONS; i++) {
		struct fr_session *s = __atomic_load_n(&fr_sessions[i], __ATOMIC_ACQUIRE);

		if (s && s->se == se)
			return s;
	}
	return NULL;
}

/* Why the kernel did not offer FUSE_OVER_IO_URING, for the fallback message. */
static void fr_explain_no_offer(struct fr_session *s)
{
	char v = 0;
	FILE *f = fopen(FR_ENABLE_PARAM, "r");

	if (!f) {
		fr_report_fallback(s, "this kernel has no FUSE io_uring transport (INIT does not offer FUSE_OVER_IO_URING, no " FR_ENABLE_PARAM ")");
		return;
	}
	if (fread(&v, 1, 1, f) != 1)
		v = '?';
	fclose(f);
	if (v == 'N' || v == '0')
		fr_report_fallback(s, "the FUSE io_uring transport is disabled (" FR_ENABLE_PARAM " is N; echo 1 > it to enable)");
	else
		fr_report_fallback(s, "the kernel did not offer FUSE_OVER_IO_URING in INIT (was " FR_ENABLE_PARAM " enabled only after the mount?)");
}

/* Custom read: /dev/fuse requests (INIT, FORGET, INTERRUPT, or all). */
static ssize_t fr_read(int fd, void *buf, size_t buf_len, void *userdata)
{
	struct fr_session *s = fr_by_fd(fd);
	ssize_t res = read(fd, buf, buf_len);
	const struct fuse_in_header *ih = buf;

	(void)userdata;
	if (!s || res < (ssize_t)sizeof(*ih))
		return res;
	fr_inc(&s->dev_requests);
	switch (ih->opcode) {
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		fr_inc(&s->dev_forgets);
		break;
	case FUSE_INTERRUPT:
		fr_inc(&s->dev_interrupts);
		break;
	case FUSE_INIT:
		if ((size_t)res >= sizeof(*ih) + sizeof(struct fuse_init_in)) {
			const struct fuse_init_in *in = (const void *)(ih + 1);

			s->kernel_offers = (in->flags & FUSE_INIT_EXT) &&
				(in->flags2 & (FUSE_OVER_IO_URING >> 32));
		} else {
			s->kernel_offers = 0;
		}
		__atomic_store_n(&s->init_unique, ih->unique, __ATOMIC_RELEASE);
		__atomic_store_n(&s->init_seen, 1, __ATOMIC_RELEASE);
		break;
	}
	return res;
}

static size_t fr_max_payload(const struct fuse_init_out *io)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t max_pages = (io->flags & FUSE_MAX_PAGES) ? io->max_pages : 32;
	size_t p = 8192;

	if (io->max_write > p)
		p = io->max_write;
	if (max_pages * page > p)
		p = max_pages * page;
	return p;
}

/* The INIT reply: ask for the ring if wanted and offered, then start it. */
static ssize_t fr_reply_init(struct fr_session *s, int fd, const struct iovec *iov, int count)
{
	char buf[1024];
	struct fuse_out_header *oh = (void *)buf;
	struct fuse_init_out *io = (void *)(buf + sizeof(*oh));
	size_t len = 0;
	ssize_t res;
	int i, ret, want = 0;

	for (i = 0; i < count; i++) {
		if (len + iov[i].iov_len > sizeof(buf))
			return writev(fd, iov, count);
		memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	__atomic_store_n(&s->init_seen, 0, __ATOMIC_RELEASE);
	if (s->opts.use_ring && oh->error == 0 && len >= sizeof(*oh) + sizeof(*io)) {
		if (!s->kernel_offers) {
			fr_explain_no_offer(s);
		} else {
			s->payload_max = fr_max_payload(io);
			ret = fr_queues_prepare(s);
			if (ret) {
				char why[128];

				snprintf(why, sizeof(why), "cannot set up the io_uring queues: %s", strerror(-ret));
				fr_report_fallback(s, why);
			} else {
				io->flags |= FUSE_INIT_EXT;
				io->flags2 |= FUSE_OVER_IO_URING >> 32;
				want = 1;
			}
		}
	}
	res = write(fd, buf, len);
	if (res < 0 || !want) {
		int err = errno;

		if (want)
			fr_queues_destroy(s);
		errno = err;
		return res;
	}
	s->ring_active = 1;
	fr_log(s, "INIT: FUSE_OVER_IO_URING accepted; %u queues x %u entries, %zu-byte payloads\n",
	       s->nr_queues, s->opts.queue_depth, s->payload_max);
	if (fr_queues_start(s)) {
		/* The kernel waits for every queue: end the connection. */
		fprintf(stderr, "fuse-ring: cannot start the queues; ending the session\n");
		fuse_session_exit(s->se);
	}
	return res;
}

/* Custom writev: ring replies go to their entry, the rest to /dev/fuse. */
static ssize_t fr_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fr_session *s = fr_by_fd(fd);
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fr_ent *ent;

	(void)userdata;
	if (!s || iov[0].iov_len < sizeof(*oh) || oh->unique == 0)
		return writev(fd, iov, count);
	if (__atomic_load_n(&s->init_seen, __ATOMIC_ACQUIRE) &&
	    oh->unique == __atomic_load_n(&s->init_unique, __ATOMIC_ACQUIRE))
		return fr_reply_init(s, fd, iov, count);
	ent = fr_hash_take(s, oh->unique);
	if (ent)
		return fr_queue_reply(ent, iov, count);
	return writev(fd, iov, count);
}

static const struct fuse_custom_io fr_io = {
	.read = fr_read,
	.writev = fr_writev,
	/* no splice: libfuse then never offers FUSE_CAP_SPLICE_* */
};

int fuse_ring_mount(struct fuse_session *se, const char *mountpoint,
		    const struct fuse_ring_opts *opts)
{
	struct fr_session *s;
	int i, ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		perror("fuse-ring");
		return -1;
	}
	s->se = se;
	s->opts.use_ring = 1;
	if (opts)
		s->opts = *opts;
	if (!s->opts.queue_depth)
		s->opts.queue_depth = FR_DEFAULT_DEPTH;
	pthread_mutex_init(&s->hash_lock, NULL);

	if (fuse_session_mount(se, mountpoint) != 0) {
		free(s);
		return -1;
	}
	s->fd = fuse_session_fd(se);
	s->ring_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (s->ring_fd < 0) {
		perror("fuse-ring: dup /dev/fuse fd");
		fuse_session_unmount(se);
		free(s);
		return -1;
	}

	pthread_mutex_lock(&fr_sessions_lock);
	for (i = 0; i < FR_MAX_SESSIONS && fr_sessions[i]; i++)
		;
	if (i < FR_MAX_SESSIONS)
		__atomic_store_n(&fr_sessions[i], s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fr_sessions_lock);
	if (i == FR_MAX_SESSIONS) {
		fprintf(stderr, "fuse-ring: too many sessions in this process\n");
		goto fail;
	}
	/* Same fd: fuse_session_unmount() and fuse_session_destroy() still work. */
	ret = fuse_session_custom_io(se, &fr_io, s->fd);
	if (ret) {
		fprintf(stderr, "fuse-ring: fuse_session_custom_io: %s\n", strerror(-ret));
		__atomic_store_n(&fr_sessions[i], NULL, __ATOMIC_RELEASE);
		goto fail;
	}
	fr_log(s, "mounted %s (fd %d), %s requested\n", mountpoint, s->fd,
	       s->opts.use_ring ? "io_uring transport" : "/dev/fuse only");
	return 0;
fail:
	fuse_session_unmount(se);
	close(s->ring_fd);
	free(s);
	return -1;
}

int fuse_ring_get_stats(struct fuse_session *se, struct fuse_ring_stats *st)
{
	struct fr_session *s = fr_by_se(se);
	unsigned int i;

	if (!s)
		return -1;
	memset(st, 0, sizeof(*st));
	for (i = 0; i < s->nr_queues; i++) {
		st->ring_requests += fr_get(&s->queues[i].requests);
		st->ring_commits += fr_get(&s->queues[i].commits);
		st->poll_hits += fr_get(&s->queues[i].poll_hits);
	}
	st->dev_requests = fr_get(&s->dev_requests);
	st->dev_forgets = fr_get(&s->dev_forgets);
	st->dev_interrupts = fr_get(&s->dev_interrupts);
	st->foreign_replies = fr_get(&s->foreign_replies);
	st->nr_queues = s->nr_queues;
	st->ring_active = s->ring_active;
	return 0;
}

void fuse_ring_unmount(struct fuse_session *se)
{
	struct fr_session *s = fr_by_se(se);
	struct fuse_ring_stats st;
	unsigned int i;

	/* Unmounting ends the connection: the ring's commands complete. */
	fuse_session_unmount(se);
	if (!s)
		return;
	fr_queues_stop(s);
	fuse_ring_get_stats(se, &st);
	fprintf(stderr, "fuse-ring: requests: ring=%llu dev=%llu (forget=%llu interrupt=%llu) ring_commits=%llu foreign_thread_replies=%llu poll_hits=%llu queues=%u transport=%s\n",
		(unsigned long long)st.ring_requests, (unsigned long long)st.dev_requests,
		(unsigned long long)st.dev_forgets, (unsigned long long)st.dev_interrupts,
		(unsigned long long)st.ring_commits, (unsigned long long)st.foreign_replies,
		(unsigned long long)st.poll_hits,
		st.nr_queues, st.ring_active ? "io_uring" : "/dev/fuse");
	if (s->opts.verbose)
		for (i = 0; i < s->nr_queues; i++)
			fprintf(stderr, "fuse-ring: queue %u: %llu requests\n", i,
				(unsigned long long)fr_get(&s->queues[i].requests));
	fr_queues_destroy(s);
	/* Last reference to the device file if the mount was busy: ends it. */
	close(s->ring_fd);
	pthread_mutex_lock(&fr_sessions_lock);
	for (i = 0; i < FR_MAX_SESSIONS; i++)
		if (fr_sessions[i] == s)
			__atomic_store_n(&fr_sessions[i], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fr_sessions_lock);
	/* The loop and the queue threads are gone: no callback can use @s. */
	pthread_mutex_destroy(&s->hash_lock);
	free(s);
}
