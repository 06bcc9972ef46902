/*
 * passthrough_ring: a small lowlevel libfuse3 file system that mirrors a
 * directory, served over the FUSE io_uring transport (--ring, default) or
 * plain /dev/fuse (--no-ring) through libfuse-ring.
 *
 * Usage: passthrough_ring [--ring|--no-ring] [--depth=N] [--queues=N]
 *                         [--setup=defer|plain|coop] [--poll-us=N] [--async]
 *                         [--slow-name=NAME] [--single] [--verbose]
 *                         [libfuse options, e.g. -o allow_other]
 *                         SOURCE_DIR MOUNTPOINT
 *
 * --async        READ, WRITE and LOOKUP are answered from helper threads,
 *                not from the thread that received the request.
 * --slow-name=N  a LOOKUP of N says so on stderr, waits up to 5 s for an
 *                INTERRUPT, then answers EINTR (interrupted) or ENOENT.
 * --single       fuse_session_loop() instead of fuse_session_loop_mt().
 * --poll-us=N    each queue thread looks for its next request up to N us
 *                before it sleeps (fuse_ring_opts.poll_us; off by default).
 * --splice       init() wants SPLICE_READ|WRITE|MOVE (as fuse-overlayfs
 *                does) and READ replies splice from the file.
 * --clone-fd     the threaded loop gives each thread its own /dev/fuse fd.
 * --max-threads=N  the threaded loop's max_threads.
 * --exit-name=N  a LOOKUP of N calls fuse_session_exit() (ENOENT).
 * --max-write=N  init() sets max_write (and so libfuse's max_pages) to N.
 * A LOOKUP of "barrier-K-ID" waits until K such LOOKUPs are in handlers at
 * once (5 s at most) and logs "barrier met" or "barrier timed out".
 * At exit the server logs the most handlers it ran at once.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "fuse_ring.h"

struct pt_inode {
	struct pt_inode *next, *prev;	/* in pt.inodes, not the root */
	int fd;				/* O_PATH */
	ino_t ino;
	dev_t dev;
	uint64_t nlookup;
};

struct pt_job {
	struct pt_job *next;
	void (*fn)(struct pt_job *job);
	fuse_req_t req;
	fuse_ino_t ino;
	uint64_t fh;
	size_t size;
	off_t off;
	char *data;			/* WRITE's data, LOOKUP's name (copied) */
};

static struct {
	pthread_mutex_t lock;
	struct pt_inode root;		/* list head too */
	double timeout;
	const char *slow_name;
	int async;
	pthread_mutex_t job_lock;
	pthread_cond_t job_cond;
	struct pt_job *jobs, **jobs_tail;
	struct fuse_session *se;
	const char *exit_name;
	int splice;
	unsigned int max_write;
	unsigned int active, max_active;	/* handlers running now, at most */
	pthread_mutex_t barrier_lock;
	pthread_cond_t barrier_cond;
	unsigned int barrier_in, barrier_gen;
} pt = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.job_lock = PTHREAD_MUTEX_INITIALIZER,
	.job_cond = PTHREAD_COND_INITIALIZER,
	.barrier_lock = PTHREAD_MUTEX_INITIALIZER,
	.barrier_cond = PTHREAD_COND_INITIALIZER,
	.timeout = 1.0,
};

static struct pt_inode *pt_inode(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &pt.root : (struct pt_inode *)(uintptr_t)ino;
}

static int pt_fd(fuse_ino_t ino)
{
	return pt_inode(ino)->fd;
}

static void pt_proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* ---- helper threads for --async ---- */

static void pt_job_queue(struct pt_job *job)
{
	pthread_mutex_lock(&pt.job_lock);
	job->next = NULL;
	*pt.jobs_tail = job;
	pt.jobs_tail = &job->next;
	pthread_cond_signal(&pt.job_cond);
	pthread_mutex_unlock(&pt.job_lock);
}

static void *pt_job_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pt_job *job;

		pthread_mutex_lock(&pt.job_lock);
		while (!pt.jobs)
			pthread_cond_wait(&pt.job_cond, &pt.job_lock);
		job = pt.jobs;
		pt.jobs = job->next;
		if (!pt.jobs)
			pt.jobs_tail = &pt.jobs;
		pthread_mutex_unlock(&pt.job_lock);
		job->fn(job);
		free(job->data);
		free(job);
	}
	return NULL;
}

