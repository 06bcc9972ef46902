/*
 * The session side: mount through libfuse, install the custom I/O
 * callbacks, watch the INIT exchange on /dev/fuse, turn the ring on in the
 * INIT reply, feed the ring's requests to libfuse's loop, route replies by
 * unique, count requests per transport.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fuse_ring_internal.h"

#define FR_MAX_SESSIONS 16
#define FR_DEFAULT_DEPTH 4
#define FR_XATTR_MAX 65536	/* XATTR_SIZE_MAX, XATTR_LIST_MAX */
#define FR_ENABLE_PARAM "/sys/module/fuse/parameters/enable_uring"

static struct fr_session *fr_sessions[FR_MAX_SESSIONS];
static pthread_mutex_t fr_sessions_lock = PTHREAD_MUTEX_INITIALIZER;

int (*fr_real_mount)(struct fuse_session *se, const char *mountpoint) = fuse_session_mount;
void (*fr_real_unmount)(struct fuse_session *se) = fuse_session_unmount;

static int fr_is_fuse_dev(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == 10 && minor(st.st_rdev) == 229;
}

/*
 * The session of @fd: libfuse's own fd, or a clone of it (clone_fd gives
 * each worker thread its own, INIT included). libfuse passes the custom
 * I/O callbacks the file system's userdata, not ours, so a clone is
 * matched to the only ring session of the process.
 */
static struct fr_session *fr_by_fd(int fd)
{
	static __thread struct fr_session *clone_s;	/* this thread's clone */
	static __thread int clone_fd = -1;
	struct fr_session *s, *only = NULL;
	int i, n = 0;

	for (i = 0; i < FR_MAX_SESSIONS; i++) {
		s = __atomic_load_n(&fr_sessions[i], __ATOMIC_ACQUIRE);
		if (!s || !s->io_installed)
			continue;
		if (s->fd == fd)
			return s;
		only = s;
		n++;
	}
	if (n == 1 && fd == clone_fd && only == clone_s)
		return only;
	if (n == 1 && fr_is_fuse_dev(fd)) {
		clone_fd = fd;
		clone_s = only;
		return only;
	}
	if (n > 1 && fr_is_fuse_dev(fd)) {
		static int warned;

		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "fuse-ring: a cloned /dev/fuse fd with several sessions in the process: its requests go through /dev/fuse\n");
	}
	return NULL;
}

struct fr_session *fr_by_se(struct fuse_session *se)
{
	int i;

	for (i = 0; i < FR_MAX_SESSIONS; i++) {
		struct fr_session *s = __atomic_load_n(&fr_sessions[i], __ATOMIC_ACQUIRE);

		if (s && s->se == se)
			return s;
	}
	return NULL;
}

/* Whether the module parameter says the transport is off (or absent). */
int fr_ring_param_off(void)
{
	char v = 0;
	FILE *f = fopen(FR_ENABLE_PARAM, "r");

	if (!f)
		return 1;
	if (fread(&v, 1, 1, f) != 1)
		v = '?';
	fclose(f);
	return v == 'N' || v == '0';
}

/* Why the kernel did not offer FUSE_OVER_IO_URING, for the fallback message. */
void fr_explain_no_offer(struct fr_session *s)
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

/* Count a request read from /dev/fuse; note what INIT offers. */
static void fr_note_dev(struct fr_session *s, const void *buf, ssize_t res)
{
	const struct fuse_in_header *ih = buf;

	if (res < (ssize_t)sizeof(*ih))
		return;
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
}

void fr_ready_push(struct fr_session *s, struct fr_ent *ent)
{
	uint64_t one = 1;

	ent->ready_next = NULL;
	pthread_mutex_lock(&s->ready_lock);
	if (s->ready_tail)
		s->ready_tail->ready_next = ent;
	else
		s->ready_head = ent;
	s->ready_tail = ent;
	pthread_mutex_unlock(&s->ready_lock);
	/* after the push: a reader that consumed a count finds an entry */
	if (write(s->ready_efd, &one, sizeof(one)) != sizeof(one))
		perror("fuse-ring: eventfd write");
}

