// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd.conf parsing with inih.
 *
 * One table describes every key: its section, name, type, range and where
 * it lives in struct rpm_config.  The file parser, conf_set() and conf_get()
 * all go through that table, so a key cannot be valid in one and not in the
 * other.
 *
 * Debian's libinih is built without line numbers in the handler, so the file
 * is fed to inih through our own reader, which hands over one line per call,
 * counts them, and reports lines inih would reject (or silently split) with
 * file:line.  The reader also strips leading blanks: inih would otherwise
 * take an indented line as the continuation of the previous value, which
 * systemd-style files do not have.
 */
#include <dirent.h>
#include <errno.h>
#include <ini.h>
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
	{ K("Daemon", "IntervalSec"), KEY_UINT, OFF(interval_sec), 1, 3600 },

	/* PSI limits as percent (0.00 to 100.00; 100 means never). */
	{ K("Pressure", "SomeAvg10MaxPercent"), KEY_PERCENT, POL(psi_some_avg10_max), 0, 10000 },
	{ K("Pressure", "FullAvg10MaxPercent"), KEY_PERCENT, POL(psi_full_avg10_max), 0, 10000 },
	/* The kernel's PSI trigger limits: window 500 ms to 10 s, stall <= window. */
	{ K("Pressure", "StallUSec"), KEY_UINT, OFF(psi_stall_usec), 1, 10000000 },
	{ K("Pressure", "WindowUSec"), KEY_UINT, OFF(psi_window_usec), 500000, 10000000 },

	/* Keeping more than 90 % free would leave nothing to park. */
	{ K("Policy", "HeadroomPercent"), KEY_UINT, POL(headroom_percent), 0, 90 },
	{ K("Policy", "BudgetPagesPerSec"), KEY_U64, POL(budget_pages_per_sec), 1, 1ULL << 32 },
	/* The kernel refuses a budget above a region; the policy clamps. */
	{ K("Policy", "BudgetPagesPerRegion"), KEY_U64, POL(budget_pages_per_region), 1, 1ULL << 32 },
	{ K("Policy", "MaxPagesToVacate"), KEY_U64, POL(max_pages_to_vacate), 0, 1ULL << 40 },
	{ K("Policy", "MinIdleAgeSec"), KEY_UINT, POL(min_idle_age_sec), 1, 86400 },
	{ K("Policy", "PingPongWindowSec"), KEY_UINT, POL(pingpong_window_sec), 0, 86400 },
	{ K("Policy", "PingPongBackoffSec"), KEY_UINT, POL(pingpong_backoff_sec), 1, 86400 },
	{ K("Policy", "PressureBackoffSec"), KEY_UINT, POL(pressure_backoff_sec), 0, 3600 },
	{ K("Policy", "Park"), KEY_BOOL, POL(park), 0, 1 },
	{ K("Policy", "Bias"), KEY_BOOL, POL(bias), 0, 1 },
	{ K("Policy", "DropCache"), KEY_BOOL, POL(drop_cache), 0, 1 },
	{ K("Policy", "PaybackSec"), KEY_UINT, POL(payback_sec), 1, 10U * 365 * 86400 },

	/* Model constants: non-negative, finite, at most a million. */
	{ K("Power", "MigrateCostMicrojoulePerPage"), KEY_DOUBLE, POL(migrate_cost_uj_per_page), 0, 1000000 },
	{ K("Power", "RegionSavingMilliwatt"), KEY_DOUBLE, POL(region_saving_mw), 0, 1000000 },

	/* Page idle tracking needs a few seconds to tell hot from idle. */
	{ K("Idle", "SampleSec"), KEY_UINT, OFF(idle_sample_sec), 1, 600 },
	{ K("Idle", "MaxRegions"), KEY_UINT, OFF(idle_max_regions), 1, 4096 },

	{ K("Protect", "Cgroup"), KEY_CGROUP, 0, 0, 0 },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

void conf_defaults(struct rpm_config *c)
{
	memset(c, 0, sizeof(*c));
	policy_config_defaults(&c->policy);
	c->interval_sec = 5;		/* reacts within seconds, idle otherwise */
	c->psi_stall_usec = 100000;	/* 100 ms of stall per 1 s window = 10 % */
	c->psi_window_usec = 1000000;
	c->idle_sample_sec = 5;		/* mark, wait 5 s, count */
	c->idle_max_regions = 4;	/* bounds the page_idle bitmap work per pass */
	c->n_protected = 0;		/* nothing protected */
}

