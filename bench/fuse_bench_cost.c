// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_bench_cost: what one command costs the whole (guest) machine.
 *
 * Usage: fuse_bench_cost OUTFILE COMMAND [ARG...]
 *
 * Runs COMMAND, waits for it and writes one line to OUTFILE:
 *   busy_ns elapsed_ns ctxt cal res
 * over the command's run:
 *   busy_ns  CPU time of every task: COMMAND's own (its rusage: all its
 *            threads, io_uring's io-wq workers included) plus the growth
 *            of the CPU clock of every other process alive at the end
 *            (kernel threads too; a process that appeared counts whole).
 *            Nanosecond clocks, unlike /proc/stat's ticks; the guest's
 *            config has no CONFIG_SCHEDSTATS, so no /proc/schedstat.
 *            Left out: this tool, processes that ended meanwhile (other
 *            than COMMAND), interrupts taken while a CPU idles.
 *   elapsed_ns  CLOCK_MONOTONIC time from start to end.
 * Under QEMU -icount shift=0 on single-threaded TCG the guest clock
 * advances by one ns per instruction of any vCPU, and skips the time
 * when all vCPUs idle: the instructions run are elapsed_ns minus that
 * skipped time, and busy_ns counts an instruction once per vCPU busy at
 * the time. min(busy_ns, elapsed_ns) is exact when the vCPUs never run at
 * the same time or never all idle; too high by min(time both busy, time
 * all idle) otherwise (two vCPUs).
 *   ctxt     context switches, all CPUs ("ctxt" of /proc/stat)
 *   cal, res function-call and rescheduling IPIs summed over the CPUs
 *            (the CAL and RES lines of /proc/interrupts)
 * COMMAND's stdout and stderr are left alone. Exits with COMMAND's status.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS	32768

struct counters {
	uint64_t ctxt, cal, res;
};

/* CPU time so far of each process, by pid (0: none seen) */
static uint64_t cpu_ns_start[MAX_PIDS];

static void die(const char *what)
{
	fprintf(stderr, "fuse_bench_cost: %s: %s\n", what, strerror(errno));
	exit(125);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t process_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clock;

	if (clock_getcpuclockid(pid, &clock) ||
	    clock_gettime(clock, &ts))
		return 0;	/* gone meanwhile */
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Calls FN(pid, ns) for every process in /proc but this one and SKIP
 * (pids past MAX_PIDS are left out: the guest has a few hundred).
 */
static uint64_t each_process(pid_t skip, uint64_t (*fn)(pid_t, uint64_t))
{
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		die("/proc");
	while ((de = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == getpid() || pid == skip || pid >= MAX_PIDS)
			continue;
		sum += fn(pid, process_cpu_ns(pid));
	}
	closedir(d);
	return sum;
}

static uint64_t note_start(pid_t pid, uint64_t ns)
{
	cpu_ns_start[pid] = ns;
	return 0;
}

static uint64_t growth(pid_t pid, uint64_t ns)
{
	return ns > cpu_ns_start[pid] ? ns - cpu_ns_start[pid] : 0;
}

/* sum of the per-CPU columns of the /proc/interrupts line LABEL: */
static uint64_t irq_sum(const char *line, const char *label)
{
	size_t len = strlen(label);
	uint64_t sum = 0;
	char *end;

	while (*line == ' ')
		line++;
	if (strncmp(line, label, len))
		return 0;
	line += len;
	for (;;) {
		uint64_t v;

		while (*line == ' ')
			line++;
		if (!isdigit((unsigned char)*line))
			return sum;
		v = strtoull(line, &end, 10);
		sum += v;
		line = end;
	}
}

static void read_counters(struct counters *c)
{
	char line[4096];
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen("/proc/stat", "r");
	if (!f)
		die("/proc/stat");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "ctxt ", 5))
			c->ctxt = strtoull(line + 5, NULL, 10);
	fclose(f);
	f = fopen("/proc/interrupts", "r");
	if (!f)
		die("/proc/interrupts");
	while (fgets(line, sizeof(line), f)) {
		c->cal += irq_sum(line, "CAL:");
		c->res += irq_sum(line, "RES:");
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct counters c0, c1;
	uint64_t busy_ns, t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: fuse_bench_cost OUTFILE COMMAND [ARG...]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out)
		die(argv[1]);

	each_process(0, note_start);
	read_counters(&c0);
	t0 = mono_ns();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(argv[2], argv + 2);
		die(argv[2]);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			die("wait4");
	t1 = mono_ns();
	read_counters(&c1);
	busy_ns = each_process(pid, growth);
	busy_ns += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
		   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;

	fprintf(out, "%llu %llu %llu %llu %llu\n", (unsigned long long)busy_ns,
		(unsigned long long)(t1 - t0),
		(unsigned long long)(c1.ctxt - c0.ctxt),
		(unsigned long long)(c1.cal - c0.cal),
		(unsigned long long)(c1.res - c0.res));
	if (fclose(out))
		die(argv[1]);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