static struct fr_ent *fr_ready_take(struct fr_session *s)
{
	struct fr_ent *ent;
	uint64_t v;

	if (read(s->ready_efd, &v, sizeof(v)) != sizeof(v))
		return NULL;
	pthread_mutex_lock(&s->ready_lock);
	ent = s->ready_head;
	if (ent) {
		s->ready_head = ent->ready_next;
		if (!s->ready_head)
			s->ready_tail = NULL;
	}
	pthread_mutex_unlock(&s->ready_lock);
	return ent;
}

/* Answer a ring request libfuse never sees, with @err. */
static void fr_ring_refuse(struct fr_ent *ent, int err)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = -err, .unique = ent->unique,
	};
	struct iovec iov = { &oh, sizeof(oh) };

	if (fr_hash_take(ent->q->s, ent->unique) == ent)
		fr_queue_reply(ent, &iov, 1);
}

/*
 * Sleep until @fd (the device, non-blocking) or the ready list may have a
 * request: 0, or -1 with errno (EINTR once the session is exiting, for
 * libfuse to see it exited and leave its loop).
 */
static int fr_wait(struct fr_session *s, int fd)
{
	struct pollfd pfd[3] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = s->ready_efd, .events = POLLIN },
		{ .fd = s->wake_efd, .events = POLLIN },
	};

	if (poll(pfd, 3, -1) < 0)
		return -1;
	if (pfd[2].revents) {
		errno = EINTR;
		return -1;
	}
	return 0;
}

/*
 * The session loop's threads wait here for the next request, from a ring
 * queue or from /dev/fuse (INIT, FORGET, INTERRUPT, or everything without
 * the ring). The device fd is non-blocking: threads that share it must not
 * sleep in read() while ring requests wait for them.
 */
static ssize_t fr_next_request(struct fr_session *s, int fd, void *buf, size_t buf_len)
{
	struct fr_ent *ent;
	ssize_t res;

	for (;;) {
		ent = fr_ready_take(s);
		if (ent) {
			if (ent->req_len > buf_len) {
				fr_ring_refuse(ent, EIO);
				continue;
			}
			memcpy(buf, ent->req, ent->req_len);
			return ent->req_len;
		}
		res = read(fd, buf, buf_len);
		if (res >= 0) {
			fr_note_dev(s, buf, res);
			return res;
		}
		if (errno != EAGAIN || fr_wait(s, fd))
			return -1;
	}
}

/* Make @fd non-blocking once per thread (each clone_fd worker has its own). */
static void fr_nonblock(int fd)
{
	static __thread int done_fd = -1;
	int fl;

	if (done_fd == fd)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	done_fd = fd;
}

/* Custom read: the next request for libfuse's loop. */
static ssize_t fr_read(int fd, void *buf, size_t buf_len, void *userdata)
{
	struct fr_session *s = fr_by_fd(fd);

	(void)userdata;
	if (!s)
		return read(fd, buf, buf_len);
	fr_nonblock(fd);
	return fr_next_request(s, fd, buf, buf_len);
}

/*
 * Custom splice_receive, offered so that libfuse keeps the splice
 * capabilities a file system may want (fuse-overlayfs always asks for
 * SPLICE_READ): a ring request is written into libfuse's pipe, a
 * /dev/fuse request spliced as libfuse would.
 */
static ssize_t fr_splice_receive(int fdin, off_t *offin, int fdout, off_t *offout,
				 size_t len, unsigned int flags, void *userdata)
{
	struct fr_session *s = fr_by_fd(fdin);
	struct fr_ent *ent;
	ssize_t res;

	(void)userdata;
	if (!s)
		return splice(fdin, offin, fdout, offout, len, flags);
	fr_nonblock(fdin);
	for (;;) {
		ent = fr_ready_take(s);
		if (ent) {
			/* libfuse's pipe is empty and at least len bytes big */
			if (ent->req_len > len ||
			    write(fdout, ent->req, ent->req_len) != (ssize_t)ent->req_len) {
				fr_ring_refuse(ent, EIO);
				continue;
			}
			return ent->req_len;
		}
		res = splice(fdin, offin, fdout, offout, len, flags);
		if (res >= 0) {
			fr_inc(&s->dev_requests);
			return res;
		}
		if (errno != EAGAIN || fr_wait(s, fdin))
			return -1;
	}
}

