/* Which queues to register: by default one per possible CPU (nr_cpu_ids). */
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
 * The queue IDs (CPU numbers) of @want queues among @possible: all of them
 * for 0 or at least @possible, else spread evenly over the CPUs this
 * process may run on (the online ones), so that each serves a share of
 * its neighbours. Returns the number of IDs written to @ids.
 */
unsigned int fr_queue_ids(unsigned int want, unsigned int possible,
			  unsigned int *ids)
{
	unsigned int online[CPU_SETSIZE], nr_online = 0, i;
	cpu_set_t set;

	if (want && want < possible && !sched_getaffinity(0, sizeof(set), &set)) {
		for (i = 0; i < possible && i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				online[nr_online++] = i;
	}
	if (!want || want >= possible || !nr_online) {
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
