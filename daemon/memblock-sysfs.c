// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Memory blocks through sysfs (memblock-sysfs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memblock-sysfs.h"
#include "procfs-util.h"

enum memblock_state memblock_parse_state(const char *s)
{
	size_t n = strcspn(s, "\n");

	if (n == 6 && !strncmp(s, "online", 6))
		return MEMBLOCK_ONLINE;
	if (n == 7 && !strncmp(s, "offline", 7))
		return MEMBLOCK_OFFLINE;
	if (n == 13 && !strncmp(s, "going-offline", 13))
		return MEMBLOCK_GOING_OFFLINE;
	return MEMBLOCK_UNKNOWN;
}

const char *memblock_state_name(enum memblock_state s)
{
	switch (s) {
	case MEMBLOCK_ONLINE: return "online";
	case MEMBLOCK_OFFLINE: return "offline";
	case MEMBLOCK_GOING_OFFLINE: return "going-offline";
	default: return "unknown";
	}
}

int memblock_block_size(const char *root, uint64_t *bytes)
{
	char buf[64], *end;
	ssize_t n = procfs_read_file(root, RPM_SYS_MEMORY "/block_size_bytes", buf, sizeof(buf));
	uint64_t v;

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtoull(buf, &end, 16);
	if (errno || end == buf || (*end && *end != '\n') || !v || v % 4096)
		return -EBADMSG;
	*bytes = v;
	return 0;
}

int memblock_read(const char *root, uint32_t id, struct memblock *b)
{
	char rel[128], buf[128], path[PATH_MAX];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	memset(b, 0, sizeof(*b));
	b->id = id;
	snprintf(rel, sizeof(rel), RPM_SYS_MEMORY "/memory%" PRIu32 "/state", id);
	n = procfs_read_file(root, rel, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	b->state = memblock_parse_state(buf);
	snprintf(rel, sizeof(rel), RPM_SYS_MEMORY "/memory%" PRIu32 "/valid_zones", id);
	n = procfs_read_file(root, rel, buf, sizeof(buf));
	if (n >= 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(b->zones, sizeof(b->zones), "%.31s", buf);
	}
	/* the node is a link nodeN in the block's directory */
	snprintf(path, sizeof(path), "%s" RPM_SYS_MEMORY "/memory%" PRIu32, root ? root : "", id);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			unsigned node;
			char tail;

			if (sscanf(de->d_name, "node%u%c", &node, &tail) == 1) {
				b->node = node;
				break;
			}
		}
		closedir(d);
	}
	return 0;
}

static int cmp_block(const void *a, const void *b)
{
	uint32_t x = ((const struct memblock *)a)->id, y = ((const struct memblock *)b)->id;

	return x < y ? -1 : x > y;
}

int memblock_list(const char *root, struct memblock **ret, size_t *ret_n)
{
	char path[PATH_MAX];
	struct memblock *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "%s" RPM_SYS_MEMORY, root ? root : "");
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long id;
		char *end;

		if (strncmp(de->d_name, "memory", 6) || !de->d_name[6])
			continue;
		errno = 0;
		id = strtoul(de->d_name + 6, &end, 10);
		if (errno || *end || id > UINT32_MAX)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct memblock *nv = realloc(v, c * sizeof(*nv));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
			cap = c;
		}
		if (memblock_read(root, (uint32_t)id, &v[n]) == 0)
			n++;
	}
	closedir(d);
	if (r < 0) {
		free(v);
		return r;
	}
	qsort(v, n, sizeof(*v), cmp_block);
	*ret = v;
	*ret_n = n;
	return 0;
}

int memblock_write_state(const char *root, uint32_t id, const char *state)
{
	char path[PATH_MAX];
	size_t len = strlen(state);
	ssize_t w;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s" RPM_SYS_MEMORY "/memory%" PRIu32 "/state",
		 root ? root : "", id);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);	/* as "echo >" does */
	if (fd < 0)
		return -errno;
	w = write(fd, state, len);
	if (w < 0)
		r = -errno;
	else if ((size_t)w != len)
		r = -EIO;
	close(fd);
	return r;
}

bool memblock_zones_have(const char *zones, const char *zone)
{
	size_t zl = strlen(zone);

	for (const char *p = zones; (p = strstr(p, zone)); p += zl)
		if ((p == zones || p[-1] == ' ') && (p[zl] == '\0' || p[zl] == ' ' || p[zl] == '\n'))
			return true;
	return false;
}

/* An online block's zone, or NULL when it spans zones ("none") or is not online. */
static const char *single_zone(const struct memblock *b)
{
	if (b->state != MEMBLOCK_ONLINE || !b->zones[0] || strchr(b->zones, ' ') ||
	    !strcmp(b->zones, "none"))
		return NULL;
	return b->zones;
}

bool memblock_returns_to_zone(const struct memblock *v, size_t n, size_t i)
{
	const char *zone = single_zone(&v[i]);
	bool below = false, above = false;

	if (!zone)
		return false;
	if (!strcmp(zone, "Normal") || !strcmp(zone, "Movable"))
		return true;
	for (size_t k = 0; k < n && !(below && above); k++) {
		const char *z = single_zone(&v[k]);

		if (k == i || v[k].node != v[i].node || !z || strcmp(z, zone))
			continue;
		if (v[k].id < v[i].id)
			below = true;
		else
			above = true;
	}
	return below && above;
}

int memblock_online_into(const char *root, uint32_t id, const char *zone, const char *offered)
{
	int r = -EINVAL;

	if (!strcmp(zone, "Movable") && memblock_zones_have(offered, "Movable"))
		r = memblock_write_state(root, id, "online_movable");
	else if (strcmp(zone, "Movable"))
		r = memblock_write_state(root, id, "online_kernel");
	if (r < 0)
		r = memblock_write_state(root, id, "online");
	return r;
}