/* The kernel's largest request or reply payload on the ring. */
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
		} else if (fr_max_payload(io) < FR_XATTR_MAX) {
			char why[192];

			/* /dev/fuse takes such replies whatever max_write is */
			snprintf(why, sizeof(why),
				 "the ring's largest reply (%zu bytes: max_write, max_pages) is below the 64 KiB a getxattr or listxattr may answer",
				 fr_max_payload(io));
			fr_report_fallback(s, why);
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
	if (fr_queues_start(s))
		fr_session_fail(s, "cannot start the queue threads");
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

/* Custom splice_send: a reply libfuse spliced into its pipe, routed as a write. */
static ssize_t fr_splice_send(int fdin, off_t *offin, int fdout, off_t *offout,
			      size_t len, unsigned int flags, void *userdata)
{
	struct fr_session *s = fr_by_fd(fdout);
	struct iovec iov;
	size_t got = 0;
	ssize_t n;
	char *buf;

	if (!s || !s->ring_active)
		return splice(fdin, offin, fdout, offout, len, flags);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -1;
	while (got < len) {
		n = read(fdin, buf + got, len - got);
		if (n <= 0) {
			free(buf);
			if (n == 0)
				errno = EIO;
			return -1;
		}
		got += n;
	}
	iov.iov_base = buf;
	iov.iov_len = len;
	n = fr_writev(fdout, &iov, 1, userdata);
	free(buf);
	return n;
}

static const struct fuse_custom_io fr_io = {
	.read = fr_read,
	.writev = fr_writev,
	.splice_receive = fr_splice_receive,
	.splice_send = fr_splice_send,
};

static void fr_free_session(struct fr_session *s)
{
	if (s->ring_fd >= 0)
		close(s->ring_fd);
	if (s->ready_efd >= 0)
		close(s->ready_efd);
	if (s->wake_efd >= 0)
		close(s->wake_efd);
	pthread_mutex_destroy(&s->hash_lock);
	pthread_mutex_destroy(&s->ready_lock);
	free(s);
}

static int fr_add_session(struct fr_session *s)
{
	int i;

	pthread_mutex_lock(&fr_sessions_lock);
	for (i = 0; i < FR_MAX_SESSIONS && fr_sessions[i]; i++)
		;
	if (i < FR_MAX_SESSIONS)
		__atomic_store_n(&fr_sessions[i], s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fr_sessions_lock);
	return i < FR_MAX_SESSIONS ? 0 : -1;
}

static void fr_del_session(struct fr_session *s)
{
	int i;

	pthread_mutex_lock(&fr_sessions_lock);
	for (i = 0; i < FR_MAX_SESSIONS; i++)
		if (fr_sessions[i] == s)
			__atomic_store_n(&fr_sessions[i], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fr_sessions_lock);
}

/*
 * Mount and record @se. Without the ring (not wanted, or enable_uring off
 * now) the session stays libfuse's alone, so that it behaves exactly as
 * without this library.
 */
struct fr_session *fr_mount(struct fuse_session *se, const char *mountpoint,
			    const struct fuse_ring_opts *opts)
{
	struct fr_session *s;

	s = calloc(1, sizeof(*s));
	if (!s) {
		perror("fuse-ring");
		return NULL;
	}
	s->se = se;
	s->opts.use_ring = 1;
	if (opts)
		s->opts = *opts;
	if (!s->opts.queue_depth)
		s->opts.queue_depth = FR_DEFAULT_DEPTH;
	s->ring_fd = s->ready_efd = s->wake_efd = -1;
	pthread_mutex_init(&s->hash_lock, NULL);
	pthread_mutex_init(&s->ready_lock, NULL);

	if (fr_real_mount(se, mountpoint) != 0) {
		fr_free_session(s);
		return NULL;
	}
	s->fd = fuse_session_fd(se);
	if (s->opts.use_ring && fr_ring_param_off()) {
		fr_explain_no_offer(s);
		s->opts.use_ring = 0;
	}
	if (fr_add_session(s)) {
		fprintf(stderr, "fuse-ring: too many sessions in this process; using /dev/fuse\n");
		s->opts.use_ring = 0;
		s->fd = -1;
		return s;	/* not recorded: fuse_ring_unmount() frees it */
	}
	fr_log(s, "mounted %s (fd %d), %s requested\n", mountpoint, s->fd,
	       s->opts.use_ring ? "io_uring transport" : "/dev/fuse only");
	return s;
}

/* Install the custom I/O on the mounted session, before INIT is read. */
int fr_install(struct fr_session *s)
{
	int ret;

	if (!s->opts.use_ring || s->io_installed)
		return 0;
	s->ring_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	s->ready_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	s->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ring_fd < 0 || s->ready_efd < 0 || s->wake_efd < 0) {
		char why[96];

		snprintf(why, sizeof(why), "cannot set up: %s", strerror(errno));
		fr_report_fallback(s, why);
		s->opts.use_ring = 0;
		return -1;
	}
	/* Same fd: fuse_session_unmount() and fuse_session_destroy() still work. */
	ret = fuse_session_custom_io(s->se, &fr_io, s->fd);
	if (ret) {
		char why[96];

		snprintf(why, sizeof(why), "fuse_session_custom_io: %s", strerror(-ret));
		fr_report_fallback(s, why);
		s->opts.use_ring = 0;
		return -1;
	}
	__atomic_store_n(&s->io_installed, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The ring cannot serve any more (every queue failed after INIT accepted
 * it): end the session, for the mount to fail instead of hanging.
 */
void fr_session_fail(struct fr_session *s, const char *why)
{
	uint64_t one = 1;

	fprintf(stderr, "fuse-ring: %s; no queue left to serve the ring: ending the session\n", why);
	fuse_session_exit(s->se);
	if (write(s->wake_efd, &one, sizeof(one)) != sizeof(one))
		perror("fuse-ring: eventfd write");
}

int fuse_ring_mount(struct fuse_session *se, const char *mountpoint,
		    const struct fuse_ring_opts *opts)
{
	struct fr_session *s = fr_mount(se, mountpoint, opts);

	if (!s)
		return -1;
	fr_install(s);
	return 0;
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
	fr_real_unmount(se);
	if (!s)
		return;
	fr_queues_stop(s);
	fuse_ring_get_stats(se, &st);
	if (!s->opts.no_stats)
		fprintf(stderr, "fuse-ring: requests: ring=%llu dev=%llu (forget=%llu interrupt=%llu) ring_commits=%llu foreign_thread_replies=%llu poll_hits=%llu queues=%u transport=%s%s\n",
			(unsigned long long)st.ring_requests, (unsigned long long)st.dev_requests,
			(unsigned long long)st.dev_forgets, (unsigned long long)st.dev_interrupts,
			(unsigned long long)st.ring_commits, (unsigned long long)st.foreign_replies,
			(unsigned long long)st.poll_hits,
			st.nr_queues, st.ring_active ? "io_uring" : "/dev/fuse",
			s->io_installed ? "" : " (libfuse's own I/O: dev not counted)");
	if (s->opts.verbose)
		for (i = 0; i < s->nr_queues; i++)
			fprintf(stderr, "fuse-ring: queue %u: %llu requests\n", i,
				(unsigned long long)fr_get(&s->queues[i].requests));
	fr_queues_destroy(s);
	fr_del_session(s);
	/* The loop and the queue threads are gone: no callback can use @s. */
	fr_free_session(s);
}
