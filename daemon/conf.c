// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd.conf parsing, with the syntax of systemd.syntax(7).
 *
 * One table describes every key: its section, name, type, range and where
 * it lives in struct rpm_config.  The file parser, conf_set() and conf_get()
 * all go through that table, so a key cannot be valid in one and not in the
 * other.
 *
 * The parser is our own, small and whole: inih (used before) differs from
 * systemd in too many places to be used as is -- it takes indented lines
 * as continuations, "Key:Value" as an assignment and "; ..." as an inline
 * comment, has no backslash continuation, limits lines to 200 characters
 * and gives the handler no line numbers -- so it had grown a line filter in
 * front of it that re-implemented half the grammar.  Here: blanks around a
 * line and around "=" are stripped, lines starting with '#' or ';' are
 * comments (only at the start of a line), a line ending in a backslash
 * continues on the next one (the backslash becomes a blank; comment lines
 * inside a continuation are skipped), "[Section]" opens a section, and
 * everything else must be "Key=Value".  Time values take systemd's units
 * ("30s", "5min", "1h 30min", "500ms").
 */
#include <dirent.h>
#include <errno.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "conf.h"

enum key_type {
	KEY_UINT,	/* unsigned, [min, max] */
	KEY_U64,	/* uint64_t, [min, max] */
	KEY_PERCENT,	/* "12.34" or "12.34%" stored as 1234 in an unsigned */
	KEY_BOOL,
	KEY_DOUBLE,	/* finite, [min, max] */
	KEY_CGROUP,	/* repeatable list of cgroup v2 paths */
	KEY_SEC,	/* time span in an unsigned, whole seconds; bare number: seconds */
	KEY_USEC,	/* time span in an unsigned, microseconds; bare number: us */
	KEY_PROM_PATH,	/* absolute path of a *.prom file in a char *; empty: none */
	KEY_BACKEND,	/* auto | netlink | stock, in an unsigned */
	KEY_HEADROOM,	/* "auto" (RPM_HEADROOM_AUTO) or a number in [min, max], in an unsigned */
};

struct key {
	const char *full;	/* "Section.Name", for conf_key_name() */
	const char *section;
	const char *name;
	enum key_type type;
	size_t off;
	uint64_t min, max;	/* for KEY_DOUBLE too, in whole units */
};

#define K(section, name) section "." name, section, name
#define OFF(field) offsetof(struct rpm_config, field)
#define POL(field) (OFF(policy) + offsetof(struct rpm_policy_config, field))

/*
 * Defaults are in conf_defaults() and policy.h (RPM_DEF_*); the ranges here
 * say why a value is refused.
 */
