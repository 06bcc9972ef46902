/* Which queues to register: by default one per CPU the process may run on. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "fuse_ring_internal.h"

unsigned int fr_possible_cpus(void)
{
	char line[256], *p, *end;
	unsigned long last = 0, v;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	if (!f)
		return get_nprocs_conf();
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return get_nprocs_conf();
	}
	fclose(f);
	/* "0-3" or "0,2-5": the highest number + 1 */
	for (p = line; *p && *p != '\n'; p = end) {
		if (*p < '0' || *p > '9') {
			end = p + 1;
			continue;
		}
		v = strtoul(p, &end, 10);
		if (v > last)
			last = v;
	}
	return last + 1;
}

/*
 * The queue IDs (CPU numbers) to register. 0: one per CPU among @possible
 * that this process may run on (a cpuset or a container may allow two of a
 * machine's hundred; the kernel serves the other CPUs from the nearest
 * queue). @possible or more: every possible CPU, for kernels that serve
 * nothing until each has a queue. Else @want spread evenly over the allowed
 * CPUs, each serving a share of its neighbours. Returns the number of IDs
 * written to @ids.
 */
unsigned int fr_queue_ids(unsigned int want, unsigned int possible,
			  unsigned int *ids)
{
	unsigned int allowed[CPU_SETSIZE], nr_allowed = 0, i;
	cpu_set_t set;

	if (want < possible && !sched_getaffinity(0, sizeof(set), &set)) {
		for (i = 0; i < possible && i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				allowed[nr_allowed++] = i;
	}
	if (!nr_allowed) {
		for (i = 0; i < possible; i++)
			ids[i] = i;
		return possible;
	}
	if (!want || want > nr_allowed)
		want = nr_allowed;
	for (i = 0; i < want; i++)
		ids[i] = allowed[i * nr_allowed / want];
	return want;
}
