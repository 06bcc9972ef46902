/*
 * fuse-ring: run a lowlevel libfuse3 (3.14+) file system over the FUSE
 * io_uring transport (FUSE_OVER_IO_URING, protocol 7.42), with the
 * distribution's unmodified libfuse3 doing all operation dispatch.
 *
 * Use: call fuse_ring_mount() where you would call fuse_session_mount(),
 * run fuse_session_loop() or fuse_session_loop_mt() as usual (its threads
 * take the requests of the ring and of /dev/fuse and run every handler),
 * then call fuse_ring_unmount() where you would call
 * fuse_session_unmount(), before fuse_session_destroy().
 */
#ifndef FUSE_RING_H
#define FUSE_RING_H

#include <stdint.h>

struct fuse_session;

#define FUSE_RING_API __attribute__((visibility("default")))

struct fuse_ring_opts {
	/* Ask for the io_uring transport (else plain /dev/fuse). */
	int use_ring;
	/* Ring entries per queue; 0: default 4 */
	unsigned int queue_depth;
	/*
	 * Queues to register; 0: one per CPU this process may run on
	 * (sched_getaffinity()); fewer are spread over those CPUs. The kernel
	 * (6.12 with this series) serves the other CPUs from the nearest
	 * queue. Kernels that serve nothing until every possible CPU has a
	 * queue need the number of possible CPUs (or more) here.
	 */
	unsigned int nr_queues;
	/* Print what the library does to stderr. */
	int verbose;
	/*
	 * How the queue rings run their task work (the kernel hands each
	 * request to a queue thread as io_uring task work):
	 * FUSE_RING_SETUP_DEFER (the default, 0: SINGLE_ISSUER +
	 * DEFER_TASKRUN, task work runs when the queue thread waits for
	 * completions; the fewest instructions per request measured, see the
	 * repository's README), FUSE_RING_SETUP_PLAIN (task work interrupts
	 * the thread, as a signal) or FUSE_RING_SETUP_COOP (COOP_TASKRUN +
	 * TASKRUN_FLAG). A kernel without DEFER_TASKRUN (before 6.1) gets
	 * plain.
	 */
	int setup;
	/*
	 * Microseconds a queue thread keeps looking for its next request
	 * (and the task work that brings it) before it sleeps in
	 * io_uring_enter(); 0 (the default): it sleeps at once. Polling
	 * pays only where the queue thread has a CPU to itself: with a
	 * queue per CPU the load runs on the poller's CPU, and the poll
	 * yields to it. See the repository's README before turning it on.
	 */
	unsigned int poll_us;
	/* Print no request counts at fuse_ring_unmount(). */
	int no_stats;
};

#define FUSE_RING_SETUP_DEFER	0
#define FUSE_RING_SETUP_PLAIN	1
#define FUSE_RING_SETUP_COOP	2

struct fuse_ring_stats {
	uint64_t ring_requests;		/* requests received through the ring */
	uint64_t dev_requests;		/* requests read from /dev/fuse */
	uint64_t dev_forgets;		/* FORGET + BATCH_FORGET from /dev/fuse */
	uint64_t dev_interrupts;	/* INTERRUPT from /dev/fuse */
	uint64_t ring_commits;		/* replies committed through the ring */
	uint64_t foreign_replies;	/* ring replies sent from another thread
					   than the entry's queue thread */
	uint64_t poll_hits;		/* passes whose poll found a request
					   (no sleep in io_uring_enter()) */
	unsigned int nr_queues;		/* queues started (0: no ring) */
	int ring_active;		/* INIT negotiated FUSE_OVER_IO_URING */
};

/*
 * Mount @se on @mountpoint (through fuse_session_mount(), so the usual
 * mount options apply) and install the transport. @opts NULL means
 * { .use_ring = 1 }. Returns 0, or -1 with a message on stderr.
 * The ring is set up after INIT; if the kernel does not offer it (module
 * parameter enable_uring off, or no transport), a message says so and the
 * session keeps working over /dev/fuse. Without the ring (use_ring 0, or
 * enable_uring off at mount) libfuse keeps its own I/O.
 * Handlers run in the threads of the session loop the server calls, as
 * over /dev/fuse: fuse_session_loop() runs one at a time,
 * fuse_session_loop_mt() up to its max_threads.
 */
FUSE_RING_API int fuse_ring_mount(struct fuse_session *se, const char *mountpoint,
		    const struct fuse_ring_opts *opts);

/*
 * Unmount (fuse_session_unmount()), stop and join the queue threads, free
 * the ring, print the request counts per transport to stderr.
 * Call after the session loop returned, before fuse_session_destroy().
 */
FUSE_RING_API void fuse_ring_unmount(struct fuse_session *se);

/* Counters so far; 0 on success, -1 if @se is not a fuse-ring session. */
FUSE_RING_API int fuse_ring_get_stats(struct fuse_session *se, struct fuse_ring_stats *st);

#endif /* FUSE_RING_H */