static struct pt_job *pt_job_new(void (*fn)(struct pt_job *), fuse_req_t req)
{
	struct pt_job *job = calloc(1, sizeof(*job));

	if (!job) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	job->fn = fn;
	job->req = req;
	return job;
}

/* ---- lookup and inodes ---- */

static struct pt_inode *pt_find(const struct stat *st)
{
	struct pt_inode *p;

	for (p = pt.root.next; p != &pt.root; p = p->next)
		if (p->ino == st->st_ino && p->dev == st->st_dev)
			return p;
	return NULL;
}

static int pt_do_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	struct pt_inode *inode;
	int fd, err;

	memset(e, 0, sizeof(*e));
	e->attr_timeout = pt.timeout;
	e->entry_timeout = pt.timeout;
	fd = openat(pt_fd(parent), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1) {
		err = errno;
		close(fd);
		return err;
	}
	pthread_mutex_lock(&pt.lock);
	inode = pt_find(&e->attr);
	if (inode) {
		close(fd);
	} else {
		inode = calloc(1, sizeof(*inode));
		if (!inode) {
			pthread_mutex_unlock(&pt.lock);
			close(fd);
			return ENOMEM;
		}
		inode->fd = fd;
		inode->ino = e->attr.st_ino;
		inode->dev = e->attr.st_dev;
		inode->next = &pt.root;
		inode->prev = pt.root.prev;
		pt.root.prev->next = inode;
		pt.root.prev = inode;
	}
	inode->nlookup++;
	pthread_mutex_unlock(&pt.lock);
	e->ino = (uintptr_t)inode;
	return 0;
}

static void pt_forget_one(fuse_ino_t ino, uint64_t n)
{
	struct pt_inode *inode = pt_inode(ino);

	if (inode == &pt.root)
		return;
	pthread_mutex_lock(&pt.lock);
	inode->nlookup -= n < inode->nlookup ? n : inode->nlookup;
	if (!inode->nlookup) {
		inode->prev->next = inode->next;
		inode->next->prev = inode->prev;
		close(inode->fd);
		free(inode);
	}
	pthread_mutex_unlock(&pt.lock);
}

static void pt_slow_lookup(fuse_req_t req)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	fprintf(stderr, "passthrough_ring: slow LOOKUP waits for an INTERRUPT\n");
	for (i = 0; i < 500; i++) {
		if (fuse_req_interrupted(req)) {
			fprintf(stderr, "passthrough_ring: slow LOOKUP interrupted\n");
			fuse_reply_err(req, EINTR);
			return;
		}
		nanosleep(&ts, NULL);
	}
	fuse_reply_err(req, ENOENT);
}

/* Look @name up and reply with its entry or the error */
static void pt_reply_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err;

	err = pt_do_lookup(parent, name, &e);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_entry(req, &e);
}

/*
 * "barrier-K-ID": wait until K of these are in handlers together, which
 * only a server that runs K handlers at once can reach.
 */
static void pt_barrier(fuse_req_t req, unsigned int k)
{
	struct timespec end;
	unsigned int gen;
	int met = 1;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 5;
	pthread_mutex_lock(&pt.barrier_lock);
	gen = pt.barrier_gen;
	if (++pt.barrier_in >= k) {
		pt.barrier_in = 0;
		pt.barrier_gen++;
		pthread_cond_broadcast(&pt.barrier_cond);
	}
	while (gen == pt.barrier_gen && met)
		met = pthread_cond_timedwait(&pt.barrier_cond, &pt.barrier_lock, &end) == 0;
	if (gen == pt.barrier_gen) {
		pt.barrier_in--;
		met = 0;
	} else {
		met = 1;
	}
	pthread_mutex_unlock(&pt.barrier_lock);
	fprintf(stderr, "passthrough_ring: barrier %s (%u)\n", met ? "met" : "timed out", k);
	fuse_reply_err(req, ENOENT);
}

static void pt_lookup_now(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!strncmp(name, "barrier-", 8)) {
		pt_barrier(req, atoi(name + 8));
		return;
	}
	if (pt.exit_name && !strcmp(name, pt.exit_name)) {
		fprintf(stderr, "passthrough_ring: fuse_session_exit() from a handler\n");
		fuse_session_exit(pt.se);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (pt.slow_name && strcmp(name, pt.slow_name) == 0) {
		pt_slow_lookup(req);
		return;
	}
	pt_reply_lookup(req, parent, name);
}

