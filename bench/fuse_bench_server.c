// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_bench_server: a lean in-memory FUSE file system speaking the raw
 * protocol (no libfuse), for benchmarking the /dev/fuse and io_uring
 * transports against each other.
 *
 * Usage: fuse_bench_server [--transport dev|uring] [--threads N] [--depth D]
 *                          [--queues Q] [--pin] [--trace] [--entry-timeout S]
 *                          [--attr-timeout S] [--latency-us N]
 *                          [--async-dio] [--writeback]
 *                          [--setup plain|coop|defer] [--poll-us N]
 *                          MOUNTPOINT
 *
 * The file system: a hash of (parent ino, name) -> inode, regular files and
 * directories, file data in memory. Entries are cached by the kernel for
 * --entry-timeout seconds (default 3600) and attributes for --attr-timeout
 * seconds (default 0): a stat() of a cached path then costs exactly one
 * GETATTR round trip, which is what the "stat" workload measures.
 *
 * Transports:
 *   dev:   N threads, each read()ing requests from /dev/fuse and write()ing
 *          replies; thread 0 uses the mount's fd, the others a clone of it
 *          (FUSE_DEV_IOC_CLONE), so each has its own processing queue.
 *   uring: one thread per queue, each with its own io_uring
 *          (IORING_SETUP_SQE128) and --depth ring entries; one more thread
 *          keeps reading /dev/fuse (FORGET and INTERRUPT arrive there).
 *          Queue IDs are CPU numbers: one queue per possible CPU, or with
 *          --queues Q (0 < Q < possible CPUs) Q queues spread evenly over
 *          the CPUs the server may run on (as fuse-ring's fr_queue_ids());
 *          the kernel serves the other CPUs from the nearest queue. --pin
 *          keeps each queue's thread on its queue's CPU. Once every queue
 *          has submitted its REGISTERs the server says "serving ..." with
 *          the queues, entries and bytes of buffers (header + payload) it
 *          registered. If the kernel does not offer FUSE_OVER_IO_URING in
 *          INIT, the server says so and serves /dev/fuse with one thread per
 *          CPU instead. --setup picks the rings' task-work set-up: plain
 *          (the default: task work interrupts the thread, as a signal),
 *          coop (IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG: it waits for
 *          the thread's next io_uring_enter()) or defer (SINGLE_ISSUER |
 *          DEFER_TASKRUN: it runs only when the thread waits for
 *          completions). The loop is the same for all three: each pass
 *          submits the commits and waits for a completion in one
 *          io_uring_enter(GETEVENTS), which runs pending task work in
 *          every set-up.
 *
 * --poll-us N: a queue's thread that has sent its commits polls for at
 * most N us on its completion queue (and, with coop or defer, on the
 * kernel's IORING_SQ_TASKRUN flag: task work waiting for it, which it then
 * runs with a non-blocking io_uring_enter()) before it waits in
 * io_uring_enter(), as the seed's RFC spins in fuse_dev_do_read(). With
 * defer it adds IORING_SETUP_TASKRUN_FLAG, without which deferred task
 * work cannot be seen from user space. Off (0) by default.
 *
 * A backend: --latency-us N makes the thread serving a request sleep N us
 * before it answers it (not FORGET, INTERRUPT or DESTROY), as a file system
 * waiting on a disk or a network would. --async-dio and --writeback accept
 * the kernel's FUSE_ASYNC_DIO (libfuse's default: an O_DIRECT read or write
 * is sent as several requests at once) and FUSE_WRITEBACK_CACHE.
 *
 * Exits when the file system is unmounted (read() fails with ENODEV, ring
 * commands complete with -ENOTCONN) or on SIGTERM/SIGINT (it then unmounts
 * lazily and waits for its threads, bounded).
 */
#define _GNU_SOURCE
/* liburing first: liburing/io_uring.h and linux/io_uring.h share a guard */
#include <liburing.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/fuse.h>

#define MAX_WRITE		(128 * 1024)
#define MAX_PAGES		32
#define PAGE_SZ			4096
#define DEV_BUF_SZ		(MAX_WRITE + 64 * 1024)
#define HASH_BITS		17
#define HASH_SIZE		(1u << HASH_BITS)
#define NAME_MAX_LEN		255
#define REGISTER_TRIES		200

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
#ifndef IORING_SQ_TASKRUN
#define IORING_SQ_TASKRUN		(1U << 2)
#endif
#define EXIT_WAIT_MS		5000

static const char *prog = "fuse_bench_server";

/* ------------------------------------------------------------------------ */
/* Options and global state                                                 */

static struct {
	bool uring;
	int threads;
	int depth;
	int queues;
	bool pin;
	bool trace;
	bool async_dio;
	bool writeback;
	long latency_us;
	unsigned int setup_flags;	/* --setup: IORING_SETUP_* */
	long poll_us;
	uint64_t entry_timeout;
	uint64_t attr_timeout;
	const char *mountpoint;
} opt = {
	.threads = 1,
	.depth = 2,
	.entry_timeout = 3600,
	.attr_timeout = 0,
};

static int fuse_fd = -1;
static volatile int stopping;
static int threads_alive;
/* the main thread and the queue threads, once their REGISTERs are submitted */
static pthread_barrier_t registered;
static pthread_mutex_t alive_lock = PTHREAD_MUTEX_INITIALIZER;

static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ------------------------------------------------------------------------ */
/* In-memory file system                                                    */

struct dent {
	struct dent *hnext;		/* hash chain */
	struct dent *prev, *next;	/* parent's children, by cookie */
	uint64_t parent;
	uint64_t ino;
	uint64_t cookie;		/* readdir offset of the next entry */
	uint32_t hash;
	char name[];
};

struct node {
	uint64_t ino;
	uint32_t mode;
	uint32_t nlink;
	uint64_t nlookup;		/* atomic: incremented under rdlock */
	uint64_t size;
	char *data;
	size_t cap;
	uint32_t uid, gid;
	struct timespec atime, mtime, ctime;
	/* directories */
	uint64_t parent;
	struct dent *first, *last;
	uint64_t next_cookie;
	uint32_t nchildren;
};

static pthread_rwlock_t fs_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct node **nodes;
static uint64_t nodes_cap;
static uint64_t next_ino = FUSE_ROOT_ID;
static struct dent *htab[HASH_SIZE];

static uint32_t name_hash(uint64_t parent, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)(parent * 0x9e3779b97f4a7c15ull >> 32);

	while (*name)
		h = (h ^ (unsigned char)*name++) * 16777619u;
	return h;
}

