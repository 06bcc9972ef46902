/*
 * The io_uring queues: one per allowed CPU, each with its own ring, thread
 * and entries. The queue thread is the only one that touches its ring (all
 * commands are issued by it, so they live as long as it does); replies from
 * other threads are handed over through a list and an eventfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuse_ring_internal.h"

/* Set-up flags newer than liburing 2.3's headers */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN	(1U << 8)
#endif
#ifndef IORING_SETUP_TASKRUN_FLAG
#define IORING_SETUP_TASKRUN_FLAG	(1U << 9)
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER	(1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN	(1U << 13)
#endif

#define FR_TAG_EFD 1ULL			/* user_data of the eventfd read */
#define FR_REGISTER_TRIES 60		/* -EAGAIN retries of REGISTER */

static __thread struct fr_queue *fr_current_queue;

void fr_report_fallback(struct fr_session *s, const char *why)
{
	if (__atomic_exchange_n(&s->fallback_reported, 1, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "fuse-ring: %s; falling back to /dev/fuse\n", why);
}

static struct io_uring_sqe *fr_get_sqe(struct fr_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe) {
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	return sqe;
}

/* Queue thread only: prepare REGISTER or COMMIT_AND_FETCH for @ent. */
static void fr_prep_cmd(struct fr_queue *q, struct fr_ent *ent, uint32_t cmd_op)
{
	struct fuse_uring_cmd_req req = { .qid = q->qid };
	struct io_uring_sqe *sqe = fr_get_sqe(q);

	if (!sqe) {	/* cannot happen: the SQ holds every entry's command */
		fprintf(stderr, "fuse-ring: queue %u: no free SQE\n", q->qid);
		abort();
	}
	if (cmd_op == FUSE_IO_URING_CMD_REGISTER) {
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, q->s->ring_fd, ent->reg_iov, 2, 0);
		ent->state = FR_ENT_REGISTERING;
	} else {
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, q->s->ring_fd, NULL, 0, 0);
		req.commit_id = ent->unique;
		ent->state = FR_ENT_WAITING;
	}
	sqe->cmd_op = cmd_op;	/* after prep_rw, which clears it (union with off) */
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &req, sizeof(req));
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)ent);
}

static void fr_prep_efd_read(struct fr_queue *q)
{
	struct io_uring_sqe *sqe = fr_get_sqe(q);

	if (!sqe)
		abort();
	io_uring_prep_read(sqe, q->efd, &q->efd_val, sizeof(q->efd_val), 0);
	io_uring_sqe_set_data64(sqe, FR_TAG_EFD);
}

