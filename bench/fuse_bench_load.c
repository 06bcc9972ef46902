// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_bench_load: a small load generator for file system latency and
 * throughput, one workload per run.
 *
 * Usage: fuse_bench_load --workload W --dir D [--jobs J] [--seconds S]
 *                        [--max-ops N] [--pin] [--nfiles N]
 *
 * Workloads (J threads each, started together, stopped after S seconds or
 * N operations per thread, whichever comes first):
 *   stat      stat() of existing files D/stat/fNNNNN (--nfiles, default 200,
 *             created once), a random one per op. The benchmark server
 *             caches entries (entry timeout 1 h) and never caches
 *             attributes (attr timeout 0), so every stat() is exactly one
 *             GETATTR round trip: the path walk is served from the dcache.
 *   read4k    4 KiB pread()s at random 4 KiB-aligned offsets, O_DIRECT, of
 *             D/data64m (64 MiB, created once); one fd per thread.
 *   read128k  128 KiB sequential pread()s, O_DIRECT, of the same file; each
 *             thread starts at its own offset and wraps at the end.
 *   create    open(O_CREAT|O_EXCL|O_WRONLY) + close() + unlink() of a new
 *             file D/create/tJ-N; the latency is that of the three calls.
 *   create-own-dir
 *             create with a directory per job, D/create-own-dir/tJ/N: the
 *             jobs do not contend for one directory's lock.
 *   seqread-1m, seqread-1m-direct
 *             1 MiB sequential read()s of D/data64m, buffered or O_DIRECT;
 *             job J reads its own slice (64 MiB / jobs) and, at the end of
 *             it, closes and reopens the file and starts over. On FUSE the
 *             open (no FOPEN_KEEP_CACHE) drops the file's page cache, so
 *             the buffered reads keep going to the server (readahead).
 *   seqwrite-1m, seqwrite-1m-direct
 *             1 MiB sequential write()s, buffered or O_DIRECT, to
 *             D/seqwrite/tJ (64 MiB / jobs each), opened with O_TRUNC at
 *             the start of each pass: the file grows from empty every
 *             pass. The files are removed after the run.
 *   seqwrite-1m-fsync
 *             seqwrite-1m with an fsync() after every 8 MiB, in the write
 *             that ends them: with the server's writeback cache, what the
 *             writes left dirty goes to the server as background WRITEs,
 *             side by side, and the fsync waits for them.
 * The reopen between passes is outside the timed call (not in the
 * latencies) but inside the run (ops/s).
 *
 * Each op is timed with CLOCK_MONOTONIC into a per-thread array. Output, one
 * TSV line on stdout:
 *   workload jobs ops seconds ops_per_s p50_us p99_us
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA_FILE	"data64m"
#define DATA_SIZE	(64ull << 20)
#define FILL_CHUNK	(128 * 1024)

#define SEQ_BS		(1024 * 1024)
#define SEQ_WRITE_DIR	"seqwrite"
#define FSYNC_EVERY	(8 << 20)

enum workload {
	W_STAT, W_READ4K, W_READ128K, W_CREATE, W_CREATE_OWN_DIR,
	W_SEQREAD, W_SEQREAD_DIRECT, W_SEQWRITE, W_SEQWRITE_DIRECT,
	W_SEQWRITE_FSYNC,
};

static const char *const wl_names[] = {
	[W_STAT] = "stat",
	[W_READ4K] = "read4k",
	[W_READ128K] = "read128k",
	[W_CREATE] = "create",
	[W_CREATE_OWN_DIR] = "create-own-dir",
	[W_SEQREAD] = "seqread-1m",
	[W_SEQREAD_DIRECT] = "seqread-1m-direct",
	[W_SEQWRITE] = "seqwrite-1m",
	[W_SEQWRITE_DIRECT] = "seqwrite-1m-direct",
	[W_SEQWRITE_FSYNC] = "seqwrite-1m-fsync",
};