static struct node *node_get(uint64_t ino)
{
	if (ino >= nodes_cap)
		return NULL;
	return nodes[ino];
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* fs_lock held for writing */
static struct node *node_new(uint32_t mode, uint64_t parent)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (next_ino >= nodes_cap) {
		uint64_t cap = nodes_cap ? nodes_cap * 2 : 1024;
		struct node **nn = realloc(nodes, cap * sizeof(*nn));

		if (!nn) {
			free(n);
			return NULL;
		}
		memset(nn + nodes_cap, 0, (cap - nodes_cap) * sizeof(*nn));
		nodes = nn;
		nodes_cap = cap;
	}
	n->ino = next_ino++;
	n->mode = mode;
	n->nlink = S_ISDIR(mode) ? 2 : 1;
	n->parent = parent;
	n->next_cookie = 3;	/* 1 and 2 are "." and ".." */
	now(&n->atime);
	n->mtime = n->ctime = n->atime;
	nodes[n->ino] = n;
	return n;
}

/* fs_lock held for writing */
static void node_maybe_free(struct node *n)
{
	if (n->nlink || __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED) ||
	    n->ino == FUSE_ROOT_ID)
		return;
	nodes[n->ino] = NULL;
	free(n->data);
	free(n);
}

/* fs_lock held */
static struct dent *dent_find(uint64_t parent, const char *name)
{
	uint32_t h = name_hash(parent, name);
	struct dent *d;

	for (d = htab[h & (HASH_SIZE - 1)]; d; d = d->hnext)
		if (d->hash == h && d->parent == parent &&
		    !strcmp(d->name, name))
			return d;
	return NULL;
}

/* fs_lock held for writing */
static int dent_add(struct node *dir, const char *name, uint64_t ino)
{
	size_t len = strlen(name);
	struct dent *d = malloc(sizeof(*d) + len + 1);
	uint32_t h = name_hash(dir->ino, name);

	if (!d)
		return -ENOMEM;
	memcpy(d->name, name, len + 1);
	d->parent = dir->ino;
	d->ino = ino;
	d->hash = h;
	d->cookie = dir->next_cookie++;
	d->hnext = htab[h & (HASH_SIZE - 1)];
	htab[h & (HASH_SIZE - 1)] = d;
	d->next = NULL;
	d->prev = dir->last;
	if (dir->last)
		dir->last->next = d;
	else
		dir->first = d;
	dir->last = d;
	dir->nchildren++;
	return 0;
}

/* fs_lock held for writing */
static void dent_del(struct node *dir, struct dent *d)
{
	struct dent **pp = &htab[d->hash & (HASH_SIZE - 1)];

	while (*pp != d)
		pp = &(*pp)->hnext;
	*pp = d->hnext;
	if (d->prev)
		d->prev->next = d->next;
	else
		dir->first = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		dir->last = d->prev;
	dir->nchildren--;
	free(d);
}

static void fill_attr(const struct node *n, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = n->ino;
	a->size = n->size;
	a->blocks = (n->size + 511) / 512;
	a->atime = n->atime.tv_sec;
	a->atimensec = n->atime.tv_nsec;
	a->mtime = n->mtime.tv_sec;
	a->mtimensec = n->mtime.tv_nsec;
	a->ctime = n->ctime.tv_sec;
	a->ctimensec = n->ctime.tv_nsec;
	a->mode = n->mode;
	a->nlink = n->nlink;
	a->uid = n->uid;
	a->gid = n->gid;
	a->blksize = PAGE_SZ;
}

/* fs_lock held; takes a lookup reference */
static void fill_entry(struct node *n, struct fuse_entry_out *e)
{
	memset(e, 0, sizeof(*e));
	e->nodeid = n->ino;
	e->entry_valid = opt.entry_timeout;
	e->attr_valid = opt.attr_timeout;
	fill_attr(n, &e->attr);
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
}

