// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "log.h"
#include "procfs-util.h"
#include "psi-monitor.h"

struct psi_monitor {
	sd_event_source *io, *timer;
	int fd;
	char path[4096];
	const char *root;
	unsigned threshold;		/* fallback: percent * 100 */
	unsigned poll_sec;
	psi_monitor_cb cb;
	void *userdata;
};

int psi_read_avg10(const char *root, unsigned *some, unsigned *full)
{
	struct rpm_pressure p;
	int r = procfs_read_pressure(root, &p);

	if (r < 0)
		return r;
	*some = p.some.avg10;
	*full = p.has_full ? p.full.avg10 : 0;
	return 0;
}

static int on_psi_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int on_psi_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct psi_monitor *m = userdata;
	unsigned some, full;

	(void)usec;
	if (psi_read_avg10(m->root, &some, &full) == 0 && some >= m->threshold)
		m->cb(m, m->userdata);
	sd_event_source_set_time_relative(s, (uint64_t)m->poll_sec * 1000000);
	return 0;
}

static int start_fallback(struct psi_monitor *m, sd_event *e)
{
	int r;

	r = sd_event_add_time_relative(e, &m->timer, CLOCK_MONOTONIC,
				       (uint64_t)m->poll_sec * 1000000, 100000,
				       on_psi_timer, m);
	if (r < 0)
		return r;
	sd_event_source_set_description(m->timer, "psi-poll");
	return sd_event_source_set_enabled(m->timer, SD_EVENT_ON);
}

static int on_psi_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct psi_monitor *m = userdata;

	(void)fd;
	if (revents & EPOLLERR) {
		/* the trigger went away: poll from now on */
		log_warning("PSI trigger on %s failed, polling avg10 instead", m->path);
		sd_event *e = sd_event_source_get_event(s);

		m->io = sd_event_source_disable_unref(m->io);
		close(m->fd);
		m->fd = -1;
		start_fallback(m, e);
		return 0;
	}
	if (revents & EPOLLPRI)
		m->cb(m, m->userdata);
	return 0;
}

int psi_monitor_new(sd_event *e, const char *root, unsigned stall_usec,
		    unsigned window_usec, unsigned poll_sec, psi_monitor_cb cb,
		    void *userdata, struct psi_monitor **ret)
{
	struct psi_monitor *m;
	char trig[64];
	int r;

	if (!window_usec || stall_usec > window_usec)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->root = root ? root : "";
	m->cb = cb;
	m->userdata = userdata;
	m->poll_sec = poll_sec ? poll_sec : 2;
	m->threshold = (unsigned)((uint64_t)stall_usec * 10000 / window_usec);
	snprintf(m->path, sizeof(m->path), "%s/proc/pressure/memory", m->root);

	m->fd = open(m->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (m->fd < 0) {
		r = -errno;
		goto refused;
	}
	snprintf(trig, sizeof(trig), "some %u %u", stall_usec, window_usec);
	if (write(m->fd, trig, strlen(trig) + 1) < 0) {
		r = -errno;
		goto refused;
	}
	r = sd_event_add_io(e, &m->io, m->fd, EPOLLPRI, on_psi_io, m);
	if (r == -EPERM)	/* not pollable: a plain file, e.g. a fixture */
		goto refused;
	if (r < 0)
		goto fail;
	sd_event_source_set_description(m->io, "psi-trigger");
	log_debug("PSI trigger \"%s\" on %s", trig, m->path);
	*ret = m;
	return 0;

refused:
	if (r != -EINVAL && r != -EPERM && r != -EOPNOTSUPP && r != -EACCES &&
	    r != -EROFS && r != -ENOENT)
		goto fail;
	log_notice("PSI trigger refused on %s (%s), polling avg10 every %us",
		   m->path, strerror(-r), m->poll_sec);
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	r = start_fallback(m, e);
	if (r < 0)
		goto fail;
	*ret = m;
	return 0;
fail:
	psi_monitor_free(m);
	return r;
}

struct psi_monitor *psi_monitor_free(struct psi_monitor *m)
{
	if (!m)
		return NULL;
	sd_event_source_disable_unref(m->io);
	sd_event_source_disable_unref(m->timer);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
	return NULL;
}

bool psi_monitor_uses_trigger(const struct psi_monitor *m)
{
	return m->io != NULL;
}
