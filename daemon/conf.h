/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd.conf: [Section] Key=Value files with the syntax of
 * systemd.syntax(7).  /etc/regionpmd.conf, then the drop-ins *.conf of
 * /etc, /run, /usr/local/lib and /usr/lib regionpmd.conf.d/ in lexical order
 * of their names (later files override; a file masks one of the same name
 * in a later directory).  Every key has a default and a validator; a bad
 * value is reported as "file:line: ..." and that key keeps its previous
 * value.  conf_set() is the same validator for runtime overrides (D-Bus
 * SetPolicy), so the two can never disagree.  No sd-event, no sd-bus.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define RPM_CONF_PATH	"/etc/regionpmd.conf"
#define RPM_MAX_PROTECTED 32
#define RPM_IDLE_MAX_REGIONS 8	/* [Idle] MaxRegions= at most */

/* [Daemon] Backend=: how regionpmd reaches the kernel (backend.h). */
enum rpm_backend_choice {
	RPM_BACKEND_AUTO = 0,	/* netlink if the regionpm family is there, else stock */
	RPM_BACKEND_NETLINK,
	RPM_BACKEND_STOCK,
};

const char *conf_backend_name(unsigned choice);	/* "auto", "netlink", "stock" */

struct rpm_config {
	struct rpm_policy_config policy;	/* [Policy] */
	unsigned interval_sec;			/* [Daemon] IntervalSec= decision pass period */
	unsigned idle_interval_sec;		/* [Daemon] IdleIntervalSec= longest sleep once converged */
	unsigned psi_stall_usec;		/* [Pressure] trigger: stall per window */
	unsigned psi_window_usec;
	unsigned idle_sample_sec;		/* [Idle] mark -> count delay */
	unsigned idle_max_regions;		/* regions sampled per pass */
	char *protected_cgroups[RPM_MAX_PROTECTED]; /* [Protect] Cgroup= (repeatable) */
	size_t n_protected;
	char *metrics_file;			/* [Daemon] MetricsFile=, NULL: none */
	unsigned backend;			/* [Daemon] Backend=, enum rpm_backend_choice;
						 * read at start only */
};

/* Diagnostics go through this (level is a syslog priority). */
typedef void (*conf_log_fn)(void *userdata, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void conf_defaults(struct rpm_config *c);
void conf_free(struct rpm_config *c);

/* /etc, /run, /usr/local/lib, /usr/lib regionpmd.conf.d, NULL-terminated. */
extern const char *const conf_default_dropin_dirs[];

/*
 * Load main_path (missing is fine) and then the drop-ins of dropin_dirs
 * (NULL-terminated, first masks later by file name).  Returns 0,
 * or -errno for a file that exists but cannot be read.  Invalid lines and
 * values are logged with file:line and skipped; *n_warnings counts them.
 * Parsing starts from the defaults, so a reload forgets removed keys; *c
 * is replaced only on success (a failed reload keeps the running config).
 * *c must be initialised (conf_defaults() or an earlier conf_load()).
 * Logical lines are limited to 64 KiB; longer ones are warned about.
 */
int conf_load(struct rpm_config *c, const char *main_path,
	      const char *const *dropin_dirs, conf_log_fn log, void *userdata,
	      unsigned *n_warnings);

/* A systemd.time(7) time span ("30s", "5min", "1h 30min"; a bare number
 * in @bare_unit microseconds) in microseconds.  -EINVAL, -ERANGE. */
int conf_parse_timespan(const char *v, uint64_t bare_unit, uint64_t *out);

/*
 * Set one key ("Section.Key" or bare "Key" when unambiguous) from a string.
 * Returns 0, -ENOENT for an unknown key, -EINVAL/-ERANGE for a bad value,
 * with a human message in err.
 */
int conf_set(struct rpm_config *c, const char *key, const char *value,
	     char *err, size_t errlen);

/* Current value of a key as a string (for D-Bus properties and status). */
int conf_get(const struct rpm_config *c, const char *key, char *buf, size_t len);

/* Iterate the known keys ("Section.Key"), NULL after the last. */
const char *conf_key_name(size_t i);