/* fs_lock held for writing */
static int file_resize(struct node *n, uint64_t size)
{
	if (size > n->cap) {
		size_t cap = n->cap ? n->cap : 4096;
		char *p;

		while (cap < size)
			cap *= 2;
		p = realloc(n->data, cap);
		if (!p)
			return -ENOMEM;
		n->data = p;
		n->cap = cap;
	}
	if (size > n->size)
		memset(n->data + n->size, 0, size - n->size);
	n->size = size;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Request handling, independent of the transport                           */

/*
 * A request as the transports hand it over: the in header, the opcode's
 * fixed-size first argument (NULL for name-first opcodes), the rest of the
 * arguments. The reply's out-arguments go to @out (capacity @out_cap),
 * which may alias @rest: handlers consume their input before writing.
 * Returns the reply's payload size, a negative errno, or NO_REPLY, which
 * is neither: a 1-byte READ must still be answered.
 */
#define NO_REPLY INT_MIN

struct req {
	const struct fuse_in_header *in;
	const void *arg0;
	const char *rest;
	size_t rest_sz;
	char *out;
	size_t out_cap;
};

static uint32_t fuse_minor;

/* Copy a NUL-terminated name out of the request (it may alias the reply) */
static int take_name(const char *p, size_t sz, char *name)
{
	size_t len = strnlen(p, sz);

	if (len == sz || len == 0 || len > NAME_MAX_LEN)
		return -EINVAL;
	memcpy(name, p, len + 1);
	return 0;
}

static int do_lookup(struct req *r)
{
	char name[NAME_MAX_LEN + 1];
	struct fuse_entry_out e;
	struct dent *d;
	int err;

	err = take_name(r->rest, r->rest_sz, name);
	if (err)
		return err;
	pthread_rwlock_rdlock(&fs_lock);
	d = dent_find(r->in->nodeid, name);
	if (!d) {
		pthread_rwlock_unlock(&fs_lock);
		return -ENOENT;
	}
	fill_entry(node_get(d->ino), &e);
	pthread_rwlock_unlock(&fs_lock);
	memcpy(r->out, &e, sizeof(e));
	return sizeof(e);
}

static void forget_one(uint64_t ino, uint64_t nlookup)
{
	struct node *n = node_get(ino);

	if (!n)
		return;
	if (__atomic_sub_fetch(&n->nlookup, nlookup, __ATOMIC_RELAXED) >
	    (uint64_t)INT64_MAX)
		__atomic_store_n(&n->nlookup, 0, __ATOMIC_RELAXED);
	node_maybe_free(n);
}

static int do_forget(struct req *r)
{
	const struct fuse_forget_in *fi = r->arg0;

	pthread_rwlock_wrlock(&fs_lock);
	forget_one(r->in->nodeid, fi->nlookup);
	pthread_rwlock_unlock(&fs_lock);
	return NO_REPLY;
}

static int do_batch_forget(struct req *r)
{
	const struct fuse_batch_forget_in *bi = r->arg0;
	const struct fuse_forget_one *f = (const void *)r->rest;
	uint32_t i, count = bi->count;

	if (count > r->rest_sz / sizeof(*f))
		count = r->rest_sz / sizeof(*f);
	pthread_rwlock_wrlock(&fs_lock);
	for (i = 0; i < count; i++)
		forget_one(f[i].nodeid, f[i].nlookup);
	pthread_rwlock_unlock(&fs_lock);
	return NO_REPLY;
}

static int do_getattr(struct req *r)
{
	struct fuse_attr_out ao;
	struct node *n;

	memset(&ao, 0, sizeof(ao));
	pthread_rwlock_rdlock(&fs_lock);
	n = node_get(r->in->nodeid);
	if (!n) {
		pthread_rwlock_unlock(&fs_lock);
		return -ENOENT;
	}
	fill_attr(n, &ao.attr);
	pthread_rwlock_unlock(&fs_lock);
	ao.attr_valid = opt.attr_timeout;
	memcpy(r->out, &ao, sizeof(ao));
	return sizeof(ao);
}

static void set_time(struct timespec *ts, bool to_now, uint64_t sec,
		     uint32_t nsec)
{
	if (to_now) {
		now(ts);
	} else {
		ts->tv_sec = sec;
		ts->tv_nsec = nsec;
	}
}

static int do_setattr(struct req *r)
{
	const struct fuse_setattr_in *si = r->arg0;
	struct fuse_attr_out ao;
	struct node *n;
	int err = 0;

	memset(&ao, 0, sizeof(ao));
	pthread_rwlock_wrlock(&fs_lock);
	n = node_get(r->in->nodeid);
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	if (si->valid & FATTR_SIZE) {
		if (S_ISDIR(n->mode)) {
			err = -EISDIR;
			goto out;
		}
		err = file_resize(n, si->size);
		if (err)
			goto out;
		now(&n->mtime);
	}
	if (si->valid & FATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (si->mode & 07777);
	if (si->valid & FATTR_UID)
		n->uid = si->uid;
	if (si->valid & FATTR_GID)
		n->gid = si->gid;
	if (si->valid & FATTR_ATIME)
		set_time(&n->atime, si->valid & FATTR_ATIME_NOW, si->atime,
			 si->atimensec);
	if (si->valid & FATTR_MTIME)
		set_time(&n->mtime, si->valid & FATTR_MTIME_NOW, si->mtime,
			 si->mtimensec);
	now(&n->ctime);
	fill_attr(n, &ao.attr);
out:
	pthread_rwlock_unlock(&fs_lock);
	if (err)
		return err;
	ao.attr_valid = opt.attr_timeout;
	memcpy(r->out, &ao, sizeof(ao));
	return sizeof(ao);
}

/* Create a directory entry and its inode; fills @e. fs_lock not held. */
static int make_node(uint64_t parent, const char *name, uint32_t mode,
		     struct fuse_entry_out *e)
{
	struct node *dir, *n;
	int err;

	pthread_rwlock_wrlock(&fs_lock);
	dir = node_get(parent);
	if (!dir || !S_ISDIR(dir->mode)) {
		err = dir ? -ENOTDIR : -ENOENT;
		goto out;
	}
	if (dent_find(parent, name)) {
		err = -EEXIST;
		goto out;
	}
	n = node_new(mode, parent);
	if (!n) {
		err = -ENOMEM;
		goto out;
	}
	err = dent_add(dir, name, n->ino);
	if (err) {
		n->nlink = 0;
		node_maybe_free(n);
		goto out;
	}
	if (S_ISDIR(mode))
		dir->nlink++;
	now(&dir->mtime);
	dir->ctime = dir->mtime;
	fill_entry(n, e);
out:
	pthread_rwlock_unlock(&fs_lock);
	return err;
}

/* MKDIR, MKNOD: make the node named in the payload, reply its entry */
static int reply_new_node(struct req *r, uint32_t mode)
{
	char name[NAME_MAX_LEN + 1];
	struct fuse_entry_out e;
	int err;

	err = take_name(r->rest, r->rest_sz, name);
	if (err)
		return err;
	err = make_node(r->in->nodeid, name, mode, &e);
	if (err)
		return err;
	memcpy(r->out, &e, sizeof(e));
	return sizeof(e);
}

static int do_mkdir(struct req *r)
{
	const struct fuse_mkdir_in *mi = r->arg0;

	return reply_new_node(r, S_IFDIR | (mi->mode & ~mi->umask & 07777));
}

static int do_mknod(struct req *r)
{
	const struct fuse_mknod_in *mi = r->arg0;

	if (!S_ISREG(mi->mode))
		return -EPERM;
	return reply_new_node(r, S_IFREG | (mi->mode & ~mi->umask & 07777));
}

static int do_create(struct req *r)
{
	const struct fuse_create_in *ci = r->arg0;
	char name[NAME_MAX_LEN + 1];
	struct {
		struct fuse_entry_out e;
		struct fuse_open_out o;
	} out;
	int err;

	err = take_name(r->rest, r->rest_sz, name);
	if (err)
		return err;
	memset(&out, 0, sizeof(out));
	err = make_node(r->in->nodeid, name,
			S_IFREG | (ci->mode & ~ci->umask & 07777), &out.e);
	if (err)
		return err;
	out.o.fh = out.e.nodeid;
	memcpy(r->out, &out, sizeof(out));
	return sizeof(out);
}

static int do_open(struct req *r, bool dir)
{
	struct fuse_open_out oo;
	struct node *n;

	pthread_rwlock_rdlock(&fs_lock);
	n = node_get(r->in->nodeid);
	if (!n) {
		pthread_rwlock_unlock(&fs_lock);
		return -ENOENT;
	}
	if (!!S_ISDIR(n->mode) != dir) {
		pthread_rwlock_unlock(&fs_lock);
		return dir ? -ENOTDIR : -EISDIR;
	}
	pthread_rwlock_unlock(&fs_lock);
	if (!dir && (((const struct fuse_open_in *)r->arg0)->flags & O_TRUNC)) {
		pthread_rwlock_wrlock(&fs_lock);
		n = node_get(r->in->nodeid);
		if (n)
			file_resize(n, 0);
		pthread_rwlock_unlock(&fs_lock);
	}
	memset(&oo, 0, sizeof(oo));
	oo.fh = r->in->nodeid;
	memcpy(r->out, &oo, sizeof(oo));
	return sizeof(oo);
}

static int do_read(struct req *r)
{
	const struct fuse_read_in *ri = r->arg0;
	size_t size = ri->size;
	struct node *n;

	if (size > r->out_cap)
		size = r->out_cap;
	pthread_rwlock_rdlock(&fs_lock);
	n = node_get(r->in->nodeid);
	if (!n) {
		pthread_rwlock_unlock(&fs_lock);
		return -ENOENT;
	}
	if (ri->offset >= n->size)
		size = 0;
	else if (size > n->size - ri->offset)
		size = n->size - ri->offset;
	if (size)
		memcpy(r->out, n->data + ri->offset, size);
	pthread_rwlock_unlock(&fs_lock);
	return size;
}

static int do_write(struct req *r)
{
	const struct fuse_write_in *wi = r->arg0;
	struct fuse_write_out wo;
	size_t size = wi->size;
	struct node *n;
	int err = 0;

	if (size > r->rest_sz)
		return -EINVAL;
	pthread_rwlock_wrlock(&fs_lock);
	n = node_get(r->in->nodeid);
	if (!n) {
		err = -ENOENT;
	} else if (wi->offset + size > n->size) {
		err = file_resize(n, wi->offset + size);
	}
	if (!err) {
		if (size)
			memcpy(n->data + wi->offset, r->rest, size);
		now(&n->mtime);
	}
	pthread_rwlock_unlock(&fs_lock);
	if (err)
		return err;
	memset(&wo, 0, sizeof(wo));
	wo.size = size;
	memcpy(r->out, &wo, sizeof(wo));
	return sizeof(wo);
}

static int dirent_put(char *buf, size_t cap, size_t *pos, uint64_t ino,
		      uint64_t off, uint32_t type, const char *name)
{
	size_t namelen = strlen(name);
	size_t entlen = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + namelen);
	struct fuse_dirent *de;

	if (*pos + entlen > cap)
		return -1;
	de = (struct fuse_dirent *)(buf + *pos);
	de->ino = ino;
	de->off = off;
	de->namelen = namelen;
	de->type = type;
	memcpy(de->name, name, namelen);
	memset(de->name + namelen, 0, entlen - FUSE_NAME_OFFSET - namelen);
	*pos += entlen;
	return 0;
}

static int do_readdir(struct req *r)
{
	const struct fuse_read_in *ri = r->arg0;
	uint64_t off = ri->offset;
	size_t cap = ri->size, pos = 0;
	struct node *dir;
	struct dent *d;

	if (cap > r->out_cap)
		cap = r->out_cap;
	pthread_rwlock_rdlock(&fs_lock);
	dir = node_get(r->in->nodeid);
	if (!dir || !S_ISDIR(dir->mode)) {
		pthread_rwlock_unlock(&fs_lock);
		return dir ? -ENOTDIR : -ENOENT;
	}
	if (off < 1 && dirent_put(r->out, cap, &pos, dir->ino, 1, DT_DIR, "."))
		goto out;
	if (off < 2 && dirent_put(r->out, cap, &pos, dir->parent ?: dir->ino,
				  2, DT_DIR, ".."))
		goto out;
	for (d = dir->first; d; d = d->next) {
		struct node *n;

		if (d->cookie <= off)
			continue;
		n = node_get(d->ino);
		if (dirent_put(r->out, cap, &pos, d->ino, d->cookie,
			       n && S_ISDIR(n->mode) ? DT_DIR : DT_REG,
			       d->name))
			break;
	}
out:
	pthread_rwlock_unlock(&fs_lock);
	return pos;
}

static int do_remove(struct req *r, bool isdir)
{
	char name[NAME_MAX_LEN + 1];
	struct node *dir, *n;
	struct dent *d;
	int err;

	err = take_name(r->rest, r->rest_sz, name);
	if (err)
		return err;
	pthread_rwlock_wrlock(&fs_lock);
	dir = node_get(r->in->nodeid);
	d = dir ? dent_find(dir->ino, name) : NULL;
	if (!d) {
		err = -ENOENT;
		goto out;
	}
	n = node_get(d->ino);
	if (isdir && !S_ISDIR(n->mode)) {
		err = -ENOTDIR;
		goto out;
	}
	if (!isdir && S_ISDIR(n->mode)) {
		err = -EISDIR;
		goto out;
	}
	if (isdir && n->nchildren) {
		err = -ENOTEMPTY;
		goto out;
	}
	dent_del(dir, d);
	if (isdir) {
		dir->nlink--;
		n->nlink = 0;
	} else {
		n->nlink--;
	}
	now(&n->ctime);
	now(&dir->mtime);
	dir->ctime = dir->mtime;
	node_maybe_free(n);
out:
	pthread_rwlock_unlock(&fs_lock);
	return err;
}

static int do_statfs(struct req *r)
{
	struct fuse_statfs_out so;

	memset(&so, 0, sizeof(so));
	so.st.blocks = 1u << 20;
	so.st.bfree = 1u << 19;
	so.st.bavail = 1u << 19;
	so.st.files = 1u << 20;
	so.st.ffree = 1u << 19;
	so.st.bsize = PAGE_SZ;
	so.st.frsize = PAGE_SZ;
	so.st.namelen = NAME_MAX_LEN;
	memcpy(r->out, &so, sizeof(so));
	return sizeof(so);
}

static int handle_op(struct req *r)
{
	switch (r->in->opcode) {
	case FUSE_LOOKUP:	return do_lookup(r);
	case FUSE_FORGET:	return do_forget(r);
	case FUSE_BATCH_FORGET:	return do_batch_forget(r);
	case FUSE_GETATTR:	return do_getattr(r);
	case FUSE_SETATTR:	return do_setattr(r);
	case FUSE_MKDIR:	return do_mkdir(r);
	case FUSE_MKNOD:	return do_mknod(r);
	case FUSE_CREATE:	return do_create(r);
	case FUSE_OPEN:		return do_open(r, false);
	case FUSE_OPENDIR:	return do_open(r, true);
	case FUSE_READ:		return do_read(r);
	case FUSE_WRITE:	return do_write(r);
	case FUSE_READDIR:	return do_readdir(r);
	case FUSE_UNLINK:	return do_remove(r, false);
	case FUSE_RMDIR:	return do_remove(r, true);
	case FUSE_STATFS:	return do_statfs(r);
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_DESTROY:
		return 0;
	case FUSE_INTERRUPT:
		return NO_REPLY;
	default:		/* READDIRPLUS, ACCESS, xattrs, ... */
		return -ENOSYS;
	}
}

/*
 * --latency-us: what a disk or network behind the file system costs. The
 * serving thread sleeps (a sleep, not a spin: under -icount the guest's
 * clock skips idle time, so sleeps that overlap show as parallelism) before
 * it answers a request that would reach the backend, as a blocking server
 * (libfuse's threads, /dev/fuse or ring) does.
 */
static void backend_wait(uint32_t opcode)
{
	struct timespec ts;

	switch (opcode) {
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
	case FUSE_DESTROY:
		return;		/* no reply or no backend work */
	}
	ts.tv_sec = opt.latency_us / 1000000;
	ts.tv_nsec = (opt.latency_us % 1000000) * 1000;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Serve one request; with --trace, log it and its result to stderr */
static int handle(struct req *r)
{
	int res;

	if (opt.latency_us)
		backend_wait(r->in->opcode);
	res = handle_op(r);

	if (opt.trace)
		msg("unique %llu opcode %u nodeid %llu: %d",
		    (unsigned long long)r->in->unique, r->in->opcode,
		    (unsigned long long)r->in->nodeid, res);
	return res;
}

/* Size of the fixed first argument that precedes names and data on /dev/fuse */
static size_t arg0_size(uint32_t opcode)
{
	switch (opcode) {
	case FUSE_FORGET:	return sizeof(struct fuse_forget_in);
	case FUSE_BATCH_FORGET:	return sizeof(struct fuse_batch_forget_in);
	case FUSE_GETATTR:	return sizeof(struct fuse_getattr_in);
	case FUSE_SETATTR:	return sizeof(struct fuse_setattr_in);
	case FUSE_MKDIR:	return sizeof(struct fuse_mkdir_in);
	case FUSE_MKNOD:	return sizeof(struct fuse_mknod_in);
	case FUSE_CREATE:	return sizeof(struct fuse_create_in);
	case FUSE_OPEN:
	case FUSE_OPENDIR:	return sizeof(struct fuse_open_in);
	case FUSE_READ:
	case FUSE_READDIR:
	case FUSE_READDIRPLUS:	return sizeof(struct fuse_read_in);
	case FUSE_WRITE:	return sizeof(struct fuse_write_in);
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:	return sizeof(struct fuse_release_in);
	case FUSE_FLUSH:	return sizeof(struct fuse_flush_in);
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:	return sizeof(struct fuse_fsync_in);
	case FUSE_INTERRUPT:	return sizeof(struct fuse_interrupt_in);
	case FUSE_ACCESS:	return sizeof(struct fuse_access_in);
	case FUSE_INIT:		return sizeof(struct fuse_init_in);
	default:		return 0;	/* name first, or no argument */
	}
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static int possible_cpus(void)
{
	char buf[256];
	int fd, n, lo, hi, max = -1;
	char *p;

	fd = open("/sys/devices/system/cpu/possible", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			for (p = buf; *p && *p != '\n';) {
				lo = hi = strtol(p, &p, 10);
				if (*p == '-')
					hi = strtol(p + 1, &p, 10);
				if (hi > max)
					max = hi;
				(void)lo;
				if (*p == ',')
					p++;
				else
					break;
			}
		}
	}
	if (max >= 0)
		return max + 1;
	n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? n : 1;
}

/*
 * The queue IDs (CPU numbers) of @want queues among @possible: all of them
 * for 0 or at least @possible, else spread evenly over the CPUs this
 * process may run on (the online ones), as fuse-ring's fr_queue_ids().
 * Returns the number of IDs written to @ids.
 */
static int queue_ids(int want, int possible, int *ids)
{
	int online[CPU_SETSIZE], nr_online = 0, i;
	cpu_set_t set;

	if (want > 0 && want < possible &&
	    !sched_getaffinity(0, sizeof(set), &set)) {
		for (i = 0; i < possible && i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				online[nr_online++] = i;
	}
	if (want <= 0 || want >= possible || !nr_online) {
		for (i = 0; i < possible; i++)
			ids[i] = i;
		return possible;
	}
	if (want > nr_online)
		want = nr_online;
	for (i = 0; i < want; i++)
		ids[i] = online[i * nr_online / want];
	return want;
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		msg("cannot pin to CPU %d: %s", cpu, strerror(errno));
}

static void thread_exit_note(void)
{
	pthread_mutex_lock(&alive_lock);
	threads_alive--;
	pthread_mutex_unlock(&alive_lock);
}

static bool dev_gone(int err)
{
	/* ENODEV: unmounted; ECONNABORTED: aborted through fusectl */
	return err == ENODEV || err == ECONNABORTED || err == EBADF;
}

/* ------------------------------------------------------------------------ */
/* /dev/fuse transport                                                      */

/*
 * Dispatch one request read from /dev/fuse and write its reply into @obuf,
 * which has room for a fuse_out_header and the largest reply.
 */
static void dev_dispatch(int fd, const char *buf, size_t len, char *obuf)
{
	const struct fuse_in_header *in = (const void *)buf;
	struct fuse_out_header *oh = (void *)obuf;
	size_t a0 = arg0_size(in->opcode);
	struct req r = {
		.in = in,
		.out = obuf + sizeof(*oh),
		.out_cap = DEV_BUF_SZ - sizeof(*oh),
	};
	int res;

	if (len < sizeof(*in) + a0) {
		res = -EINVAL;
	} else {
		r.arg0 = a0 ? buf + sizeof(*in) : NULL;
		r.rest = buf + sizeof(*in) + a0;
		r.rest_sz = len - sizeof(*in) - a0;
		res = handle(&r);
	}
	if (res == NO_REPLY)
		return;
	oh->unique = in->unique;
	oh->error = res < 0 ? res : 0;
	oh->len = sizeof(*oh) + (res > 0 ? res : 0);
	if (write(fd, obuf, oh->len) < 0 &&
	    ((errno != ENOENT && !dev_gone(errno)) || opt.trace))
		msg("reply to opcode %u: %s", in->opcode, strerror(errno));
}

struct dev_thread {
	pthread_t tid;
	int fd;
	int idx;
};

/* Names that trace events show: "fb-ring3", "fb-dev0", "fb-forgets" */
static void name_thread(pthread_t tid, const char *what, int n)
{
	char name[32];

	snprintf(name, sizeof(name), "%s%d", what, n);
	name[15] = '\0';	/* the kernel's TASK_COMM_LEN */
	pthread_setname_np(tid, name);
}

static void *dev_thread_fn(void *arg)
{
	struct dev_thread *t = arg;
	char *buf = malloc(DEV_BUF_SZ), *obuf = malloc(DEV_BUF_SZ);
	ssize_t n;

	if (!buf || !obuf)
		die("out of memory");
	if (opt.pin && t->idx >= 0)
		pin_to_cpu(t->idx);
	for (;;) {
		n = read(t->fd, buf, DEV_BUF_SZ);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOENT)
				continue;
			if (!dev_gone(errno))
				msg("read /dev/fuse: %s", strerror(errno));
			break;
		}
		if ((size_t)n < sizeof(struct fuse_in_header))
			continue;
		dev_dispatch(t->fd, buf, n, obuf);
		if (((struct fuse_in_header *)buf)->opcode == FUSE_DESTROY)
			break;
	}
	free(buf);
	free(obuf);
	thread_exit_note();
	return NULL;
}

static int dev_clone(int fd)
{
	uint32_t src = fd;
	int nfd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (nfd < 0)
		die("open /dev/fuse: %s", strerror(errno));
	if (ioctl(nfd, FUSE_DEV_IOC_CLONE, &src))
		die("FUSE_DEV_IOC_CLONE: %s", strerror(errno));
	return nfd;
}

/* ------------------------------------------------------------------------ */
/* io_uring transport                                                       */

struct ring_ent {
	struct fuse_uring_req_header *hdr;
	char *payload;
	struct iovec iov[2];
};

struct uring_queue {
	pthread_t tid;
	int qid;
	struct io_uring ring;
	struct ring_ent *ents;
	size_t payload_sz;
	int registered;
};

static void uring_prep_cmd(struct io_uring_sqe *sqe, uint32_t cmd_op,
			   struct ring_ent *ent, uint16_t qid,
			   uint64_t commit_id, uint64_t user_data)
{
	struct fuse_uring_cmd_req req = {
		.commit_id = commit_id,
		.qid = qid,
	};

	if (cmd_op == FUSE_IO_URING_CMD_REGISTER)
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fuse_fd, ent->iov,
				 2, 0);
	else
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fuse_fd, NULL, 0, 0);
	sqe->cmd_op = cmd_op;	/* after prep_rw: it shares sqe->off */
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &req, sizeof(req));
	sqe->user_data = user_data;
}

