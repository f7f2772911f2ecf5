// SPDX-License-Identifier: GPL-2.0-or-later
#include "fs-checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "procfs-util.h"

/* include/uapi/linux/ext4.h (Linux 5.13); glibc and Debian 12's headers lack it. */
#ifndef EXT4_IOC_CHECKPOINT
#define EXT4_IOC_CHECKPOINT	_IOW('f', 43, uint32_t)
#endif

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* Is "rw" one of the comma-separated mount options? */
static int has_rw(const char *opts)
{
	size_t n = strcspn(opts, ",");

	return n == 2 && !strncmp(opts, "rw", 2);
}

int fs_ext4_mounts_parse(const char *text, char (*out)[4096], size_t max)
{
	char devs[RPM_FS_CHECKPOINT_MAX][32];
	size_t n = 0, ndev = 0;
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[8192], *f[6], *sep, *save = NULL, *fstype;
		size_t k = 0, i;

		if (len >= sizeof(buf))
			return -EBADMSG;
		memcpy(buf, line, len);
		buf[len] = 0;
		line = end ? end + 1 : NULL;
		if (!len)
			continue;
		/* id parent maj:min root mountpoint options ... - fstype source superopts */
		sep = strstr(buf, " - ");
		if (!sep)
			return -EBADMSG;
		*sep = 0;
		for (char *t = strtok_r(buf, " ", &save); t && k < 6; t = strtok_r(NULL, " ", &save))
			f[k++] = t;
		if (k < 6)
			return -EBADMSG;
		save = NULL;
		fstype = strtok_r(sep + 3, " ", &save);
		if (!fstype)
			return -EBADMSG;
		if (strcmp(fstype, "ext4") || !has_rw(f[5]))
			continue;
		for (i = 0; i < ndev && strcmp(devs[i], f[2]); i++)
			;
		if (i < ndev || n >= max || ndev >= RPM_FS_CHECKPOINT_MAX)
			continue;	/* another mount of the same file system */
		snprintf(devs[ndev++], sizeof(devs[0]), "%s", f[2]);
		unescape(f[4]);
		snprintf(out[n++], sizeof(out[0]), "%s", f[4]);
	}
	return (int)n;
}

int fs_checkpoint_ext4(const char *root, unsigned *failed)
{
	static char mounts[RPM_FS_CHECKPOINT_MAX][4096];
	char path[4096];
	char *text;
	ssize_t len;
	int n, done = 0;

	*failed = 0;
	/* A container host can have thousands of mounts. */
	text = malloc(RPM_FS_MOUNTINFO_MAX);
	if (!text)
		return -ENOMEM;
	len = procfs_read_file(root, "/proc/self/mountinfo", text, RPM_FS_MOUNTINFO_MAX);
	n = len < 0 ? (int)len : fs_ext4_mounts_parse(text, mounts, RPM_FS_CHECKPOINT_MAX);
	free(text);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		uint32_t flags = 0;
		int fd;

		if (snprintf(path, sizeof(path), "%s%s", root ? root : "", mounts[i]) >=
		    (int)sizeof(path)) {
			(*failed)++;
			continue;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, EXT4_IOC_CHECKPOINT, &flags) < 0)
			(*failed)++;
		else
			done++;
		if (fd >= 0)
			close(fd);
	}
	return done;
}