/* Queue thread: commit the replies other threads handed over. */
static void fr_drain_commits(struct fr_queue *q)
{
	struct fr_ent *ent, *next;

	pthread_mutex_lock(&q->lock);
	ent = q->commit_head;
	q->commit_head = q->commit_tail = NULL;
	pthread_mutex_unlock(&q->lock);
	for (; ent; ent = next) {
		next = ent->commit_next;
		ent->commit_next = NULL;
		fr_prep_cmd(q, ent, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	}
}

/* Any thread: the reply to the request @ent carries (libfuse's writev). */
ssize_t fr_queue_reply(struct fr_ent *ent, const struct iovec *iov, int count)
{
	struct fr_queue *q = ent->q;
	struct fr_session *s = q->s;
	struct fuse_out_header oh;
	size_t total = 0, off = 0, hdr_extra;
	int i;

	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	hdr_extra = iov[0].iov_len - sizeof(oh);
	total = hdr_extra;
	for (i = 1; i < count; i++)
		total += iov[i].iov_len;

	if (total > s->payload_max) {
		fprintf(stderr, "fuse-ring: reply of %zu bytes to unique %llu exceeds the %zu-byte payload buffer; sending -EIO\n",
			total, (unsigned long long)oh.unique, s->payload_max);
		oh.error = -EIO;
		oh.len = sizeof(oh);
	} else {
		if (hdr_extra) {
			memcpy(ent->payload, (char *)iov[0].iov_base + sizeof(oh), hdr_extra);
			off = hdr_extra;
		}
		for (i = 1; i < count; i++) {
			memcpy(ent->payload + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
	}
	memcpy(ent->hdr->in_out, &oh, sizeof(oh));
	ent->hdr->ring_ent_in_out.payload_sz = oh.error ? 0 : off;
	fr_inc(&q->commits);

	if (fr_current_queue == q) {
		fr_prep_cmd(q, ent, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	} else {
		uint64_t one = 1;

		fr_inc(&s->foreign_replies);
		pthread_mutex_lock(&q->lock);
		if (q->commit_tail)
			q->commit_tail->commit_next = ent;
		else
			q->commit_head = ent;
		q->commit_tail = ent;
		pthread_mutex_unlock(&q->lock);
		if (write(q->efd, &one, sizeof(one)) != sizeof(one))
			perror("fuse-ring: eventfd write");
	}
	return sizeof(oh) + total;
}

/* Queue thread: an entry now holds a request; let libfuse dispatch it. */
static void fr_serve(struct fr_queue *q, struct fr_ent *ent)
{
	struct fr_session *s = q->s;
	uint64_t commit_id = ent->hdr->ring_ent_in_out.commit_id;
	char *start;
	size_t len;

	len = fr_request_rebuild(ent, s->payload_max, &start);
	if (!len || ((struct fuse_in_header *)start)->unique != commit_id) {
		struct fuse_out_header oh = {
			.len = sizeof(oh), .error = -EIO, .unique = commit_id,
		};

		fprintf(stderr, "fuse-ring: queue %u: malformed request (commit_id %llu, payload_sz %u); answering -EIO\n",
			q->qid, (unsigned long long)commit_id,
			ent->hdr->ring_ent_in_out.payload_sz);
		ent->unique = commit_id;
		memcpy(ent->hdr->in_out, &oh, sizeof(oh));
		ent->hdr->ring_ent_in_out.payload_sz = 0;
		fr_prep_cmd(q, ent, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
		return;
	}
	ent->unique = commit_id;
	ent->state = FR_ENT_IN_FS;
	ent->req = start;
	ent->req_len = len;
	fr_hash_add(s, ent);
	fr_inc(&q->requests);
	q->served++;
	fr_ready_push(s, ent);
}

static void fr_backoff(unsigned int tries)
{
	struct timespec ts = { 0, 1000000L << (tries < 5 ? tries : 5) };

	if (ts.tv_nsec > 50000000L)
		ts.tv_nsec = 50000000L;
	nanosleep(&ts, NULL);
}

static void fr_ent_completed(struct fr_queue *q, struct fr_ent *ent, int res)
{
	struct fr_session *s = q->s;
	enum fr_ent_state was = ent->state;
	char why[160];

	if (res == 0) {
		fr_serve(q, ent);
		return;
	}
	if (was == FR_ENT_REGISTERING && res == -EAGAIN &&
	    ent->register_tries < FR_REGISTER_TRIES) {
		fr_backoff(ent->register_tries++);
		fr_prep_cmd(q, ent, FUSE_IO_URING_CMD_REGISTER);
		return;
	}
	ent->state = FR_ENT_DEAD;
	q->nr_live--;
	if (res == -ENOTCONN || res == -ECONNABORTED || res == -ECANCELED || res == -ENODEV) {
		fr_log(s, "queue %u: entry ended: %s\n", q->qid, strerror(-res));
		return;
	}
	if (was == FR_ENT_REGISTERING) {
		snprintf(why, sizeof(why), "REGISTER on queue %u failed: %s%s",
			 q->qid, strerror(-res),
			 res == -EOPNOTSUPP ? " (transport disabled)" : "");
		fr_report_fallback(s, why);
	} else {
		fprintf(stderr, "fuse-ring: queue %u: COMMIT_AND_FETCH of unique %llu failed: %s\n",
			q->qid, (unsigned long long)ent->unique, strerror(-res));
	}
}

/*
 * FUSE_RING_FAULT=enable|submit[:N] (tests only): the ring's enable fails,
 * or io_uring_submit_and_wait() fails once the queue served N requests.
 */
static int fr_fault(struct fr_queue *q, const char *what)
{
	const char *f = getenv("FUSE_RING_FAULT");
	size_t n = strlen(what);

	if (!f || strncmp(f, what, n) || (f[n] && f[n] != ':'))
		return 0;
	return !f[n] || q->served >= strtoul(f + n + 1, NULL, 10);
}

/* io_uring_enable_rings(), which liburing 2.3 declares but does not have */
static int fr_ring_enable(struct fr_queue *q)
{
	if (fr_fault(q, "enable")) {
		errno = EPERM;
		return -1;
	}
	return syscall(__NR_io_uring_register, q->ring.ring_fd,
		       IORING_REGISTER_ENABLE_RINGS, NULL, 0);
}

/*
 * A REGISTER the kernel refuses (no iovecs) turns the ring off for the
 * connection while no queue has registered: requests waiting for the ring
 * go through /dev/fuse. Sent from a ring of its own, since the queue's
 * could not be used.
 */
static void fr_refuse_ring(struct fr_queue *q)
{
	struct fuse_uring_cmd_req req = { .qid = q->qid };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring tmp;

	if (io_uring_queue_init(2, &tmp, IORING_SETUP_SQE128))
		return;
	sqe = io_uring_get_sqe(&tmp);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, q->s->ring_fd, NULL, 0, 0);
	sqe->cmd_op = FUSE_IO_URING_CMD_REGISTER;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &req, sizeof(req));
	if (io_uring_submit_and_wait(&tmp, 1) == 1 && io_uring_peek_cqe(&tmp, &cqe) == 0)
		io_uring_cqe_seen(&tmp, cqe);
	io_uring_queue_exit(&tmp);
}

/*
 * Queue thread: its ring cannot serve. Closing the ring ends its commands
 * (the kernel moves their requests to an error or to another queue). If
 * it never registered (@before_register), refuse the ring so that nothing
 * waits for it; when every queue is gone, serve over /dev/fuse if no
 * queue ever registered, else end the session.
 */
static void fr_queue_dead(struct fr_queue *q, const char *why, int before_register)
{
	struct fr_session *s = q->s;
	unsigned int dead;

	if (before_register)
		fr_refuse_ring(q);
	if (q->ring_ok) {
		io_uring_queue_exit(&q->ring);
		q->ring_ok = 0;
	}
	dead = __atomic_add_fetch(&s->nr_dead_queues, 1, __ATOMIC_ACQ_REL);
	if (dead < s->nr_queues) {
		fprintf(stderr, "fuse-ring: %s; %u of %u queues left\n", why,
			s->nr_queues - dead, s->nr_queues);
		return;
	}
	if (before_register)
		fr_report_fallback(s, why);
	else
		fr_session_fail(s, why);
}

static uint64_t fr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * opts.poll_us: look for a completion until the bound passes, running the
 * task work the kernel flags (IORING_SQ_TASKRUN, with COOP or DEFER)
 * without waiting. Between looks, pause (the spin-wait hint: an SMT
 * sibling or another vCPU gets the time) and yield: with a queue per CPU
 * the caller of the next request runs on this thread's CPU, and a spin
 * that does not give way holds it off until the bound. Returns whether a
 * completion is there.
 */
static int fr_poll(struct fr_queue *q)
{
	uint64_t end = fr_now_ns() + (uint64_t)q->s->opts.poll_us * 1000;

	for (;;) {
		if (io_uring_cq_ready(&q->ring))
			return 1;
		if (IO_URING_READ_ONCE(*q->ring.sq.kflags) & IORING_SQ_TASKRUN) {
			io_uring_get_events(&q->ring);
			continue;
		}
		if (fr_now_ns() >= end)
			return 0;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		sched_yield();
	}
}

static void *fr_queue_main(void *arg)
{
	struct fr_queue *q = arg;
	struct io_uring_cqe *cqe;
	cpu_set_t set;
	unsigned int i;
	int ret;

	fr_current_queue = q;
	CPU_ZERO(&set);
	CPU_SET(q->qid, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	/*
	 * A SINGLE_ISSUER ring belongs to the task that enables it: this
	 * thread, the only one that submits to it and waits on it.
	 */
	if (q->ring_disabled && fr_ring_enable(q) < 0) {
		char why[96];

		snprintf(why, sizeof(why), "enabling the ring of queue %u failed: %s",
			 q->qid, strerror(errno));
		fr_queue_dead(q, why, 1);
		return NULL;
	}

	for (i = 0; i < q->s->opts.queue_depth; i++)
		fr_prep_cmd(q, &q->ents[i], FUSE_IO_URING_CMD_REGISTER);
	fr_prep_efd_read(q);

	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE) && q->nr_live > 0) {
		if (q->s->opts.poll_us) {
			ret = io_uring_submit(&q->ring);
			if (ret >= 0 && fr_poll(q))
				fr_inc(&q->poll_hits);
			else
				ret = io_uring_submit_and_wait(&q->ring, 1);
		} else {
			ret = io_uring_submit_and_wait(&q->ring, 1);
		}
		if (fr_fault(q, "submit"))
			ret = -EFAULT;
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			char why[96];

			snprintf(why, sizeof(why), "queue %u: io_uring_submit_and_wait: %s",
				 q->qid, strerror(-ret));
			fr_queue_dead(q, why, 0);
			return NULL;
		}
		while (io_uring_peek_cqe(&q->ring, &cqe) == 0) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(&q->ring, cqe);
			if (ud == FR_TAG_EFD) {
				fr_drain_commits(q);
				fr_prep_efd_read(q);
				continue;
			}
			fr_ent_completed(q, (struct fr_ent *)(uintptr_t)ud, res);
		}
	}
	/* Commits handed over meanwhile: send them, the kernel expects them. */
	fr_drain_commits(q);
	io_uring_submit(&q->ring);
	fr_log(q->s, "queue %u: thread exits (%u live entries)\n", q->qid, q->nr_live);
	return NULL;
}

