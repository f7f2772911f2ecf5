// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The record of the blocks regionpmd offlined (offline-state.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "memblock-sysfs.h"
#include "offline-state.h"
#include "procfs-util.h"

/* A zone name as valid_zones prints it: letters and digits ("DMA32"). */
static bool zone_name_ok(const char *zone)
{
	if (!*zone)
		return false;
	for (; *zone; zone++)
		if (!isalnum((unsigned char)*zone))
			return false;
	return true;
}

int offline_state_parse(const char *text, struct offline_state *s)
{
	const char *p = text;
	int r = 0;

	s->n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[64], zone[16];
		unsigned long id;
		char tail;

		if (len && len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (sscanf(line, "%lu %15s %c", &id, zone, &tail) == 2 && id <= UINT32_MAX &&
			    zone_name_ok(zone) && s->n < RPM_OFFLINE_MAX) {
				s->v[s->n].id = (uint32_t)id;
				snprintf(s->v[s->n].zone, sizeof(s->v[s->n].zone), "%s", zone);
				s->n++;
			} else {
				r = -EBADMSG;
			}
		} else if (len) {
			r = -EBADMSG;
		}
		p += len + (nl ? 1 : 0);
	}
	return r;
}

int offline_state_load(struct offline_state *s, const char *root)
{
	static char buf[RPM_OFFLINE_MAX * 24];
	ssize_t n;

	snprintf(s->path, sizeof(s->path), "%s" RPM_OFFLINE_STATE_FILE, root ? root : "");
	s->n = 0;
	n = procfs_read_file(root, RPM_OFFLINE_STATE_FILE, buf, sizeof(buf));
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return (int)n;
	return offline_state_parse(buf, s);
}

int offline_state_save(const struct offline_state *s)
{
	char tmp[sizeof(s->path) + 8], dir[sizeof(s->path)];
	char *slash;
	FILE *f;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s", s->path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (!s->n) {
		if (unlink(s->path) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%" PRIu32 " %s\n", s->v[i].id, s->v[i].zone);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, s->path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

const char *offline_state_zone(const struct offline_state *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].id == id)
			return s->v[i].zone;
	return NULL;
}

int offline_state_add(struct offline_state *s, uint32_t id, const char *zone)
{
	if (offline_state_zone(s, id))
		return 0;
	if (s->n >= RPM_OFFLINE_MAX)
		return -ENOSPC;
	if (!zone_name_ok(zone) || strlen(zone) >= sizeof(s->v[0].zone))
		return -EINVAL;
	s->v[s->n].id = id;
	snprintf(s->v[s->n].zone, sizeof(s->v[s->n].zone), "%s", zone);
	s->n++;
	return offline_state_save(s);
}

int offline_state_remove(struct offline_state *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].id == id) {
			s->v[i] = s->v[--s->n];
			return offline_state_save(s);
		}
	return 0;
}

int offline_state_online(const char *root, const struct offline_rec *rec, const char *offered)
{
	struct memblock b;
	int r = memblock_online_into(root, rec->id, rec->zone, offered);

	if (r < 0)
		return r;
	if (memblock_read(root, rec->id, &b) == 0 && b.state == MEMBLOCK_ONLINE &&
	    strcmp(b.zones, rec->zone))
		log_warning("memory block %" PRIu32 ": online again, in zone %s instead of %s",
			    rec->id, b.zones, rec->zone);
	else
		log_info("memory block %" PRIu32 ": online again", rec->id);
	return 0;
}

int offline_state_restore(struct offline_state *s, const char *root, unsigned *n_failed)
{
	int first_err = 0, onlined = 0;
	size_t i = 0;

	*n_failed = 0;
	while (i < s->n) {
		struct offline_rec rec = s->v[i];
		struct memblock b;
		int r = memblock_read(root, rec.id, &b);

		if (r == 0 && b.state == MEMBLOCK_OFFLINE) {
			r = offline_state_online(root, &rec, b.zones);
			if (r == 0)
				onlined++;
		} else if (r == 0 || r == -ENOENT) {
			r = 0;		/* online already, or gone: nothing to give back */
		}
		if (r < 0) {
			rpm_log_errno(LOG_WARNING, r, "memory block %" PRIu32 ": onlining", rec.id);
			(*n_failed)++;
			if (!first_err)
				first_err = r;
			i++;
			continue;
		}
		s->v[i] = s->v[--s->n];
	}
	offline_state_save(s);
	return first_err ? first_err : onlined;
}
