/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Checkpointing ext4 journals so that the metadata buffers they pin can move.
 *
 * jbd2 keeps a reference on every metadata buffer of a committed
 * transaction until the journal is checkpointed, which happens when the
 * journal runs out of room, under memory pressure (its shrinker), at
 * freeze or unmount.  Page migration of block-device page cache needs
 * buffers without references (buffer_migrate_folio_norefs()), so after
 * a metadata-heavy workload (tens of thousands of small files) ext4's
 * inode tables and directory blocks stay where they are, a few dozen to
 * a few hundred pages in each region, for as long as the file system is
 * idle.  EXT4_IOC_CHECKPOINT (Linux 5.13) checkpoints one journal on
 * request; then those pages migrate or drop like other clean cache.
 *
 * The parser is pure (tested with fixture text); fs_checkpoint_ext4()
 * opens the mount points it lists and asks each file system once.
 */
#pragma once

#include <stddef.h>

#define RPM_FS_CHECKPOINT_MAX	64	/* ext4 file systems checkpointed per call */
#define RPM_FS_MOUNTINFO_MAX	(4 << 20)	/* longest /proc/self/mountinfo read */

/*
 * The mount points of the read-write ext4 file systems in a
 * /proc/self/mountinfo text, one per file system (the first mount of each
 * device), unescaped.  Fills at most @max entries of @out and returns
 * how many, or -EBADMSG for a malformed line.
 */
int fs_ext4_mounts_parse(const char *text, char (*out)[4096], size_t max);

/*
 * Checkpoint the journal of every read-write ext4 file system mounted
 * (@root/proc/self/mountinfo, @root "" or NULL for /; the mount points
 * are opened under @root too).  Returns the
 * number of file systems checkpointed (>= 0), or -errno when the mount
 * table cannot be read.  *@failed counts those that refused (no journal,
 * a kernel without the ioctl, a mount point that cannot be opened).
 */
int fs_checkpoint_ext4(const char *root, unsigned *failed);
