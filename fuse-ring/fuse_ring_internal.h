/* fuse-ring internals shared by the session, queue and request files. */
#ifndef FUSE_RING_INTERNAL_H
#define FUSE_RING_INTERNAL_H

#define FUSE_USE_VERSION 312
#include <liburing.h>		/* before any linux/ header: shared guard */
#include <linux/fuse.h>		/* the patched kernel's uAPI (7.42) */
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fuse_ring.h"

/*
 * Room in front of an entry's payload buffer where a request's
 * fuse_in_header and fixed-size first argument are put back, so that the
 * request is contiguous in /dev/fuse format without copying the payload.
 */
#define FR_PREFIX 4096

enum fr_ent_state {
	FR_ENT_REGISTERING,	/* REGISTER sent, no request yet */
	FR_ENT_WAITING,		/* COMMIT_AND_FETCH sent, waiting for the next */
	FR_ENT_IN_FS,		/* request handed to libfuse, reply pending */
	FR_ENT_DEAD,		/* command ended with an error */
};

struct fr_queue;

struct fr_ent {
	struct fr_queue *q;
	struct fuse_uring_req_header *hdr;
	char *buf;			/* FR_PREFIX + payload buffer */
	char *payload;			/* buf + FR_PREFIX, registered */
	struct iovec reg_iov[2];	/* REGISTER's iovecs, kept alive */
	uint64_t unique;		/* request being served */
	enum fr_ent_state state;
	unsigned int register_tries;
	struct fr_ent *hash_next;	/* session hash: unique -> entry */
	struct fr_ent *commit_next;	/* queue's hand-over list */
	struct fr_ent *ready_next;	/* session's list of received requests */
	char *req;			/* the request rebuilt in /dev/fuse layout */
	size_t req_len;
};

struct fr_queue {
	struct fr_session *s;
	unsigned int qid;
	struct io_uring ring;
	int ring_ok;
	int ring_disabled;		/* R_DISABLED: the thread enables it */
	pthread_t thread;
	int thread_started;
	int efd;			/* wakes the thread: commits, stop */
	uint64_t efd_val;		/* target of the pending eventfd read */
	pthread_mutex_t lock;		/* protects the hand-over list */
	struct fr_ent *commit_head, *commit_tail;
	struct fr_ent *ents;
	unsigned int nr_live;		/* entries not dead */
	int stop;
	uint64_t requests, commits;	/* atomics */
	uint64_t poll_hits;		/* atomic: see fuse_ring_stats */
	unsigned int served;		/* requests, for FUSE_RING_FAULT */
};

struct fr_session {
	struct fuse_session *se;
	int fd;				/* libfuse's /dev/fuse fd */
	int ring_fd;			/* our dup of it for the ring's commands:
					   fuse_session_unmount() closes fd first */
	struct fuse_ring_opts opts;
	int io_installed;		/* custom I/O in place (ring wanted) */

	uint64_t init_unique;		/* INIT request being answered */
	int init_seen;
	int kernel_offers;		/* INIT offered FUSE_OVER_IO_URING */
	int ring_active;
	int fallback_reported;

	size_t payload_max;
	unsigned int nr_queues;
	struct fr_queue *queues;

	/*
	 * Requests the queue threads received, for the session loop's
	 * threads to take through the read callback: libfuse's own loop
	 * runs every handler, so the server's threading model holds.
	 * ready_efd (semaphore mode) counts them; wake_efd wakes every
	 * reader once the session is exiting.
	 */
	pthread_mutex_t ready_lock;
	struct fr_ent *ready_head, *ready_tail;
	int ready_efd, wake_efd;
	unsigned int nr_dead_queues;	/* atomic: queues that stopped serving */

	pthread_mutex_t hash_lock;
	struct fr_ent **hash;
	unsigned int hash_mask;

	uint64_t dev_requests, dev_forgets, dev_interrupts, foreign_replies;
};

#define fr_log(s, ...) do { if ((s)->opts.verbose) fprintf(stderr, "fuse-ring: " __VA_ARGS__); } while (0)
#define fr_inc(p) __atomic_add_fetch((p), 1, __ATOMIC_RELAXED)
#define fr_get(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* fuse_ring_queue.c */
int fr_queues_prepare(struct fr_session *s);	/* rings + buffers, before INIT reply */
int fr_queues_start(struct fr_session *s);	/* threads, after INIT reply */
void fr_queues_stop(struct fr_session *s);	/* stop and join the threads */
void fr_queues_destroy(struct fr_session *s);	/* free rings and buffers */
ssize_t fr_queue_reply(struct fr_ent *ent, const struct iovec *iov, int count);
void fr_report_fallback(struct fr_session *s, const char *why);
void fr_ready_push(struct fr_session *s, struct fr_ent *ent);
void fr_session_fail(struct fr_session *s, const char *why);

/* fuse_ring_session.c: libfuse's mount calls (the preload sets these) */
extern int (*fr_real_mount)(struct fuse_session *se, const char *mountpoint);
extern void (*fr_real_unmount)(struct fuse_session *se);
/* Mount and record a session; the custom I/O comes with fr_install(). */
struct fr_session *fr_mount(struct fuse_session *se, const char *mountpoint,
			    const struct fuse_ring_opts *opts);
int fr_install(struct fr_session *s);
struct fr_session *fr_by_se(struct fuse_session *se);
int fr_ring_param_off(void);
void fr_explain_no_offer(struct fr_session *s);

/* fuse_ring_hash.c */
int fr_hash_init(struct fr_session *s, unsigned int nr_ents);
void fr_hash_add(struct fr_session *s, struct fr_ent *ent);
struct fr_ent *fr_hash_take(struct fr_session *s, uint64_t unique);
void fr_hash_free(struct fr_session *s);

/* fuse_ring_request.c */
long fr_op_in_size(uint32_t opcode);
size_t fr_request_rebuild(struct fr_ent *ent, size_t payload_max, char **start);

/* fuse_ring_cpus.c */
unsigned int fr_possible_cpus(void);
unsigned int fr_queue_ids(unsigned int want, unsigned int possible,
			  unsigned int *ids);

#endif