static void pt_lookup_job(struct pt_job *job)
{
	pt_lookup_now(job->req, job->ino, job->data);
}

static void pt_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pt_job *job;

	if (!pt.async) {
		pt_lookup_now(req, parent, name);
		return;
	}
	job = pt_job_new(pt_lookup_job, req);
	if (!job)
		return;
	job->ino = parent;
	job->data = strdup(name);
	if (!job->data) {
		free(job);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pt_job_queue(job);
}

static void pt_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	pt_forget_one(ino, nlookup);
	fuse_reply_none(req);
}

static void pt_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
	size_t i;

	for (i = 0; i < count; i++)
		pt_forget_one(f[i].ino, f[i].nlookup);
	fuse_reply_none(req);
}

/* ---- attributes ---- */

static void pt_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fstatat(pt_fd(ino), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, pt.timeout);
}

static void pt_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		       struct fuse_file_info *fi)
{
	char path[64];
	int fd = pt_fd(ino), res = 0;

	pt_proc_path(path, sizeof(path), fd);
	if (valid & FUSE_SET_ATTR_MODE)
		res = fi ? fchmod(fi->fh, attr->st_mode) : chmod(path, attr->st_mode);
	if (!res && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		res = fchownat(fd, "", (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1,
			       (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1,
			       AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (!res && (valid & FUSE_SET_ATTR_SIZE))
		res = fi ? ftruncate(fi->fh, attr->st_size) : truncate(path, attr->st_size);
	if (!res && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		struct timespec tv[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };

		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		res = fi ? futimens(fi->fh, tv) : utimensat(AT_FDCWD, path, tv, 0);
	}
	if (res == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	pt_getattr(req, ino, fi);
}

static void pt_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(pt_fd(ino), "", buf, sizeof(buf) - 1);

	if (n == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	buf[n] = 0;
	fuse_reply_readlink(req, buf);
}

/* ---- names ---- */

static void pt_reply_new(fuse_req_t req, int res, fuse_ino_t parent, const char *name)
{
	if (res == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	pt_reply_lookup(req, parent, name);
}

static void pt_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	pt_reply_new(req, mknodat(pt_fd(parent), name, mode, rdev), parent, name);
}

static void pt_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	pt_reply_new(req, mkdirat(pt_fd(parent), name, mode), parent, name);
}

static void pt_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	pt_reply_new(req, symlinkat(link, pt_fd(parent), name), parent, name);
}

static void pt_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	char path[64];

	pt_proc_path(path, sizeof(path), pt_fd(ino));
	pt_reply_new(req, linkat(AT_FDCWD, path, pt_fd(parent), name, AT_SYMLINK_FOLLOW),
		     parent, name);
}

static void pt_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, unlinkat(pt_fd(parent), name, 0) == -1 ? errno : 0);
}

static void pt_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, unlinkat(pt_fd(parent), name, AT_REMOVEDIR) == -1 ? errno : 0);
}

static void pt_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	int res = renameat2(pt_fd(parent), name, pt_fd(newparent), newname, flags);

	fuse_reply_err(req, res == -1 ? errno : 0);
}

/* ---- files ---- */

static void pt_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	char path[64];
	int fd;

	pt_proc_path(path, sizeof(path), pt_fd(ino));
	fd = open(path, (fi->flags & ~O_NOFOLLOW) | O_CLOEXEC);
	if (fd == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	fi->fh = fd;
	fuse_reply_open(req, fi);
}

