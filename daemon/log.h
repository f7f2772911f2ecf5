/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd logging: one line per message on stderr.  When stderr is the
 * journal ($JOURNAL_STREAM matches it, as systemd sets it for a service),
 * each line starts with a "<N>" syslog priority prefix (sd-daemon.h SD_ERR,
 * ...), which journald turns into the message priority; on a terminal or in
 * a file the lines are plain.  Quiet by default: info and above; -v adds
 * debug.
 */
#pragma once

#include <syslog.h>

extern int rpm_log_max_level;		/* LOG_INFO by default */

void rpm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs "...: strerror(-err)" and returns err (a negative errno). */
int rpm_log_errno(int level, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adapter for conf_log_fn. */
void rpm_log_conf(void *userdata, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(...)	rpm_log(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)	rpm_log(LOG_INFO, __VA_ARGS__)
#define log_notice(...)	rpm_log(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) rpm_log(LOG_WARNING, __VA_ARGS__)
#define log_error(...)	rpm_log(LOG_ERR, __VA_ARGS__)
