// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int rpm_log_max_level = LOG_INFO;

/*
 * Is stderr connected to the journal?  systemd sets $JOURNAL_STREAM to the
 * "device:inode" of the stream it connected stderr to; a match means the
 * "<N>" prefix reaches journald, which turns it into the priority.  On a
 * terminal, or redirected to a file, messages are plain (as systemd's own
 * tools do it).  Decided once.
 */
static bool stderr_is_journal(void)
{
	static int cached = -1;
	const char *e;
	unsigned long long dev, ino;
	struct stat st;

	if (cached >= 0)
		return cached;
	cached = 0;
	e = getenv("JOURNAL_STREAM");
	if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	    (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino)
		cached = 1;
	return cached;
}

static void vlog(int level, int err, const char *fmt, va_list ap)
{
	char msg[1024], prefix[8] = "";

	if (level > rpm_log_max_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (stderr_is_journal())
		snprintf(prefix, sizeof(prefix), "<%d>", level);
	if (err)
		fprintf(stderr, "%s%s: %s\n", prefix, msg, strerror(-err));
	else
		fprintf(stderr, "%s%s\n", prefix, msg);
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
