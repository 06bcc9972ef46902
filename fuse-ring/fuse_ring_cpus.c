/* Number of queues the kernel expects: one per possible CPU (nr_cpu_ids). */
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
