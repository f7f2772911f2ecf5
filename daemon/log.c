// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

int rpm_log_max_level = LOG_INFO;

static void vlog(int level, int err, const char *fmt, va_list ap)
{
	char msg[1024];

	if (level > rpm_log_max_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		fprintf(stderr, "<%d>%s: %s\n", level, msg, strerror(-err));
	else
		fprintf(stderr, "<%d>%s\n", level, msg);
}

void rpm_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, 0, fmt, ap);
	va_end(ap);
}

int rpm_log_errno(int level, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, err, fmt, ap);
	va_end(ap);
	return err;
}

void rpm_log_conf(void *userdata, int level, const char *fmt, ...)
{
	va_list ap;

	(void)userdata;
	va_start(ap, fmt);
	vlog(level, 0, fmt, ap);
	va_end(ap);
}