void conf_free(struct rpm_config *c)
{
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
	case KEY_UINT:
	case KEY_U64:
	case KEY_PERCENT:
		r = k->type == KEY_PERCENT ? parse_percent(value, &u) :
					     parse_u64_str(value, &u);
		if (r == -EINVAL) {
			snprintf(err, errlen, "invalid %s \"%s\" for %s=",
				 k->type == KEY_PERCENT ? "percentage" : "number",
				 value, k->name);
			return r;
		}
		if (r < 0 || u < k->min || u > k->max) {
			if (k->type == KEY_PERCENT)
				snprintf(err, errlen, "%s=%s out of range [%llu.%02llu, %llu.%02llu]",
					 k->name, value,
					 (unsigned long long)k->min / 100, (unsigned long long)k->min % 100,
					 (unsigned long long)k->max / 100, (unsigned long long)k->max % 100);
			else
				snprintf(err, errlen, "%s=%s out of range [%llu, %llu]",
					 k->name, value, (unsigned long long)k->min,
					 (unsigned long long)k->max);
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
	case KEY_CGROUP:
		return add_cgroup(c, value, err, errlen);
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
	if (k->type == KEY_CGROUP)
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

struct load_ctx {
	struct rpm_config *c;
	const char *file;
	FILE *f;
	unsigned line;
	conf_log_fn log;
	void *userdata;
	unsigned warnings;
	int read_error;
	char *buf;		/* getline buffer */
	size_t bufsize;
};

#define conf_warn(ctx, fmt, ...) do {					\
	(ctx)->warnings++;						\
	if ((ctx)->log)							\
		(ctx)->log((ctx)->userdata, LOG_WARNING, "%s:%u: " fmt,	\
			   (ctx)->file, (ctx)->line, ##__VA_ARGS__);	\
} while (0)

/*
 * Lines inih would reject: neither a comment, a [section] nor a key=value.
 * inih reports only the first error in its return value, without calling
 * us, so we check every line ourselves.
 */
static bool line_is_valid(const char *s)
{
	const char *eq;

	if (!*s || *s == ';' || *s == '#' || *s == '\n' || *s == '\r')
		return true;
	if (*s == '[')
		return strchr(s, ']') != NULL;
	/* Key=Value only: inih would also split "Key:Value", systemd does not. */
	eq = strchr(s, '=');
	return eq && eq != s && !memchr(s, ':', (size_t)(eq - s));
}

/* ini_reader: one whole line per call, blanks stripped on the left. */
static char *reader(char *str, int num, void *stream)
{
	struct load_ctx *ctx = stream;
	ssize_t n;
	char *s;

	n = getline(&ctx->buf, &ctx->bufsize, ctx->f);
	if (n < 0) {
		if (ferror(ctx->f))
			ctx->read_error = errno ? -errno : -EIO;
		return NULL;
	}
	ctx->line++;
	s = ctx->buf;
	while (*s == ' ' || *s == '\t')
		s++;
	if (memchr(ctx->buf, '\0', (size_t)n)) {
		conf_warn(ctx, "NUL byte in line, ignored");
		s = "\n";
	} else if (strlen(s) >= (size_t)num) {
		conf_warn(ctx, "line longer than %d characters, ignored", num - 1);
		s = "\n";
	} else if (!line_is_valid(s)) {
		conf_warn(ctx, "syntax error (want [Section] or Key=Value), ignored");
		s = "\n";
	}
	memcpy(str, s, strlen(s) + 1);
	return str;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load_ctx *ctx = user;
	const struct key *k;
	char err[256];

	if (!*section) {
		conf_warn(ctx, "key %s outside of any section, ignored", name);
		return 1;
	}
	k = find_key(section, name);
	if (!k) {
		conf_warn(ctx, "unknown key %s in [%s], ignored", name, section);
		return 1;
	}
	/* Duplicates: the last one wins, like systemd. */
	if (apply(ctx->c, k, value, err, sizeof(err)) < 0)
		conf_warn(ctx, "%s, ignored", err);
	return 1;	/* never stop: one bad line must not hide the rest */
}

static int load_file(struct load_ctx *ctx, const char *path, bool must_exist)
{
	struct stat st;
	int r;

	ctx->f = fopen(path, "re");
	if (!ctx->f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return -errno;
	}
	r = fstat(fileno(ctx->f), &st) < 0 ? -errno :
	    S_ISDIR(st.st_mode) ? -EISDIR : 0;
	if (r < 0) {
		fclose(ctx->f);
		ctx->f = NULL;
		return r;
	}
	ctx->file = path;
	ctx->line = 0;
	ctx->read_error = 0;
	r = ini_parse_stream(reader, ctx, handler, ctx);
	fclose(ctx->f);
	ctx->f = NULL;
	if (ctx->read_error)
		return ctx->read_error;
	if (r == -2)
		return -ENOMEM;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dropin_name(const char *name)
{
	size_t n = strlen(name);

	/* Hidden files are editor and package manager leftovers. */
	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".conf");
}

/* dir/ *.conf in strcmp order (not strcoll: the locale must not matter). */
static int load_dropins(struct load_ctx *ctx, const char *dir)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((errno = 0, de = readdir(d))) {
		char **nn;

		if (!is_dropin_name(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				r = -ENOMEM;
				goto out;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		r = -errno;
		goto out;
	}
	if (n)	/* qsort(NULL, 0) is undefined */
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !r; i++) {
		char path[PATH_MAX];
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >=
		    (int)sizeof(path)) {
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
		r = load_file(ctx, path, false);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return r;
}

int conf_load(struct rpm_config *c, const char *main_path,
	      const char *dropin_dir, conf_log_fn log, void *userdata,
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
	if (!r && dropin_dir)
		r = load_dropins(&ctx, dropin_dir);
	free(ctx.buf);
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