static bool wl_is_seq(enum workload w)
{
	return w >= W_SEQREAD;
}

static bool wl_is_write(enum workload w)
{
	return w == W_SEQWRITE || w == W_SEQWRITE_DIRECT ||
	       w == W_SEQWRITE_FSYNC;
}

static bool wl_is_direct(enum workload w)
{
	return w == W_SEQREAD_DIRECT || w == W_SEQWRITE_DIRECT;
}

static struct {
	enum workload wl;
	const char *dir;
	int jobs;
	double seconds;
	uint64_t max_ops;
	bool pin;
	int nfiles;
} opt = {
	.wl = -1,
	.jobs = 1,
	.seconds = 5,
	.max_ops = 1000000,
	.nfiles = 200,
};

struct job {
	pthread_t tid;
	int idx;
	uint32_t *lat_ns;	/* per-op latency, saturating at ~4.29 s */
	uint64_t ops;
	int err;
};

static pthread_barrier_t start_barrier;
static uint64_t deadline_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "fuse_bench_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ------------------------------------------------------------------------ */
/* Setup, done once before the timed part                                   */

static void setup_stat_files(void)
{
	char path[4096];
	struct stat st;
	int i, fd;

	snprintf(path, sizeof(path), "%s/stat", opt.dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	for (i = 0; i < opt.nfiles; i++) {
		snprintf(path, sizeof(path), "%s/stat/f%05d", opt.dir, i);
		if (!stat(path, &st))
			continue;
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd < 0)
			die(path);
		close(fd);
	}
}

static void setup_data_file(void)
{
	char path[4096], *buf;
	struct stat st;
	uint64_t off;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", opt.dir, DATA_FILE);
	if (!stat(path, &st) && (uint64_t)st.st_size == DATA_SIZE)
		return;
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		die(path);
	buf = malloc(FILL_CHUNK);
	for (off = 0; off < DATA_SIZE; off += FILL_CHUNK) {
		memset(buf, (int)(off >> 17), FILL_CHUNK);
		if (pwrite(fd, buf, FILL_CHUNK, off) != FILL_CHUNK)
			die("write data file");
	}
	if (fsync(fd))
		die("fsync data file");
	close(fd);
	free(buf);
}

static void setup_dir(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", opt.dir, name);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
}

/* ------------------------------------------------------------------------ */
/* The timed loops                                                          */

static int open_data(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", opt.dir, DATA_FILE);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		die(path);
	return fd;
}

/* The sequential workloads' file for job IDX, (re)opened for a new pass. */
static int open_seq(int idx)
{
	int flags = wl_is_direct(opt.wl) ? O_DIRECT : 0;
	char path[4096];
	int fd;

	if (wl_is_write(opt.wl)) {
		snprintf(path, sizeof(path), "%s/%s/t%d", opt.dir,
			 SEQ_WRITE_DIR, idx);
		flags |= O_WRONLY | O_CREAT | O_TRUNC;
	} else {
		snprintf(path, sizeof(path), "%s/%s", opt.dir, DATA_FILE);
		flags |= O_RDONLY;
	}
	fd = open(path, flags, 0644);
	if (fd < 0)
		die(path);
	return fd;
}

/* 64 MiB / jobs, in whole blocks of SEQ_BS, at least one */
static uint64_t seq_slice(void)
{
	uint64_t slice = DATA_SIZE / opt.jobs / SEQ_BS * SEQ_BS;

	return slice ? slice : SEQ_BS;
}