static const struct key keys[] = {
	/* Decision pass period: 1 s to an hour. */
	{ K("Daemon", "IntervalSec"), KEY_SEC, OFF(interval_sec), 1, 3600 },
	/* Once the plan is reached passes space out up to this; events wake it. */
	{ K("Daemon", "IdleIntervalSec"), KEY_SEC, OFF(idle_interval_sec), 1, 86400 },
	/* Prometheus text file for node_exporter's textfile collector. */
	{ K("Daemon", "MetricsFile"), KEY_PROM_PATH, OFF(metrics_file), 0, 0 },
	/* The kernel interface; a change takes effect at the next start. */
	{ K("Daemon", "Backend"), KEY_BACKEND, OFF(backend), 0, 0 },

	/* PSI limits as percent (0.00 to 100.00; 100 means never). */
	{ K("Pressure", "SomeAvg10MaxPercent"), KEY_PERCENT, POL(psi_some_avg10_max), 0, 10000 },
	{ K("Pressure", "FullAvg10MaxPercent"), KEY_PERCENT, POL(psi_full_avg10_max), 0, 10000 },
	/* The kernel's PSI trigger limits: window 500 ms to 10 s, stall <= window. */
	{ K("Pressure", "StallUSec"), KEY_USEC, OFF(psi_stall_usec), 1, 10000000 },
	{ K("Pressure", "WindowUSec"), KEY_USEC, OFF(psi_window_usec), 500000, 10000000 },

	/* auto: a share that shrinks with the machine; more than 90 % would leave nothing to park. */
	{ K("Policy", "HeadroomPercent"), KEY_HEADROOM, POL(headroom_percent), 0, 90 },
	/* Park above headroom + this; a gap of half the memory would never park. */
	{ K("Policy", "HysteresisPercent"), KEY_UINT, POL(hysteresis_percent), 0, 50 },
	/* 0 turns the reclaim signal off (PSI and the headroom still unpark). */
	{ K("Policy", "ReclaimUnparkPagesPerSec"), KEY_U64, POL(reclaim_unpark_pages_per_sec), 0, 1ULL << 32 },
	{ K("Policy", "CacheHistorySec"), KEY_SEC, POL(cache_history_sec), 0, 86400 },
	{ K("Policy", "BudgetPagesPerSec"), KEY_U64, POL(budget_pages_per_sec), 1, 1ULL << 32 },
	/* The kernel refuses a budget above a region; the policy clamps. */
	{ K("Policy", "BudgetPagesPerRegion"), KEY_U64, POL(budget_pages_per_region), 1, 1ULL << 32 },
	{ K("Policy", "MaxPagesToVacate"), KEY_U64, POL(max_pages_to_vacate), 0, 1ULL << 40 },
	{ K("Policy", "MinIdleAgeSec"), KEY_SEC, POL(min_idle_age_sec), 1, 86400 },
	{ K("Policy", "PingPongWindowSec"), KEY_SEC, POL(pingpong_window_sec), 0, 86400 },
	{ K("Policy", "PingPongBackoffSec"), KEY_SEC, POL(pingpong_backoff_sec), 1, 86400 },
	{ K("Policy", "PressureBackoffSec"), KEY_SEC, POL(pressure_backoff_sec), 0, 3600 },
	{ K("Policy", "Park"), KEY_BOOL, POL(park), 0, 1 },
	{ K("Policy", "Bias"), KEY_BOOL, POL(bias), 0, 1 },
	{ K("Policy", "DropCache"), KEY_BOOL, POL(drop_cache), 0, 1 },
	{ K("Policy", "CheckpointJournals"), KEY_BOOL, POL(checkpoint_journals), 0, 1 },
	{ K("Policy", "PaybackSec"), KEY_SEC, POL(payback_sec), 1, 10U * 365 * 86400 },

	/* Model constants: non-negative, finite, at most a million. */
	{ K("Power", "MigrateCostMicrojoulePerPage"), KEY_DOUBLE, POL(migrate_cost_uj_per_page), 0, 1000000 },
	{ K("Power", "RegionSavingMilliwatt"), KEY_DOUBLE, POL(region_saving_mw), 0, 1000000 },

	/* Page idle tracking needs a few seconds to tell hot from idle. */
	{ K("Idle", "SampleSec"), KEY_SEC, OFF(idle_sample_sec), 1, 600 },
	/* The manager runs at most RPM_IDLE_MAX_REGIONS samples at once. */
	{ K("Idle", "MaxRegions"), KEY_UINT, OFF(idle_max_regions), 1, RPM_IDLE_MAX_REGIONS },

	{ K("Protect", "Cgroup"), KEY_CGROUP, 0, 0, 0 },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const backend_names[] = {
	[RPM_BACKEND_AUTO] = "auto",
	[RPM_BACKEND_NETLINK] = "netlink",
	[RPM_BACKEND_STOCK] = "stock",
};

const char *conf_backend_name(unsigned choice)
{
	return choice < sizeof(backend_names) / sizeof(backend_names[0]) ?
		backend_names[choice] : "?";
}

void conf_defaults(struct rpm_config *c)
{
	memset(c, 0, sizeof(*c));
	policy_config_defaults(&c->policy);
	c->interval_sec = 5;		/* reacts within seconds, idle otherwise */
	c->idle_interval_sec = 60;	/* converged: about one pass a minute */
	c->psi_stall_usec = 100000;	/* 100 ms of stall per 1 s window = 10 % */
	c->psi_window_usec = 1000000;
	/*
	 * Mark, wait 2 minutes, count: idle cache is what nobody read for as
	 * long as DAMON_RECLAIM's default min_age.  After 5 s, a file server's
	 * hot files sampled in a pause of their reader counted as idle, were
	 * dropped, and were read back from disk (fileserver at 8 GiB: 18.7 %
	 * of the hot set).
	 */
	c->idle_sample_sec = 120;
	c->idle_max_regions = 4;	/* bounds the page_idle bitmap work per pass */
	c->n_protected = 0;		/* nothing protected */
}

void conf_free(struct rpm_config *c)
{
	free(c->metrics_file);
	c->metrics_file = NULL;
	for (size_t i = 0; i < c->n_protected; i++) {
		free(c->protected_cgroups[i]);
		c->protected_cgroups[i] = NULL;
	}
	c->n_protected = 0;
}

const char *conf_key_name(size_t i)
{
	return i < N_KEYS ? keys[i].full : NULL;
}

/* ---- value parsers ---------------------------------------------------- */

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", "y", "t" };
	static const char *const no[] = { "no", "false", "off", "0", "n", "f" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal digits only (no sign, no blanks, no 0x): /proc-like strictness. */
static int parse_u64_str(const char *v, uint64_t *out)
{
	uint64_t x = 0;

	if (!*v)
		return -EINVAL;
	for (; *v; v++) {
		unsigned d;

		if (*v < '0' || *v > '9')
			return -EINVAL;
		d = (unsigned)(*v - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

/* "12", "12.5", "12.34", optionally followed by '%'; result * 100. */
static int parse_percent(const char *v, uint64_t *out)
{
	char whole[32];
	const char *dot = strchr(v, '.');
	size_t len = strlen(v), wlen;
	uint64_t w, frac = 0;
	int r;

	if (len && v[len - 1] == '%')
		len--;
	wlen = dot ? (size_t)(dot - v) : len;
	if (!wlen || wlen >= sizeof(whole) || (dot && dot >= v + len))
		return -EINVAL;
	memcpy(whole, v, wlen);
	whole[wlen] = '\0';
	r = parse_u64_str(whole, &w);
	if (r < 0)
		return r;
	if (dot) {
		size_t nd = len - wlen - 1;

		if (nd < 1 || nd > 2)
			return -EINVAL;	/* at most two decimals, as the kernel prints */
		for (size_t i = 0; i < nd; i++) {
			if (dot[1 + i] < '0' || dot[1 + i] > '9')
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(dot[1 + i] - '0');
		}
		if (nd == 1)
			frac *= 10;
	}
	if (w > UINT64_MAX / 100 - 1)
		return -ERANGE;
	*out = w * 100 + frac;
	return 0;
}

static int parse_double(const char *v, double *out)
{
	char *end;
	double d;

	/* strtod takes "nan", "inf", hex and leading blanks: refuse those. */
	if (!*v || !((*v >= '0' && *v <= '9') || *v == '.'))
		return -EINVAL;
	if (strpbrk(v, "xXnN"))
		return -EINVAL;
	errno = 0;
	d = strtod(v, &end);
	if (*end || end == v)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(d))
		return -ERANGE;
	*out = d;
	return 0;
}

static const struct {
	const char *name;
	uint64_t usec;
} time_units[] = {
	{ "us", 1 }, { "usec", 1 },
	{ "ms", 1000 }, { "msec", 1000 },
	{ "s", 1000000 }, { "sec", 1000000 }, { "second", 1000000 }, { "seconds", 1000000 },
	{ "m", 60000000 }, { "min", 60000000 }, { "minute", 60000000 }, { "minutes", 60000000 },
	{ "h", 3600000000ULL }, { "hr", 3600000000ULL }, { "hour", 3600000000ULL },
	{ "hours", 3600000000ULL },
	{ "d", 86400000000ULL }, { "day", 86400000000ULL }, { "days", 86400000000ULL },
	{ "w", 604800000000ULL }, { "week", 604800000000ULL }, { "weeks", 604800000000ULL },
};

/*
 * A time span as systemd.time(7) writes it: one or more "<number><unit>"
 * components, blanks allowed between them ("1h 30min", "2min30s"), the
 * number with up to six decimals ("1.5s"); a bare number, alone, is in
 * @bare_unit microseconds.  Result in microseconds.
 */
int conf_parse_timespan(const char *v, uint64_t bare_unit, uint64_t *out)
{
	uint64_t total = 0;
	bool first = true;

	while (*v == ' ' || *v == '\t')
		v++;
	if (!*v)
		return -EINVAL;
	while (*v) {
		uint64_t whole = 0, frac = 0, div = 1, unit = 0, part;
		const char *u;
		size_t ulen;

		if (*v < '0' || *v > '9')
			return -EINVAL;
		for (; *v >= '0' && *v <= '9'; v++) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			whole = whole * 10 + (uint64_t)(*v - '0');
		}
		if (*v == '.') {
			v++;
			if (*v < '0' || *v > '9')
				return -EINVAL;
			for (; *v >= '0' && *v <= '9'; v++) {
				if (div >= 1000000)
					return -EINVAL;	/* finer than a microsecond */
				frac = frac * 10 + (uint64_t)(*v - '0');
				div *= 10;
			}
		}
		while (*v == ' ' || *v == '\t')
			v++;
		for (u = v; (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z'); v++)
			;
		ulen = (size_t)(v - u);
		if (!ulen) {
			/* a bare number only as the whole value */
			if (!first || *v)
				return -EINVAL;
			unit = bare_unit;
		} else {
			for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
				if (strlen(time_units[i].name) == ulen &&
				    !strncmp(time_units[i].name, u, ulen))
					unit = time_units[i].usec;
			if (!unit)
				return -EINVAL;
		}
		if (whole > UINT64_MAX / unit)
			return -ERANGE;
		part = whole * unit;
		if (frac) {
			if (unit % div && (frac * unit) % div)
				return -EINVAL;	/* finer than a microsecond */
			part += frac * unit / div;
		}
		if (total > UINT64_MAX - part)
			return -ERANGE;
		total += part;
		first = false;
		while (*v == ' ' || *v == '\t')
			v++;
	}
	*out = total;
	return 0;
}

/*
 * A cgroup v2 path as systemd writes it: absolute, no empty, "." or ".."
 * components, no trailing slash except for the root itself.
 */
static int check_cgroup_path(const char *v)
{
	const char *s = v;

	if (v[0] != '/')
		return -EINVAL;
	if (strlen(v) >= PATH_MAX)
		return -ERANGE;
	if (!strcmp(v, "/"))
		return 0;
	while (*s == '/') {
		const char *e = strchr(s + 1, '/');
		size_t n = e ? (size_t)(e - s - 1) : strlen(s + 1);

		if (!n || (n == 1 && s[1] == '.') ||
		    (n == 2 && s[1] == '.' && s[2] == '.'))
			return -EINVAL;
		for (size_t i = 1; i <= n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return -EINVAL;
		if (!e)
			break;
		s = e;
	}
	return 0;
}

static int add_cgroup(struct rpm_config *c, const char *v, char *err,
		      size_t errlen)
{
	char *dup;
	int r;

	/* An empty value resets the list, as in systemd unit files. */
	if (!*v) {
		conf_free(c);
		return 0;
	}
	r = check_cgroup_path(v);
	if (r < 0) {
		snprintf(err, errlen, "invalid cgroup path \"%s\" (want an absolute cgroup v2 path)", v);
		return r;
	}
	for (size_t i = 0; i < c->n_protected; i++)
		if (!strcmp(c->protected_cgroups[i], v))
			return 0;	/* already there */
	if (c->n_protected >= RPM_MAX_PROTECTED) {
		snprintf(err, errlen, "too many protected cgroups (at most %d)", RPM_MAX_PROTECTED);
		return -ERANGE;
	}
	dup = strdup(v);
	if (!dup) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->protected_cgroups[c->n_protected++] = dup;
	return 0;
}

/* An absolute file name ending in ".prom" (the textfile collector reads
 * nothing else), without "." or ".." components; "" clears it. */
static int set_prom_path(char **field, const char *v, const char *name, char *err,
			 size_t errlen)
{
	size_t n = strlen(v);
	char *dup;

	if (!n) {
		free(*field);
		*field = NULL;
		return 0;
	}
	if (v[0] != '/' || n < 7 || strcmp(v + n - 5, ".prom") || v[n - 6] == '/' ||
	    strstr(v, "/./") || strstr(v, "/../") || strstr(v, "//")) {
		snprintf(err, errlen, "invalid %s=%s (want an absolute path of a *.prom file, "
			 "which node_exporter's textfile collector reads)", name, v);
		return -EINVAL;
	}
	if (n >= PATH_MAX - 16) {
		snprintf(err, errlen, "%s= is too long", name);
		return -ERANGE;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			snprintf(err, errlen, "invalid %s= (control character)", name);
			return -EINVAL;
		}
	dup = strdup(v);
	if (!dup) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	free(*field);
	*field = dup;
	return 0;
}

/* Validate value for key k and store it in c; c is untouched on error. */
static int apply(struct rpm_config *c, const struct key *k, const char *value,
		 char *err, size_t errlen)
{
	void *field = (char *)c + k->off;
	uint64_t u;
	double d;
	bool b;
	int r;

	switch (k->type) {
	case KEY_BOOL:
		r = parse_bool(value, &b);
		if (r < 0) {
			snprintf(err, errlen, "invalid boolean \"%s\" for %s= (want yes/no, true/false, on/off, 1/0)",
				 value, k->name);
			return r;
		}
		*(bool *)field = b;
		return 0;
	case KEY_HEADROOM:
		if (!strcmp(value, "auto")) {
			*(unsigned *)field = RPM_HEADROOM_AUTO;
			return 0;
		}
		/* otherwise a number, checked as a KEY_UINT */
		/* fall through */
	case KEY_UINT:
	case KEY_U64:
	case KEY_PERCENT:
		r = k->type == KEY_PERCENT ? parse_percent(value, &u) :
					     parse_u64_str(value, &u);
		if (r == -EINVAL) {
			snprintf(err, errlen, "invalid %s \"%s\" for %s=%s",
				 k->type == KEY_PERCENT ? "percentage" : "number",
				 value, k->name,
				 k->type == KEY_HEADROOM ? " (want auto or a number)" : "");
			return r;
		}
		if (r < 0 || u < k->min || u > k->max) {
			if (k->type == KEY_PERCENT)
				snprintf(err, errlen, "%s=%s out of range [%llu.%02llu, %llu.%02llu]",
					 k->name, value,
					 (unsigned long long)k->min / 100, (unsigned long long)k->min % 100,
					 (unsigned long long)k->max / 100, (unsigned long long)k->max % 100);
			else
				snprintf(err, errlen, "%s=%s out of range [%llu, %llu]%s",
					 k->name, value, (unsigned long long)k->min,
					 (unsigned long long)k->max,
					 k->type == KEY_HEADROOM ? " (or auto)" : "");
			return -ERANGE;
		}
		if (k->type == KEY_U64)
			*(uint64_t *)field = u;
		else
			*(unsigned *)field = (unsigned)u;
		return 0;
	case KEY_DOUBLE:
		r = parse_double(value, &d);
		if (r == -EINVAL) {
			snprintf(err, errlen, "invalid number \"%s\" for %s=", value, k->name);
			return r;
		}
		if (r < 0 || d < (double)k->min || d > (double)k->max) {
			snprintf(err, errlen, "%s=%s out of range [%llu, %llu]", k->name,
				 value, (unsigned long long)k->min,
				 (unsigned long long)k->max);
			return -ERANGE;
		}
		*(double *)field = d;
		return 0;
	case KEY_SEC:
	case KEY_USEC:
		r = conf_parse_timespan(value, k->type == KEY_SEC ? 1000000 : 1, &u);
		if (r == -EINVAL) {
			snprintf(err, errlen, "invalid time span \"%s\" for %s= (want e.g. %s)",
				 value, k->name, k->type == KEY_SEC ? "30, 30s, 5min or 1h 30min" :
				 "100000, 100ms or 1s");
			return r;
		}
		if (r == 0 && k->type == KEY_SEC) {
			if (u % 1000000) {
				snprintf(err, errlen, "%s=%s is not a whole number of seconds",
					 k->name, value);
				return -EINVAL;
			}
			u /= 1000000;
		}
		if (r < 0 || u < k->min || u > k->max) {
			snprintf(err, errlen, "%s=%s out of range [%llu, %llu]%s", k->name, value,
				 (unsigned long long)k->min, (unsigned long long)k->max,
				 k->type == KEY_SEC ? " seconds" : " microseconds");
			return -ERANGE;
		}
		*(unsigned *)field = (unsigned)u;
		return 0;
	case KEY_CGROUP:
		return add_cgroup(c, value, err, errlen);
	case KEY_PROM_PATH:
		return set_prom_path((char **)field, value, k->name, err, errlen);
	case KEY_BACKEND:
		for (unsigned i = 0; i < sizeof(backend_names) / sizeof(backend_names[0]); i++)
			if (!strcmp(value, backend_names[i])) {
				*(unsigned *)field = i;
				return 0;
			}
		snprintf(err, errlen, "invalid %s=%s (want auto, netlink or stock)", k->name,
			 value);
		return -EINVAL;
	}
	return -EINVAL;
}

/* StallUSec= must fit in WindowUSec=, whatever order they were set in. */
static int check_stall_window(const struct rpm_config *c, char *err,
			      size_t errlen)
{
	if (c->psi_stall_usec <= c->psi_window_usec)
		return 0;
	snprintf(err, errlen, "StallUSec=%u exceeds WindowUSec=%u",
		 c->psi_stall_usec, c->psi_window_usec);
	return -ERANGE;
}

/* ---- lookup ----------------------------------------------------------- */

static const struct key *find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* "Section.Key", or a bare "Key" when only one section has it. */
static const struct key *lookup(const char *key)
{
	const char *dot = strchr(key, '.');
	const struct key *found = NULL;

	if (dot) {
		char section[32];
		size_t n = (size_t)(dot - key);

		if (n >= sizeof(section))
			return NULL;
		memcpy(section, key, n);
		section[n] = '\0';
		return find_key(section, dot + 1);
	}
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(keys[i].name, key))
			continue;
		if (found)
			return NULL;	/* ambiguous */
		found = &keys[i];
	}
	return found;
}

int conf_set(struct rpm_config *c, const char *key, const char *value,
	     char *err, size_t errlen)
{
	char dummy[1];
	const struct key *k;
	struct rpm_config tmp;
	int r;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!c || !key || !value) {
		snprintf(err, errlen, "missing key or value");
		return -EINVAL;
	}
	k = lookup(key);
	if (!k) {
		snprintf(err, errlen, "unknown key %s", key);
		return -ENOENT;
	}
	if (k->type == KEY_CGROUP || k->type == KEY_PROM_PATH)
		return apply(c, k, value, err, errlen);

	/* Scalars: validate on a copy so that a cross-check can refuse it. */
	tmp = *c;
	r = apply(&tmp, k, value, err, errlen);
	if (r < 0)
		return r;
	r = check_stall_window(&tmp, err, errlen);
	if (r < 0)
		return r;
	*c = tmp;	/* scalars only changed: the cgroup pointers are the same */
	return 0;
}

int conf_get(const struct rpm_config *c, const char *key, char *buf, size_t len)
{
	const struct key *k = key ? lookup(key) : NULL;
	const void *field;
	int n = 0;

	if (!k)
		return -ENOENT;
	if (!buf || !len)
		return -EINVAL;
	field = (const char *)c + k->off;
	switch (k->type) {
	case KEY_BOOL:
		n = snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
		break;
	case KEY_UINT:
	case KEY_SEC:
	case KEY_USEC:
		n = snprintf(buf, len, "%u", *(const unsigned *)field);
		break;
	case KEY_U64:
		n = snprintf(buf, len, "%llu",
			     (unsigned long long)*(const uint64_t *)field);
		break;
	case KEY_PERCENT: {
		unsigned v = *(const unsigned *)field;

		n = snprintf(buf, len, "%u.%02u", v / 100, v % 100);
		break;
	}
	case KEY_DOUBLE:
		n = snprintf(buf, len, "%g", *(const double *)field);
		break;
	case KEY_BACKEND:
		n = snprintf(buf, len, "%s", conf_backend_name(*(const unsigned *)field));
		break;
	case KEY_HEADROOM: {
		unsigned v = *(const unsigned *)field;

		n = v == RPM_HEADROOM_AUTO ? snprintf(buf, len, "auto") :
					     snprintf(buf, len, "%u", v);
		break;
	}
	case KEY_PROM_PATH: {
		const char *v = *(char *const *)field;

		n = snprintf(buf, len, "%s", v ? v : "");
		break;
	}
	case KEY_CGROUP: {
		size_t off = 0;

		buf[0] = '\0';
		for (size_t i = 0; i < c->n_protected; i++) {
			n = snprintf(buf + off, len - off, "%s%s", i ? " " : "",
				     c->protected_cgroups[i]);
			if (n < 0 || (size_t)n >= len - off)
				return -ENOBUFS;
			off += (size_t)n;
		}
		return 0;
	}
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOBUFS;
	return 0;
}

/* ---- files ------------------------------------------------------------ */

/* A logical line (continuations joined) longer than this is refused. */
#define LINE_MAX_BYTES (64 * 1024)

struct load_ctx {
	struct rpm_config *c;
	const char *file;
	unsigned line;		/* where the logical line started */
	conf_log_fn log;
	void *userdata;
	unsigned warnings;
	char section[64];	/* "" before the first valid [Section] */
};

#define conf_warn(ctx, fmt, ...) do {					\
	(ctx)->warnings++;						\
	if ((ctx)->log)							\
		(ctx)->log((ctx)->userdata, LOG_WARNING, "%s:%u: " fmt,	\
			   (ctx)->file, (ctx)->line, ##__VA_ARGS__);	\
} while (0)

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Blanks off both ends, in place. */
static char *strip(char *s)
{
	size_t n;

	while (is_blank(*s))
		s++;
	n = strlen(s);
	while (n && is_blank(s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* One logical line, stripped, not a comment, not empty. */
static void parse_line(struct load_ctx *ctx, char *s)
{
	const struct key *k;
	char err[512], *eq, *key, *value;

	if (*s == '[') {
		size_t n = strlen(s);

		if (n < 3 || s[n - 1] != ']' || memchr(s + 1, ']', n - 2) ||
		    memchr(s + 1, '[', n - 2)) {
			conf_warn(ctx, "syntax error (want [Section] or Key=Value), ignored");
			ctx->section[0] = '\0';		/* keys after it belong nowhere */
			return;
		}
		if (n - 2 >= sizeof(ctx->section)) {
			conf_warn(ctx, "unknown section %s, ignored", s);
			snprintf(ctx->section, sizeof(ctx->section), "?");
			return;
		}
		memcpy(ctx->section, s + 1, n - 2);
		ctx->section[n - 2] = '\0';
		return;
	}
	eq = strchr(s, '=');
	if (!eq || eq == s) {
		conf_warn(ctx, "syntax error (want [Section] or Key=Value), ignored");
		return;
	}
	*eq = '\0';
	key = strip(s);
	value = strip(eq + 1);
	if (!*key || strpbrk(key, " \t")) {
		conf_warn(ctx, "syntax error (want [Section] or Key=Value), ignored");
		return;
	}
	if (!ctx->section[0]) {
		conf_warn(ctx, "key %s outside of any section, ignored", key);
		return;
	}
	k = find_key(ctx->section, key);
	if (!k) {
		conf_warn(ctx, "unknown key %s in [%s], ignored", key, ctx->section);
		return;
	}
	/* Duplicates: the last one wins, like systemd. */
	if (apply(ctx->c, k, value, err, sizeof(err)) < 0)
		conf_warn(ctx, "%s, ignored", err);
}

static int load_file(struct load_ctx *ctx, const char *path, bool must_exist)
{
	char *buf = NULL, *logical = NULL;
	size_t bufsize = 0, llen = 0;
	unsigned lineno = 0;
	bool too_long = false;
	struct stat st;
	ssize_t n;
	FILE *f;
	int r = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return -errno;
	}
	if (fstat(fileno(f), &st) < 0 || S_ISDIR(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -errno;
		fclose(f);
		return r;
	}
	ctx->file = path;
	ctx->section[0] = '\0';
	while ((errno = 0, n = getline(&buf, &bufsize, f)) >= 0) {
		char *s = buf;
		bool cont;
		size_t len;

		lineno++;
		if (memchr(buf, '\0', (size_t)n)) {
			if (!logical)
				ctx->line = lineno;
			conf_warn(ctx, "NUL byte in line, ignored");
			continue;
		}
		s = strip(s);
		/* inside a continuation, comment lines are skipped */
		if (*s == '#' || *s == ';')
			continue;
		if (!logical) {
			if (!*s)
				continue;
			ctx->line = lineno;
		}
		len = strlen(s);
		cont = len && s[len - 1] == '\\';
		if (cont)
			s[--len] = ' ';
		if (!too_long && llen + len + 1 > LINE_MAX_BYTES)
			too_long = true;
		if (!too_long) {
			char *nl = realloc(logical, llen + len + 1);

			if (!nl) {
				r = -ENOMEM;
				break;
			}
			logical = nl;
			memcpy(logical + llen, s, len + 1);
			llen += len;
		}
		if (cont)
			continue;
		if (too_long)
			conf_warn(ctx, "line longer than %d bytes, ignored", LINE_MAX_BYTES);
		else if (logical)
			parse_line(ctx, strip(logical));
		free(logical);
		logical = NULL;
		llen = 0;
		too_long = false;
	}
	if (!r && ferror(f))
		r = errno ? -errno : -EIO;
	if (!r && (logical || too_long)) {	/* a backslash on the last line */
		if (too_long)
			conf_warn(ctx, "line longer than %d bytes, ignored", LINE_MAX_BYTES);
		else
			parse_line(ctx, strip(logical));
	}
	free(logical);
	free(buf);
	fclose(f);
	return r;
}

struct dropin {
	char *name;
	char *path;
};

static int cmp_dropin(const void *a, const void *b)
{
	return strcmp(((const struct dropin *)a)->name, ((const struct dropin *)b)->name);
}

static bool is_dropin_name(const char *name)
{
	size_t n = strlen(name);

	/* Hidden files are editor and package manager leftovers. */
	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".conf");
}

/* Adds dir/ *.conf to @v, unless a file of the same name is there already
 * (from a directory that comes first: it masks this one). */
static int collect_dropins(const char *dir, struct dropin **v, size_t *n, size_t *cap)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((errno = 0, de = readdir(d))) {
		char path[PATH_MAX];
		bool masked = false;
		struct stat st;

		if (!is_dropin_name(de->d_name))
			continue;
		for (size_t i = 0; i < *n && !masked; i++)
			masked = !strcmp((*v)[i].name, de->d_name);
		if (masked)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path)) {
			r = -ENAMETOOLONG;
			break;
		}
		/* Directories named *.conf are not drop-ins; dangling links are gone files. */
		if (stat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			struct dropin *nv = realloc(*v, c * sizeof(*nv));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			*v = nv;
			*cap = c;
		}
		(*v)[*n].name = strdup(de->d_name);
		(*v)[*n].path = strdup(path);
		if (!(*v)[*n].name || !(*v)[*n].path) {
			free((*v)[*n].name);
			free((*v)[*n].path);
			r = -ENOMEM;
			break;
		}
		(*n)++;
	}
	if (!r && errno)
		r = -errno;
	closedir(d);
	return r;
}

/* Every dir/ *.conf of every directory, masked by name, in strcmp order of
 * the file names (not strcoll: the locale must not matter). */
static int load_dropins(struct load_ctx *ctx, const char *const *dirs)
{
	struct dropin *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; dirs[i] && !r; i++)
		r = collect_dropins(dirs[i], &v, &n, &cap);
	if (!r && n)	/* qsort(NULL, 0) is undefined */
		qsort(v, n, sizeof(*v), cmp_dropin);
	for (size_t i = 0; i < n && !r; i++)
		r = load_file(ctx, v[i].path, false);
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].path);
	}
	free(v);
	return r;
}

