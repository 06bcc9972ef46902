// SPDX-License-Identifier: GPL-2.0
/*
 * xattr_tool: set an extended attribute of a given size, or check one
 * through getxattr() and listxattr(), for the guest tests (busybox has no
 * setfattr/getfattr).
 *
 * Usage: xattr_tool set FILE NAME SIZE     value: SIZE bytes of a pattern
 *        xattr_tool check FILE NAME SIZE   the value is that pattern, and
 *                                          listxattr() names NAME
 * Exits 0 on success, 1 with a message on stderr otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

static void fill(char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = (char)('a' + (i * 7) % 26);
}

int main(int argc, char **argv)
{
	char *want, *got, names[65536], *n;
	size_t size;
	ssize_t len;

	if (argc != 5) {
		fprintf(stderr, "usage: %s set|check FILE NAME SIZE\n", argv[0]);
		return 2;
	}
	size = strtoul(argv[4], NULL, 10);
	want = malloc(size + 1);
	got = malloc(size + 1);
	if (!want || !got)
		return 1;
	fill(want, size);
	if (!strcmp(argv[1], "set")) {
		if (setxattr(argv[2], argv[3], want, size, 0)) {
			fprintf(stderr, "setxattr %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		return 0;
	}
	len = getxattr(argv[2], argv[3], NULL, 0);
	if (len != (ssize_t)size) {
		fprintf(stderr, "getxattr size of %s: %zd (%s), want %zu\n", argv[3], len,
			len < 0 ? strerror(errno) : "ok", size);
		return 1;
	}
	len = getxattr(argv[2], argv[3], got, size);
	if (len != (ssize_t)size || memcmp(got, want, size)) {
		fprintf(stderr, "getxattr %s: %zd (%s), want %zu bytes of the pattern\n", argv[3],
			len, len < 0 ? strerror(errno) : "ok", size);
		return 1;
	}
	len = listxattr(argv[2], names, sizeof(names));
	if (len < 0) {
		fprintf(stderr, "listxattr: %s\n", strerror(errno));
		return 1;
	}
	for (n = names; n < names + len; n += strlen(n) + 1)
		if (!strcmp(n, argv[3]))
			return 0;
	fprintf(stderr, "listxattr: no %s\n", argv[3]);
	return 1;
}
