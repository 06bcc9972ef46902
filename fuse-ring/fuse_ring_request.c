/*
 * Turn a request received in a ring entry back into the /dev/fuse layout
 * libfuse expects: fuse_in_header, the opcode's fixed-size first argument
 * (from the entry's op_in area) and the payload, contiguous.
 */
#include <stdio.h>
#include <string.h>

#include "fuse_ring_internal.h"

/*
 * Size of the fixed first in-argument the kernel (6.12, negotiated minor
 * >= 12, as with libfuse 3.14) puts in op_in for @opcode. 0: the opcode
 * has none (no arguments, or a name first: LOOKUP, SYMLINK, UNLINK, RMDIR,
 * REMOVEXATTR). -1: unknown opcode.
 */
long fr_op_in_size(uint32_t opcode)
{
	switch (opcode) {
	case FUSE_LOOKUP:
	case FUSE_SYMLINK:
	case FUSE_UNLINK:
	case FUSE_RMDIR:
	case FUSE_REMOVEXATTR:
	case FUSE_READLINK:
	case FUSE_STATFS:
	case FUSE_DESTROY:
		return 0;
	case FUSE_GETATTR:		return sizeof(struct fuse_getattr_in);
	case FUSE_SETATTR:		return sizeof(struct fuse_setattr_in);
	case FUSE_MKNOD:		return sizeof(struct fuse_mknod_in);
	case FUSE_MKDIR:		return sizeof(struct fuse_mkdir_in);
	case FUSE_RENAME:		return sizeof(struct fuse_rename_in);
	case FUSE_RENAME2:		return sizeof(struct fuse_rename2_in);
	case FUSE_LINK:			return sizeof(struct fuse_link_in);
	case FUSE_OPEN:
	case FUSE_OPENDIR:		return sizeof(struct fuse_open_in);
	case FUSE_CREATE:
	case FUSE_TMPFILE:		return sizeof(struct fuse_create_in);
	case FUSE_READ:
	case FUSE_READDIR:
	case FUSE_READDIRPLUS:		return sizeof(struct fuse_read_in);
	case FUSE_WRITE:		return sizeof(struct fuse_write_in);
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:		return sizeof(struct fuse_release_in);
	case FUSE_FLUSH:		return sizeof(struct fuse_flush_in);
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:		return sizeof(struct fuse_fsync_in);
	case FUSE_SETXATTR:		return FUSE_COMPAT_SETXATTR_IN_SIZE; /* no SETXATTR_EXT in 3.14 */
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR:		return sizeof(struct fuse_getxattr_in);
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:		return sizeof(struct fuse_lk_in);
	case FUSE_ACCESS:		return sizeof(struct fuse_access_in);
	case FUSE_BMAP:			return sizeof(struct fuse_bmap_in);
	case FUSE_IOCTL:		return sizeof(struct fuse_ioctl_in);
	case FUSE_POLL:			return sizeof(struct fuse_poll_in);
	case FUSE_FALLOCATE:		return sizeof(struct fuse_fallocate_in);
	case FUSE_LSEEK:		return sizeof(struct fuse_lseek_in);
	case FUSE_COPY_FILE_RANGE:	return sizeof(struct fuse_copy_file_range_in);
	case FUSE_SYNCFS:		return sizeof(struct fuse_syncfs_in);
	case FUSE_STATX:		return sizeof(struct fuse_statx_in);
	case FUSE_NOTIFY_REPLY:		return sizeof(struct fuse_notify_retrieve_in);
	default:
		return -1;
	}
}

/*
 * Rebuild the entry's request in front of its payload. Returns its length
 * and sets *start, or 0 if the entry's contents are inconsistent.
 */
size_t fr_request_rebuild(struct fr_ent *ent, size_t payload_max, char **start)
{
	struct fuse_in_header ih;
	uint32_t psz = ent->hdr->ring_ent_in_out.payload_sz;
	long opsz;
	size_t total;
	char *p;

	memcpy(&ih, ent->hdr->in_out, sizeof(ih));
	opsz = fr_op_in_size(ih.opcode);
	if (opsz < 0) {
		/* Unknown opcode: trust the kernel's total length. */
		if (ih.len < sizeof(ih) + psz)
			return 0;
		opsz = ih.len - sizeof(ih) - psz;
	}
	if (psz > payload_max || opsz > FUSE_URING_OP_IN_OUT_SZ)
		return 0;
	total = sizeof(ih) + opsz + psz;
	if (ih.len != total) {
		static int warned;

		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "fuse-ring: opcode %u: in.len %u but header+op_in+payload is %zu\n",
				ih.opcode, ih.len, total);
		ih.len = total;
	}
	p = ent->payload - opsz - sizeof(ih);
	memcpy(p, &ih, sizeof(ih));
	memcpy(p + sizeof(ih), ent->hdr->op_in, opsz);
	*start = p;
	return total;
}