const char *const conf_default_dropin_dirs[] = {
	"/etc/regionpmd.conf.d",
	"/run/regionpmd.conf.d",
	"/usr/local/lib/regionpmd.conf.d",
	"/usr/lib/regionpmd.conf.d",
	NULL
};

int conf_load(struct rpm_config *c, const char *main_path,
	      const char *const *dropin_dirs, conf_log_fn log, void *userdata,
	      unsigned *n_warnings)
{
	struct rpm_config fresh;
	struct load_ctx ctx = {
		.c = &fresh, .log = log, .userdata = userdata,
	};
	char err[256];
	int r = 0;

	/* Parse into a fresh config: a failed reload keeps the old one. */
	conf_defaults(&fresh);
	if (main_path)
		r = load_file(&ctx, main_path, false);
	if (!r && dropin_dirs)
		r = load_dropins(&ctx, dropin_dirs);
	if (!r && check_stall_window(&fresh, err, sizeof(err)) < 0) {
		ctx.warnings++;
		if (log)
			log(userdata, LOG_WARNING,
			    "%s: %s, using StallUSec=%u", main_path ? main_path : "config",
			    err, fresh.psi_window_usec);
		fresh.psi_stall_usec = fresh.psi_window_usec;
	}
	if (n_warnings)
		*n_warnings = ctx.warnings;
	if (r < 0) {
		conf_free(&fresh);
		return r;
	}
	conf_free(c);
	*c = fresh;
	return 0;
}