static void pt_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int fd, err;

	fd = openat(pt_fd(parent), name, (fi->flags | O_CREAT | O_CLOEXEC) & ~O_NOFOLLOW, mode);
	if (fd == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	err = pt_do_lookup(parent, name, &e);
	if (err) {
		close(fd);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = fd;
	fuse_reply_create(req, &e, fi);
}

static void pt_read_now(fuse_req_t req, uint64_t fh, size_t size, off_t off)
{
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = pread(fh, buf, size, off);
	if (n == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_buf(req, buf, n);
	free(buf);
}

static void pt_read_job(struct pt_job *job)
{
	pt_read_now(job->req, job->fh, job->size, job->off);
}

static void pt_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct pt_job *job;

	(void)ino;
	if (pt.splice) {
		struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

		buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		buf.buf[0].fd = fi->fh;
		buf.buf[0].pos = off;
		fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
		return;
	}
	if (!pt.async) {
		pt_read_now(req, fi->fh, size, off);
		return;
	}
	job = pt_job_new(pt_read_job, req);
	if (!job)
		return;
	job->fh = fi->fh;
	job->size = size;
	job->off = off;
	pt_job_queue(job);
}

static void pt_write_now(fuse_req_t req, uint64_t fh, const char *buf, size_t size, off_t off)
{
	ssize_t n = pwrite(fh, buf, size, off);

	if (n == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_write(req, n);
}

static void pt_write_job(struct pt_job *job)
{
	pt_write_now(job->req, job->fh, job->data, job->size, job->off);
}

static void pt_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct pt_job *job;

	(void)ino;
	if (!pt.async) {
		pt_write_now(req, fi->fh, buf, size, off);
		return;
	}
	/* The request buffer is not ours once this returns: copy. */
	job = pt_job_new(pt_write_job, req);
	if (!job)
		return;
	job->data = malloc(size ? size : 1);
	if (!job->data) {
		free(job);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(job->data, buf, size);
	job->fh = fi->fh;
	job->size = size;
	job->off = off;
	pt_job_queue(job);
}

static void pt_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_err(req, close(dup(fi->fh)) == -1 ? errno : 0);
}

static void pt_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	close(fi->fh);
	fuse_reply_err(req, 0);
}

static void pt_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int res = datasync ? fdatasync(fi->fh) : fsync(fi->fh);

	(void)ino;
	fuse_reply_err(req, res == -1 ? errno : 0);
}

/* ---- directories ---- */

struct pt_dir {
	DIR *dp;
	struct dirent *entry;
	off_t offset;
};

static void pt_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pt_dir *d = calloc(1, sizeof(*d));
	int fd;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = openat(pt_fd(ino), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || !(d->dp = fdopendir(fd))) {
		int err = errno;

		if (fd != -1)
			close(fd);
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	fuse_reply_open(req, fi);
}

static void pt_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;
	char *buf = calloc(1, size), *p = buf;
	size_t rem = size;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		struct stat st;
		size_t len;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				if (errno && rem == size) {
					free(buf);
					fuse_reply_err(req, errno);
					return;
				}
				break;
			}
		}
		memset(&st, 0, sizeof(st));
		st.st_ino = d->entry->d_ino;
		st.st_mode = d->entry->d_type << 12;
		len = fuse_add_direntry(req, p, rem, d->entry->d_name, &st, d->entry->d_off);
		if (len > rem)
			break;
		p += len;
		rem -= len;
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

static void pt_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;

	(void)ino;
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void pt_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);

	(void)ino;
	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == -1 ? errno : 0);
}

static void pt_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (fstatvfs(pt_fd(ino), &sv) == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes ---- */

/* getxattr of @name, or listxattr with @name NULL: the size for 0, else the bytes */
static void pt_reply_xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char path[64], *buf = NULL;
	ssize_t n;

	pt_proc_path(path, sizeof(path), pt_fd(ino));
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = name ? getxattr(path, name, buf, size) : listxattr(path, buf, size);
	if (n == -1)
		fuse_reply_err(req, errno);
	else if (!size)
		fuse_reply_xattr(req, n);
	else
		fuse_reply_buf(req, buf, n);
	free(buf);
}

static void pt_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	pt_reply_xattr(req, ino, name, size);
}

static void pt_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	pt_reply_xattr(req, ino, NULL, size);
}

static void pt_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	char path[64];

	pt_proc_path(path, sizeof(path), pt_fd(ino));
	fuse_reply_err(req, setxattr(path, name, value, size, flags) == -1 ? errno : 0);
}

static void pt_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (pt.max_write)
		conn->max_write = pt.max_write;
	/* as fuse-overlayfs: wanted whatever libfuse says it can */
	if (pt.splice)
		conn->want |= FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
}

