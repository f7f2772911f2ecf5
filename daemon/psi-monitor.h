/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory pressure signal: a PSI trigger on <root>/proc/pressure/memory
 * ("some STALL WINDOW", woken by POLLPRI from an sd-event io source).  If
 * the kernel refuses the trigger (EINVAL, EPERM, EOPNOTSUPP: no PSI, no
 * privilege, an old kernel), falls back to reading "some avg10" every
 * poll period and reporting when it is at least STALL/WINDOW.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

struct psi_monitor;

/* @triggered: a trigger fired, or (fallback) avg10 crossed the threshold. */
typedef void (*psi_monitor_cb)(struct psi_monitor *m, void *userdata);

int psi_monitor_new(sd_event *e, const char *root, unsigned stall_usec,
		    unsigned window_usec, unsigned poll_sec, psi_monitor_cb cb,
		    void *userdata, struct psi_monitor **ret);
struct psi_monitor *psi_monitor_free(struct psi_monitor *m);
bool psi_monitor_uses_trigger(const struct psi_monitor *m);

/*
 * Reads avg10 of the "some" and "full" lines of <root>/proc/pressure/memory
 * as percent * 100 (e.g. "avg10=1.25" -> 125).  Missing "full" gives 0.
 */
int psi_read_avg10(const char *root, unsigned *some, unsigned *full);