static void fr_queue_free(struct fr_queue *q, unsigned int depth)
{
	unsigned int i;

	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	if (q->efd >= 0)
		close(q->efd);
	if (!q->ents)
		return;
	/*
	 * Entries still registered (stop before the connection ended) keep
	 * their buffers: the kernel knows their addresses until the
	 * connection goes down with /dev/fuse's close.
	 */
	if (q->nr_live == 0 || !q->thread_started) {
		for (i = 0; i < depth; i++) {
			free(q->ents[i].hdr);
			free(q->ents[i].buf);
		}
		free(q->ents);
	}
	q->ents = NULL;
}

static void fr_queues_free(struct fr_session *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_queues; i++)
		fr_queue_free(&s->queues[i], s->opts.queue_depth);
	free(s->queues);
	s->queues = NULL;
	s->nr_queues = 0;
	fr_hash_free(s);
}

/*
 * The queue's ring, with the task-work set-up the options ask for. DEFER
 * is made disabled, for the queue thread to enable: the ring is made
 * here, in the thread that mounts. A kernel that does not know a set-up
 * (-EINVAL) gets the plain one.
 */
static int fr_ring_init(struct fr_queue *q, unsigned int entries, int setup,
			int poll)
{
	unsigned int flags = IORING_SETUP_SQE128;
	int ret;

	switch (setup) {
	case FUSE_RING_SETUP_PLAIN:
		break;
	case FUSE_RING_SETUP_COOP:
		flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
		break;
	default:
		flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			 IORING_SETUP_R_DISABLED;
		/* the poller learns of deferred task work from the flag */
		if (poll)
			flags |= IORING_SETUP_TASKRUN_FLAG;
		break;
	}
	ret = io_uring_queue_init(entries, &q->ring, flags);
	if (ret == -EINVAL && flags != IORING_SETUP_SQE128) {
		flags = IORING_SETUP_SQE128;
		ret = io_uring_queue_init(entries, &q->ring, flags);
	}
	q->ring_disabled = ret == 0 && (flags & IORING_SETUP_R_DISABLED);
	return ret;
}