/* Count the handlers running at once, whatever thread runs them. */
static void pt_enter(void)
{
	unsigned int n = __atomic_add_fetch(&pt.active, 1, __ATOMIC_SEQ_CST);
	unsigned int m = __atomic_load_n(&pt.max_active, __ATOMIC_RELAXED);

	while (n > m && !__atomic_compare_exchange_n(&pt.max_active, &m, n, 0,
						     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void pt_leave(void)
{
	__atomic_sub_fetch(&pt.active, 1, __ATOMIC_SEQ_CST);
}

#define PT_WRAP(name, params, args) \
	static void w_##name params { pt_enter(); pt_##name args; pt_leave(); }

PT_WRAP(lookup, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
PT_WRAP(forget, (fuse_req_t r, fuse_ino_t i, uint64_t n), (r, i, n))
PT_WRAP(forget_multi, (fuse_req_t r, size_t c, struct fuse_forget_data *f), (r, c, f))
PT_WRAP(getattr, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(setattr, (fuse_req_t r, fuse_ino_t i, struct stat *a, int v, struct fuse_file_info *f),
	(r, i, a, v, f))
PT_WRAP(readlink, (fuse_req_t r, fuse_ino_t i), (r, i))
PT_WRAP(mknod, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m, dev_t d), (r, p, n, m, d))
PT_WRAP(mkdir, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m), (r, p, n, m))
PT_WRAP(symlink, (fuse_req_t r, const char *l, fuse_ino_t p, const char *n), (r, l, p, n))
PT_WRAP(link, (fuse_req_t r, fuse_ino_t i, fuse_ino_t p, const char *n), (r, i, p, n))
PT_WRAP(unlink, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
PT_WRAP(rmdir, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
PT_WRAP(rename, (fuse_req_t r, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn,
		 unsigned int f), (r, p, n, np, nn, f))
PT_WRAP(open, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(create, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m, struct fuse_file_info *f),
	(r, p, n, m, f))
PT_WRAP(read, (fuse_req_t r, fuse_ino_t i, size_t s, off_t o, struct fuse_file_info *f),
	(r, i, s, o, f))
PT_WRAP(write, (fuse_req_t r, fuse_ino_t i, const char *b, size_t s, off_t o,
		struct fuse_file_info *f), (r, i, b, s, o, f))
PT_WRAP(flush, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(release, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(fsync, (fuse_req_t r, fuse_ino_t i, int d, struct fuse_file_info *f), (r, i, d, f))
PT_WRAP(opendir, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(readdir, (fuse_req_t r, fuse_ino_t i, size_t s, off_t o, struct fuse_file_info *f),
	(r, i, s, o, f))
PT_WRAP(releasedir, (fuse_req_t r, fuse_ino_t i, struct fuse_file_info *f), (r, i, f))
PT_WRAP(fsyncdir, (fuse_req_t r, fuse_ino_t i, int d, struct fuse_file_info *f), (r, i, d, f))
PT_WRAP(statfs, (fuse_req_t r, fuse_ino_t i), (r, i))
PT_WRAP(getxattr, (fuse_req_t r, fuse_ino_t i, const char *n, size_t s), (r, i, n, s))
PT_WRAP(listxattr, (fuse_req_t r, fuse_ino_t i, size_t s), (r, i, s))
PT_WRAP(setxattr, (fuse_req_t r, fuse_ino_t i, const char *n, const char *v, size_t s, int f),
	(r, i, n, v, s, f))

static const struct fuse_lowlevel_ops pt_ops = {
	.init = pt_init,
	.lookup = w_lookup,
	.forget = w_forget,
	.forget_multi = w_forget_multi,
	.getattr = w_getattr,
	.setattr = w_setattr,
	.readlink = w_readlink,
	.mknod = w_mknod,
	.mkdir = w_mkdir,
	.symlink = w_symlink,
	.link = w_link,
	.unlink = w_unlink,
	.rmdir = w_rmdir,
	.rename = w_rename,
	.open = w_open,
	.create = w_create,
	.read = w_read,
	.write = w_write,
	.flush = w_flush,
	.release = w_release,
	.fsync = w_fsync,
	.opendir = w_opendir,
	.readdir = w_readdir,
	.releasedir = w_releasedir,
	.fsyncdir = w_fsyncdir,
	.statfs = w_statfs,
	.getxattr = w_getxattr,
	.listxattr = w_listxattr,
	.setxattr = w_setxattr,
};

static void pt_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--ring|--no-ring] [--depth=N] [--queues=N] [--setup=defer|plain|coop]\n"
		"       [--poll-us=N] [--async] [--slow-name=NAME] [--single] [--verbose]\n"
		"       [--splice] [--clone-fd] [--max-threads=N] [--exit-name=NAME] [--max-write=N]\n"
		"       [libfuse options]\n"
		"       SOURCE_DIR MOUNTPOINT\n", prog);
}

/*
 * Every inode the kernel knows holds an O_PATH fd here, so the default limit
 * of 1024 open files ends a bonnie++ run (tens of thousands of files) with
 * EMFILE. Raise it as far as we may: to fs.nr_open when privileged, else to
 * the hard limit.
 */
static void pt_raise_fd_limit(void)
{
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max) {
		struct rlimit all = { nr_open, nr_open };

		if (setrlimit(RLIMIT_NOFILE, &all) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char *argv[])
{
	struct fuse_ring_opts ro = { .use_ring = 1 };
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	const char *source = NULL, *mnt = NULL;
	struct fuse_session *se;
	int i, single = 0, clone_fd = 0, max_threads = 0, ret = 1;

	fuse_opt_add_arg(&args, argv[0]);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--ring"))
			ro.use_ring = 1;
		else if (!strcmp(a, "--no-ring"))
			ro.use_ring = 0;
		else if (!strncmp(a, "--depth=", 8))
			ro.queue_depth = atoi(a + 8);
		else if (!strncmp(a, "--queues=", 9))
			ro.nr_queues = atoi(a + 9);
		else if (!strcmp(a, "--setup=defer"))
			ro.setup = FUSE_RING_SETUP_DEFER;
		else if (!strcmp(a, "--setup=plain"))
			ro.setup = FUSE_RING_SETUP_PLAIN;
		else if (!strcmp(a, "--setup=coop"))
			ro.setup = FUSE_RING_SETUP_COOP;
		else if (!strncmp(a, "--poll-us=", 10))
			ro.poll_us = atoi(a + 10);
		else if (!strcmp(a, "--async"))
			pt.async = 1;
		else if (!strncmp(a, "--slow-name=", 12))
			pt.slow_name = a + 12;
		else if (!strcmp(a, "--single"))
			single = 1;
		else if (!strcmp(a, "--splice"))
			pt.splice = 1;
		else if (!strcmp(a, "--clone-fd"))
			clone_fd = 1;
		else if (!strncmp(a, "--max-threads=", 14))
			max_threads = atoi(a + 14);
		else if (!strncmp(a, "--max-write=", 12))
			pt.max_write = atoi(a + 12);
		else if (!strncmp(a, "--exit-name=", 12))
			pt.exit_name = a + 12;
		else if (!strcmp(a, "--verbose"))
			ro.verbose = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			pt_usage(argv[0]);
			return 0;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			fuse_opt_add_arg(&args, a);
			fuse_opt_add_arg(&args, argv[++i]);
		} else if (a[0] == '-')
			fuse_opt_add_arg(&args, a);
		else if (!source)
			source = a;
		else if (!mnt)
			mnt = a;
		else {
			pt_usage(argv[0]);
			return 2;
		}
	}
	if (!source || !mnt) {
		pt_usage(argv[0]);
		return 2;
	}

	pt_raise_fd_limit();
	pt.root.next = pt.root.prev = &pt.root;
	pt.root.nlookup = 2;
	pt.root.fd = open(source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pt.root.fd == -1) {
		fprintf(stderr, "passthrough_ring: %s: %s\n", source, strerror(errno));
		return 1;
	}
	pt.jobs_tail = &pt.jobs;
	if (pt.async) {
		pthread_t t;

		for (i = 0; i < 2; i++)
			if (pthread_create(&t, NULL, pt_job_thread, NULL) == 0)
				pthread_detach(t);
	}

	se = fuse_session_new(&args, &pt_ops, sizeof(pt_ops), NULL);
	if (!se)
		goto out_args;
	pt.se = se;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_ring_mount(se, mnt, &ro) != 0)
		goto out_signals;
	fprintf(stderr, "passthrough_ring: serving %s on %s (pid %d)\n", source, mnt, (int)getpid());

	if (single) {
		ret = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *cfg = fuse_loop_cfg_create();

		fuse_loop_cfg_set_clone_fd(cfg, clone_fd);
		if (max_threads)
			fuse_loop_cfg_set_max_threads(cfg, max_threads);
		ret = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	/* libfuse returns the signal number when a signal ended the loop */
	if (ret == SIGTERM || ret == SIGINT || ret == SIGHUP) {
		fprintf(stderr, "passthrough_ring: signal %d, shutting down\n", ret);
		ret = 0;
	}
	fuse_ring_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_args:
	fuse_opt_free_args(&args);
	fprintf(stderr, "passthrough_ring: max concurrent handlers: %u\n", pt.max_active);
	fprintf(stderr, "passthrough_ring: exit %d\n", ret ? 1 : 0);
	return ret ? 1 : 0;
}