static struct io_uring_sqe *uring_sqe(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe) {
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	if (!sqe)
		die("queue %d: no SQE", q->qid);
	return sqe;
}

/* Serve the request in @ent and queue its COMMIT_AND_FETCH */
static void uring_serve(struct uring_queue *q, int idx)
{
	struct ring_ent *ent = &q->ents[idx];
	struct fuse_uring_req_header *h = ent->hdr;
	struct fuse_in_header in;
	struct fuse_out_header oh;
	uint64_t commit_id = h->ring_ent_in_out.commit_id;
	uint32_t psz = h->ring_ent_in_out.payload_sz;
	struct req r;
	int res;

	memcpy(&in, h->in_out, sizeof(in));
	if (psz > q->payload_sz)
		psz = q->payload_sz;
	r = (struct req){
		.in = &in,
		.arg0 = h->op_in,
		.rest = ent->payload,
		.rest_sz = psz,
		.out = ent->payload,
		.out_cap = q->payload_sz,
	};
	switch (in.opcode) {
	case FUSE_LOOKUP:
	case FUSE_UNLINK:
	case FUSE_RMDIR:
	case FUSE_SYMLINK:
	case FUSE_REMOVEXATTR:
		r.arg0 = NULL;
		break;
	}
	res = handle(&r);
	if (res == NO_REPLY)	/* FORGET/INTERRUPT never come this way */
		res = -EIO;
	memset(&oh, 0, sizeof(oh));
	oh.unique = in.unique;
	oh.error = res < 0 ? res : 0;
	oh.len = sizeof(oh) + (res > 0 ? res : 0);
	memcpy(h->in_out, &oh, sizeof(oh));
	h->ring_ent_in_out.payload_sz = res > 0 ? res : 0;
	uring_prep_cmd(uring_sqe(q), FUSE_IO_URING_CMD_COMMIT_AND_FETCH, ent,
		       q->qid, commit_id, idx);
	/*
	 * A server that waits on its backend sends each reply before it
	 * serves the next request, not after the whole batch: else the
	 * first reply of a batch waits for every later request's backend.
	 */
	if (opt.latency_us)
		io_uring_submit(&q->ring);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void spin_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * --poll-us: spin until a completion is there or the bound passes; task
 * work that the kernel flags (coop, defer) is run without waiting.
 * Returns whether a completion is there.
 */
static bool uring_poll(struct uring_queue *q)
{
	uint64_t end = now_ns() + (uint64_t)opt.poll_us * 1000;

	for (;;) {
		if (io_uring_cq_ready(&q->ring))
			return true;
		if (IO_URING_READ_ONCE(*q->ring.sq.kflags) & IORING_SQ_TASKRUN) {
			io_uring_get_events(&q->ring);
			continue;
		}
		if (now_ns() >= end)
			return false;
		/*
		 * Yield: the caller of the next request may run on this
		 * queue's CPU (a queue serves its own CPU first), and a spin
		 * that does not give way holds it off until the bound. And
		 * pause, the spin-wait hint, as the kernel's dev_poll_us
		 * does: it gives an SMT sibling, or the other vCPUs of a
		 * guest under single-threaded TCG, the time this spin would
		 * take from them when the queue thread has a CPU of its own.
		 */
		spin_hint();
		sched_yield();
	}
}

static void *uring_thread_fn(void *arg)
{
	struct uring_queue *q = arg;
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQE128 | opt.setup_flags,
	};
	struct io_uring_cqe *cqe;
	int tries[64] = { 0 };
	int i, ret, done = 0;

	if (opt.pin)
		pin_to_cpu(q->qid);
	ret = io_uring_queue_init_params(opt.depth * 2, &q->ring, &p);
	if (ret)
		die("queue %d: io_uring_queue_init: %s", q->qid, strerror(-ret));
	q->ents = calloc(opt.depth, sizeof(*q->ents));
	for (i = 0; i < opt.depth; i++) {
		struct ring_ent *e = &q->ents[i];

		if (posix_memalign((void **)&e->hdr, PAGE_SZ, sizeof(*e->hdr)) ||
		    posix_memalign((void **)&e->payload, PAGE_SZ, q->payload_sz))
			die("out of memory");
		memset(e->hdr, 0, sizeof(*e->hdr));
		memset(e->payload, 0, q->payload_sz);
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, q->payload_sz };
		uring_prep_cmd(uring_sqe(q), FUSE_IO_URING_CMD_REGISTER, e,
			       q->qid, 0, i);
	}
	/* the kernel makes the entries as the REGISTERs are submitted */
	ret = io_uring_submit(&q->ring);
	if (ret < 0)
		msg("queue %d: submitting REGISTER: %s", q->qid, strerror(-ret));
	pthread_barrier_wait(&registered);
	/*
	 * One system call per round trip: submit the commits and wait for
	 * the next request together.
	 */
	while (!done) {
		unsigned int head, seen = 0;

		if (opt.poll_us) {
			ret = io_uring_submit(&q->ring);
			if (ret >= 0 && !uring_poll(q))
				ret = io_uring_submit_and_wait(&q->ring, 1);
		} else {
			ret = io_uring_submit_and_wait(&q->ring, 1);
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			msg("queue %d: submit_and_wait: %s", q->qid,
			    strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			int idx = cqe->user_data, res = cqe->res;

			seen++;
			if (idx < 0 || idx >= opt.depth)
				continue;
			if (res == -EAGAIN && tries[idx % 64] < REGISTER_TRIES) {
				/* INIT reply not processed yet: back off */
				struct timespec ts = {
					0, 1000000L * (1 + tries[idx % 64] / 20)
				};

				tries[idx % 64]++;
				nanosleep(&ts, NULL);
				uring_prep_cmd(uring_sqe(q),
					       FUSE_IO_URING_CMD_REGISTER,
					       &q->ents[idx], q->qid, 0, idx);
				continue;
			}
			if (res < 0) {
				if (res != -ENOTCONN && res != -ECONNABORTED &&
				    res != -ECANCELED)
					msg("queue %d entry %d: CQE res %d (%s)",
					    q->qid, idx, res, strerror(-res));
				done = 1;
				continue;
			}
			uring_serve(q, idx);
		}
		io_uring_cq_advance(&q->ring, seen);
	}
	io_uring_queue_exit(&q->ring);
	for (i = 0; i < opt.depth; i++) {
		free(q->ents[i].hdr);
		free(q->ents[i].payload);
	}
	free(q->ents);
	thread_exit_note();
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Mount, INIT, main                                                        */

static void do_mount(const char *dir)
{
	char opts[128];

	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0)
		die("open /dev/fuse: %s", strerror(errno));
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 fuse_fd);
	if (mount("fuse", dir, "fuse", 0, opts))
		die("mount %s: %s", dir, strerror(errno));
}