static int fr_queue_init(struct fr_session *s, struct fr_queue *q, unsigned int qid)
{
	unsigned int depth = s->opts.queue_depth, i;
	int ret;

	q->s = s;
	q->qid = qid;
	q->efd = eventfd(0, EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	pthread_mutex_init(&q->lock, NULL);
	ret = fr_ring_init(q, 2 * depth + 4, s->opts.setup, s->opts.poll_us > 0);
	if (ret < 0)
		return ret;
	q->ring_ok = 1;
	q->ents = calloc(depth, sizeof(*q->ents));
	if (!q->ents)
		return -ENOMEM;
	for (i = 0; i < depth; i++) {
		struct fr_ent *ent = &q->ents[i];

		ent->q = q;
		if (posix_memalign((void **)&ent->hdr, 64, sizeof(*ent->hdr)) ||
		    posix_memalign((void **)&ent->buf, 4096, FR_PREFIX + s->payload_max))
			return -ENOMEM;
		memset(ent->hdr, 0, sizeof(*ent->hdr));
		ent->payload = ent->buf + FR_PREFIX;
		ent->reg_iov[0].iov_base = ent->hdr;
		ent->reg_iov[0].iov_len = sizeof(*ent->hdr);
		ent->reg_iov[1].iov_base = ent->payload;
		ent->reg_iov[1].iov_len = s->payload_max;
	}
	q->nr_live = depth;
	return 0;
}

int fr_queues_prepare(struct fr_session *s)
{
	unsigned int possible = fr_possible_cpus();
	unsigned int i, *ids;
	int ret;

	ids = calloc(possible, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	s->nr_queues = fr_queue_ids(s->opts.nr_queues, possible, ids);
	s->queues = calloc(s->nr_queues, sizeof(*s->queues));
	if (!s->queues) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr_queues; i++)
		s->queues[i].efd = -1;
	ret = fr_hash_init(s, s->nr_queues * s->opts.queue_depth);
	for (i = 0; !ret && i < s->nr_queues; i++)
		ret = fr_queue_init(s, &s->queues[i], ids[i]);
	free(ids);
	if (ret)
		fr_queues_free(s);
	return ret;
}

int fr_queues_start(struct fr_session *s)
{
	sigset_t all, old;
	unsigned int i;
	int ret = 0;

	/* Queue threads take no signals: the session loop's thread does. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < s->nr_queues; i++) {
		ret = pthread_create(&s->queues[i].thread, NULL, fr_queue_main, &s->queues[i]);
		if (ret)
			break;
		s->queues[i].thread_started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		fprintf(stderr, "fuse-ring: cannot start queue thread %u: %s\n", i, strerror(ret));
	return -ret;
}

void fr_queues_stop(struct fr_session *s)
{
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < s->nr_queues; i++) {
		struct fr_queue *q = &s->queues[i];

		__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
		if (q->efd >= 0 && write(q->efd, &one, sizeof(one)) < 0)
			perror("fuse-ring: eventfd write");
	}
	for (i = 0; i < s->nr_queues; i++)
		if (s->queues[i].thread_started)
			pthread_join(s->queues[i].thread, NULL);
}

void fr_queues_destroy(struct fr_session *s)
{
	fr_queues_free(s);
}