static void *job_fn(void *arg)
{
	struct job *j = arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (j->idx + 1), t0, t1, pos = 0;
	size_t bs = opt.wl == W_READ128K ? 128 * 1024 :
		    wl_is_seq(opt.wl) ? SEQ_BS : 4096;
	uint64_t seq_start = 0, seq_end = 0;
	char path[4096];
	void *buf = NULL;
	struct stat st;
	int fd = -1;

	if (opt.pin) {
		cpu_set_t set;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		CPU_ZERO(&set);
		CPU_SET(j->idx % (ncpu > 0 ? ncpu : 1), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (opt.wl == W_READ4K || opt.wl == W_READ128K) {
		if (posix_memalign(&buf, 4096, bs))
			die("posix_memalign");
		fd = open_data();
		pos = (DATA_SIZE / opt.jobs * j->idx) & ~(uint64_t)(bs - 1);
	}
	if (wl_is_seq(opt.wl)) {
		if (posix_memalign(&buf, 4096, bs))
			die("posix_memalign");
		memset(buf, j->idx + 1, bs);
		/* reads: the job's slice of data64m; writes: its own file */
		if (!wl_is_write(opt.wl))
			seq_start = seq_slice() * j->idx;
		seq_end = seq_start + seq_slice();
		pos = seq_start;
		fd = open_seq(j->idx);
	}
	pthread_barrier_wait(&start_barrier);

	t0 = mono_ns();
	while (j->ops < opt.max_ops && t0 < deadline_ns) {
		int ret = 0;

		switch (opt.wl) {
		case W_STAT:
			snprintf(path, sizeof(path), "%s/stat/f%05d", opt.dir,
				 (int)(xorshift(&seed) % opt.nfiles));
			t0 = mono_ns();
			ret = stat(path, &st);
			break;
		case W_READ4K:
			pos = (xorshift(&seed) % (DATA_SIZE / bs)) * bs;
			t0 = mono_ns();
			ret = pread(fd, buf, bs, pos) == (ssize_t)bs ? 0 : -1;
			break;
		case W_READ128K:
			if (pos + bs > DATA_SIZE)
				pos = 0;
			t0 = mono_ns();
			ret = pread(fd, buf, bs, pos) == (ssize_t)bs ? 0 : -1;
			pos += bs;
			break;
		case W_SEQREAD:
		case W_SEQREAD_DIRECT:
		case W_SEQWRITE:
		case W_SEQWRITE_DIRECT:
		case W_SEQWRITE_FSYNC:
			if (pos + bs > seq_end) {	/* a new pass */
				close(fd);
				fd = open_seq(j->idx);
				pos = seq_start;
			}
			t0 = mono_ns();
			if (wl_is_write(opt.wl))
				ret = pwrite(fd, buf, bs, pos) == (ssize_t)bs;
			else
				ret = pread(fd, buf, bs, pos) == (ssize_t)bs;
			ret = ret ? 0 : -1;
			pos += bs;
			if (!ret && opt.wl == W_SEQWRITE_FSYNC &&
			    (pos - seq_start) % FSYNC_EVERY == 0)
				ret = fsync(fd);
			break;
		case W_CREATE:
		case W_CREATE_OWN_DIR: {
			int cfd;

			snprintf(path, sizeof(path),
				 opt.wl == W_CREATE ? "%s/create/t%d-%llu" :
				 "%s/create-own-dir/t%d/%llu",
				 opt.dir, j->idx, (unsigned long long)j->ops);
			t0 = mono_ns();
			cfd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (cfd < 0 || close(cfd) || unlink(path))
				ret = -1;
			break;
		}
		}
		t1 = mono_ns();
		if (ret) {
			j->err = errno ? errno : EIO;
			break;
		}
		j->lat_ns[j->ops++] = t1 - t0 > UINT32_MAX ? UINT32_MAX
							    : t1 - t0;
		t0 = t1;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double percentile_us(const uint32_t *v, uint64_t n, double pct)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (uint64_t)(pct / 100.0 * (n - 1) + 0.5);
	return v[i] / 1000.0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuse_bench_load --workload stat|read4k|read128k|create|\n"
		"       create-own-dir|seqread-1m|seqread-1m-direct|seqwrite-1m|\n"
		"       seqwrite-1m-direct|seqwrite-1m-fsync\n"
		"       --dir D [--jobs J] [--seconds S] [--max-ops N] [--pin]\n"
		"       [--nfiles N]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "seconds", required_argument, NULL, 's' },
		{ "max-ops", required_argument, NULL, 'm' },
		{ "pin", no_argument, NULL, 'p' },
		{ "nfiles", required_argument, NULL, 'n' },
		{ }
	};
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "w:d:j:s:m:pn:", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			for (i = 0; i < sizeof(wl_names) / sizeof(*wl_names); i++)
				if (!strcmp(optarg, wl_names[i]))
					opt.wl = i;
			break;
		case 'd':
			opt.dir = optarg;
			break;
		case 'j':
			opt.jobs = atoi(optarg);
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 'm':
			opt.max_ops = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			opt.pin = true;
			break;
		case 'n':
			opt.nfiles = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if ((int)opt.wl < 0 || !opt.dir || opt.jobs < 1 || opt.seconds <= 0 ||
	    !opt.max_ops || opt.nfiles < 1 || optind != argc)
		usage();
}

int main(int argc, char **argv)
{
	uint64_t total = 0, start, end, k;
	struct job *jobs;
	uint32_t *all;
	double secs;
	int i, err = 0;

	parse_args(argc, argv);
	switch (opt.wl) {
	case W_STAT:
		setup_stat_files();
		break;
	case W_READ4K:
	case W_READ128K:
	case W_SEQREAD:
	case W_SEQREAD_DIRECT:
		setup_data_file();
		break;
	case W_CREATE:
		setup_dir("create");
		break;
	case W_CREATE_OWN_DIR:
		setup_dir("create-own-dir");
		for (i = 0; i < opt.jobs; i++) {
			char name[64];

			snprintf(name, sizeof(name), "create-own-dir/t%d", i);
			setup_dir(name);
		}
		break;
	case W_SEQWRITE:
	case W_SEQWRITE_DIRECT:
	case W_SEQWRITE_FSYNC:
		setup_dir(SEQ_WRITE_DIR);
		break;
	}

	jobs = calloc(opt.jobs, sizeof(*jobs));
	pthread_barrier_init(&start_barrier, NULL, opt.jobs + 1);
	for (i = 0; i < opt.jobs; i++) {
		jobs[i].idx = i;
		jobs[i].lat_ns = malloc(opt.max_ops * sizeof(uint32_t));
		if (!jobs[i].lat_ns)
			die("malloc latency array");
		if (pthread_create(&jobs[i].tid, NULL, job_fn, &jobs[i]))
			die("pthread_create");
	}
	start = mono_ns();
	deadline_ns = start + (uint64_t)(opt.seconds * 1e9);
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < opt.jobs; i++) {
		pthread_join(jobs[i].tid, NULL);
		total += jobs[i].ops;
		if (jobs[i].err)
			err = jobs[i].err;
	}
	end = mono_ns();
	if (err) {
		errno = err;
		die(wl_names[opt.wl]);
	}
	if (wl_is_write(opt.wl)) {
		char path[4096];

		for (i = 0; i < opt.jobs; i++) {
			snprintf(path, sizeof(path), "%s/%s/t%d", opt.dir,
				 SEQ_WRITE_DIR, i);
			unlink(path);
		}
	}

	all = malloc((total ? total : 1) * sizeof(*all));
	for (i = 0, k = 0; i < opt.jobs; i++) {
		memcpy(all + k, jobs[i].lat_ns, jobs[i].ops * sizeof(*all));
		k += jobs[i].ops;
		free(jobs[i].lat_ns);
	}
	qsort(all, total, sizeof(*all), cmp_u32);
	secs = (end - start) / 1e9;
	printf("%s\t%d\t%llu\t%.3f\t%.1f\t%.1f\t%.1f\n", wl_names[opt.wl],
	       opt.jobs, (unsigned long long)total, secs, total / secs,
	       percentile_us(all, total, 50), percentile_us(all, total, 99));
	free(all);
	free(jobs);
	return 0;
}