/* Read and answer INIT on /dev/fuse; returns true if the ring is to be used */
static bool do_init(void)
{
	char *buf = malloc(DEV_BUF_SZ);
	const struct fuse_in_header *in = (const void *)buf;
	const struct fuse_init_in *ii = (const void *)(buf + sizeof(*in));
	struct {
		struct fuse_out_header oh;
		struct fuse_init_out io;
	} rep;
	uint64_t offered;
	bool use_uring = false;
	ssize_t n;

	do {
		n = read(fuse_fd, buf, DEV_BUF_SZ);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		die("read INIT: %s", strerror(errno));
	if (in->opcode != FUSE_INIT || (size_t)n < sizeof(*in) + 8)
		die("first request is opcode %u, not INIT", in->opcode);
	if (ii->major != FUSE_KERNEL_VERSION)
		die("kernel speaks FUSE %u.%u", ii->major, ii->minor);
	offered = ii->flags;
	if (ii->flags & FUSE_INIT_EXT)
		offered |= (uint64_t)ii->flags2 << 32;
	fuse_minor = ii->minor;

	memset(&rep, 0, sizeof(rep));
	rep.io.major = FUSE_KERNEL_VERSION;
	rep.io.minor = FUSE_KERNEL_MINOR_VERSION;
	rep.io.max_readahead = ii->max_readahead;
	rep.io.flags = offered & (FUSE_ASYNC_READ | FUSE_BIG_WRITES |
				  FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES |
				  FUSE_INIT_EXT);
	/* libfuse turns FUSE_ASYNC_DIO on by default; we do on request */
	if (opt.async_dio)
		rep.io.flags |= offered & FUSE_ASYNC_DIO;
	if (opt.writeback)
		rep.io.flags |= offered & FUSE_WRITEBACK_CACHE;
	rep.io.max_background = 64;
	rep.io.congestion_threshold = 48;
	rep.io.max_write = MAX_WRITE;
	rep.io.time_gran = 1;
	rep.io.max_pages = MAX_PAGES;
	if (opt.uring) {
		if (offered & FUSE_OVER_IO_URING) {
			use_uring = true;
			rep.io.flags2 = FUSE_OVER_IO_URING >> 32;
			rep.io.flags |= FUSE_INIT_EXT;
		} else {
			msg("kernel did not offer FUSE_OVER_IO_URING "
			    "(/sys/module/fuse/parameters/enable_uring is off "
			    "or the kernel lacks it): falling back to /dev/fuse "
			    "with %d threads", opt.threads);
		}
	}
	rep.oh.unique = in->unique;
	rep.oh.len = sizeof(rep);
	if (write(fuse_fd, &rep, sizeof(rep)) != sizeof(rep))
		die("INIT reply: %s", strerror(errno));
	free(buf);
	return use_uring;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s [--transport dev|uring] [--threads N] [--depth D]\n"
		"       [--queues Q] [--pin] [--trace] [--entry-timeout S]\n"
		"       [--attr-timeout S] [--latency-us N] [--async-dio]\n"
		"       [--writeback] [--setup plain|coop|defer] [--poll-us N]\n"
		"       MOUNTPOINT\n",
		prog);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'n' },
		{ "depth", required_argument, NULL, 'd' },
		{ "queues", required_argument, NULL, 'q' },
		{ "pin", no_argument, NULL, 'p' },
		{ "trace", no_argument, NULL, 'T' },
		{ "entry-timeout", required_argument, NULL, 'e' },
		{ "attr-timeout", required_argument, NULL, 'a' },
		{ "latency-us", required_argument, NULL, 'l' },
		{ "async-dio", no_argument, NULL, 'A' },
		{ "writeback", no_argument, NULL, 'W' },
		{ "setup", required_argument, NULL, 'S' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c;

	while ((c = getopt_long(argc, argv, "t:n:d:q:pTe:a:l:AWS:P:h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!strcmp(optarg, "uring"))
				opt.uring = true;
			else if (strcmp(optarg, "dev"))
				usage();
			break;
		case 'n':
			opt.threads = atoi(optarg);
			break;
		case 'd':
			opt.depth = atoi(optarg);
			break;
		case 'q':
			opt.queues = atoi(optarg);
			break;
		case 'p':
			opt.pin = true;
			break;
		case 'T':
			opt.trace = true;
			break;
		case 'e':
			opt.entry_timeout = strtoull(optarg, NULL, 10);
			break;
		case 'a':
			opt.attr_timeout = strtoull(optarg, NULL, 10);
			break;
		case 'l':
			opt.latency_us = atol(optarg);
			break;
		case 'A':
			opt.async_dio = true;
			break;
		case 'W':
			opt.writeback = true;
			break;
		case 'S':
			if (!strcmp(optarg, "coop"))
				opt.setup_flags = IORING_SETUP_COOP_TASKRUN |
						  IORING_SETUP_TASKRUN_FLAG;
			else if (!strcmp(optarg, "defer"))
				opt.setup_flags = IORING_SETUP_SINGLE_ISSUER |
						  IORING_SETUP_DEFER_TASKRUN;
			else if (strcmp(optarg, "plain"))
				usage();
			break;
		case 'P':
			opt.poll_us = atol(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || opt.threads < 1 || opt.depth < 1 ||
	    opt.depth > 64 || opt.queues < 0 || opt.latency_us < 0 ||
	    opt.poll_us < 0)
		usage();
	if (opt.poll_us && (opt.setup_flags & IORING_SETUP_DEFER_TASKRUN))
		opt.setup_flags |= IORING_SETUP_TASKRUN_FLAG;
	opt.mountpoint = argv[optind];
}

/* Wait for all worker threads to end; bounded once we are stopping */
static void wait_threads(sigset_t *sigs)
{
	struct timespec ts = { 0, 100 * 1000000L };
	int waited_ms = 0, alive;

	for (;;) {
		pthread_mutex_lock(&alive_lock);
		alive = threads_alive;
		pthread_mutex_unlock(&alive_lock);
		if (!alive)
			return;
		if (sigtimedwait(sigs, NULL, &ts) > 0 && !stopping) {
			stopping = 1;
			msg("signal: unmounting %s", opt.mountpoint);
			if (umount2(opt.mountpoint, MNT_DETACH))
				msg("umount %s: %s", opt.mountpoint,
				    strerror(errno));
		}
		if (stopping) {
			waited_ms += 100;
			if (waited_ms >= EXIT_WAIT_MS) {
				msg("%d threads still busy; exiting", alive);
				exit(1);
			}
		}
	}
}

int main(int argc, char **argv)
{
	sigset_t sigs;
	struct node *root;
	int i, nq;

	parse_args(argc, argv);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);	/* inherited by threads */

	root = node_new(S_IFDIR | 0777, 0);
	if (!root || root->ino != FUSE_ROOT_ID)
		die("cannot create the root");
	root->nlookup = 1;

	do_mount(opt.mountpoint);
	nq = possible_cpus();
	if (opt.uring && !do_init()) {
		opt.uring = false;
		opt.threads = nq;
	} else if (!opt.uring) {
		do_init();
	}

	if (opt.uring) {
		static struct dev_thread forget_thread;
		int *ids = calloc(nq, sizeof(*ids));
		struct uring_queue *qs = calloc(nq, sizeof(*qs));
		size_t psz = MAX_WRITE, bufs;
		char cpus[256] = "";
		size_t len = 0;

		if (psz < 8192)
			psz = 8192;
		if (psz < (size_t)MAX_PAGES * PAGE_SZ)
			psz = (size_t)MAX_PAGES * PAGE_SZ;
		if (!ids || !qs)
			die("out of memory");
		nq = queue_ids(opt.queues, nq, ids);
		bufs = (size_t)nq * opt.depth *
		       (sizeof(struct fuse_uring_req_header) + psz);
		pthread_barrier_init(&registered, NULL, nq + 1);
		threads_alive = nq + 1;
		forget_thread.fd = fuse_fd;
		forget_thread.idx = -1;
		pthread_create(&forget_thread.tid, NULL, dev_thread_fn,
			       &forget_thread);
		pthread_setname_np(forget_thread.tid, "fb-forgets");
		for (i = 0; i < nq; i++) {
			qs[i].qid = ids[i];
			qs[i].payload_sz = psz;
			pthread_create(&qs[i].tid, NULL, uring_thread_fn, &qs[i]);
			name_thread(qs[i].tid, "fb-ring", ids[i]);
			if (len < sizeof(cpus))
				len += snprintf(cpus + len, sizeof(cpus) - len,
						"%s%d", i ? "," : "", ids[i]);
		}
		pthread_barrier_wait(&registered);
		msg("serving %s over io_uring: %d queues x %d entries, "
		    "%zu bytes of buffers, queues on CPUs %s",
		    opt.mountpoint, nq, opt.depth, bufs, cpus);
		wait_threads(&sigs);
		pthread_join(forget_thread.tid, NULL);
		for (i = 0; i < nq; i++)
			pthread_join(qs[i].tid, NULL);
	} else {
		struct dev_thread *ts = calloc(opt.threads, sizeof(*ts));

		threads_alive = opt.threads;
		for (i = 0; i < opt.threads; i++) {
			ts[i].fd = i ? dev_clone(fuse_fd) : fuse_fd;
			ts[i].idx = opt.pin ? i % nq : -1;
			pthread_create(&ts[i].tid, NULL, dev_thread_fn, &ts[i]);
			name_thread(ts[i].tid, "fb-dev", i);
		}
		msg("serving %s over /dev/fuse: %d threads", opt.mountpoint,
		    opt.threads);
		wait_threads(&sigs);
		for (i = 0; i < opt.threads; i++)
			pthread_join(ts[i].tid, NULL);
	}
	return 0;
}
