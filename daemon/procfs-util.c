// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parsers of /proc/pressure/memory, /proc/meminfo and /proc/vmstat.
 *
 * The parsers work on a NUL-terminated string and only ever look at it
 * through a cursor that stops at the NUL, so truncated or garbage input is
 * -EBADMSG and not a crash.  Numbers are parsed by hand with overflow
 * checks: strtoull() accepts signs and spaces, which /proc never writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs-util.h"

ssize_t procfs_read_file(const char *root, const char *path, char *buf,
			 size_t size)
{
	char full[PATH_MAX];
	size_t len = 0;
	int fd, n;

	if (!path || !buf || size < 1)
		return -EINVAL;
	if (!root)
		root = "";
	n = snprintf(full, sizeof(full), "%s%s%s", root,
		     *root && path[0] != '/' ? "/" : "", path);
	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;

	fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* /proc files are generated per read(): loop until EOF. */
	for (;;) {
		ssize_t r;

		if (len == size - 1) {
			char c;

			r = read(fd, &c, 1);
			if (r == 0)
				break;
			close(fd);
			return r < 0 ? -EIO : -EFBIG;
		}
		r = read(fd, buf + len, size - 1 - len);
		if (r < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			close(fd);
			return -err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* ---- lexing helpers ---------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *s)
{
	while (is_blank(*s))
		s++;
	return s;
}

/* Digits only, at least one, no overflow. */
static int parse_u64(const char **pp, uint64_t *v)
{
	const char *s = *pp;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return -EBADMSG;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EBADMSG;
		x = x * 10 + d;
	}
	*pp = s;
	*v = x;
	return 0;
}

/* "12.34" (the kernel's LOAD_INT.LOAD_FRAC) as 1234; "12" or "12.3" too. */
static int parse_centi(const char **pp, unsigned *v)
{
	const char *s = *pp;
	uint64_t whole, frac = 0;
	int digits = 0;

	if (parse_u64(&s, &whole) < 0)
		return -EBADMSG;
	if (*s == '.') {
		s++;
		for (; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 2)
				frac = frac * 10 + (uint64_t)(*s - '0');
		if (!digits)
			return -EBADMSG;
		if (digits == 1)
			frac *= 10;
	}
	if (whole > (UINT_MAX - frac) / 100)
		return -EBADMSG;
	*v = (unsigned)(whole * 100 + frac);
	*pp = s;
	return 0;
}

/* Whether s, up to the end of its line, is only blanks. */
static bool at_eol(const char *s)
{
	s = skip_blanks(s);
	return *s == '\n' || *s == '\0';
}

static const char *next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

/* Matches the word w followed by c (or a blank when c is 0); advances. */
static bool eat_word(const char **pp, const char *w, char c)
{
	size_t n = strlen(w);
	const char *s = *pp;

	if (strncmp(s, w, n) != 0)
		return false;
	if (c ? s[n] != c : !is_blank(s[n]))
		return false;
	*pp = s + n + 1;
	return true;
}

/* ---- PSI --------------------------------------------------------------- */

/* "avg10=0.00 avg60=0.00 avg300=0.00 total=0"; unknown key=value skipped. */
static int parse_psi_fields(const char *s, struct rpm_psi_line *l)
{
	unsigned seen = 0;

	for (;;) {
		int r = 0;

		s = skip_blanks(s);
		if (*s == '\n' || *s == '\0')
			break;
		if (eat_word(&s, "avg10", '=')) {
			r = parse_centi(&s, &l->avg10);
			seen |= 1;
		} else if (eat_word(&s, "avg60", '=')) {
			r = parse_centi(&s, &l->avg60);
			seen |= 2;
		} else if (eat_word(&s, "avg300", '=')) {
			r = parse_centi(&s, &l->avg300);
			seen |= 4;
		} else if (eat_word(&s, "total", '=')) {
			r = parse_u64(&s, &l->total_usec);
			seen |= 8;
		} else {
			/* A newer kernel's key=value: skip it, insist on '='. */
			const char *t = s;

			while (*t && *t != '=' && *t != '\n' && !is_blank(*t))
				t++;
			if (*t != '=' || t == s)
				return -EBADMSG;
			for (s = t + 1; *s && *s != '\n' && !is_blank(*s); s++)
				;
		}
		if (r < 0)
			return r;
		if (*s && *s != '\n' && !is_blank(*s))
			return -EBADMSG;
	}
	return seen == 15 ? 0 : -EBADMSG;
}

int procfs_parse_pressure(const char *text, struct rpm_pressure *p)
{
	bool have_some = false;

	if (!text || !p)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	for (const char *s = text; *s; s = next_line(s)) {
		struct rpm_psi_line *l;
		int r;

		if (at_eol(s))
			continue;
		if (eat_word(&s, "some", 0)) {
			if (have_some)
				return -EBADMSG;
			have_some = true;
			l = &p->some;
		} else if (eat_word(&s, "full", 0)) {
			if (p->has_full)
				return -EBADMSG;
			p->has_full = true;
			l = &p->full;
		} else {
			return -EBADMSG;
		}
		r = parse_psi_fields(s, l);
		if (r < 0)
			return r;
	}
	return have_some ? 0 : -EBADMSG;
}

/* ---- meminfo ----------------------------------------------------------- */

#define MI(name, field) { name, offsetof(struct rpm_meminfo, field) }
static const struct {
	const char *name;
	size_t off;
} meminfo_keys[] = {
	MI("MemTotal", mem_total_kb),
	MI("MemFree", mem_free_kb),
	MI("MemAvailable", mem_available_kb),
	MI("Buffers", buffers_kb),
	MI("Cached", cached_kb),
	MI("SwapCached", swap_cached_kb),
	MI("Active(anon)", active_anon_kb),
	MI("Inactive(anon)", inactive_anon_kb),
	MI("Active(file)", active_file_kb),
	MI("Inactive(file)", inactive_file_kb),
	MI("Unevictable", unevictable_kb),
	MI("Mlocked", mlocked_kb),
	MI("SwapTotal", swap_total_kb),
	MI("SwapFree", swap_free_kb),
	MI("Dirty", dirty_kb),
	MI("Writeback", writeback_kb),
	MI("AnonPages", anon_pages_kb),
	MI("Mapped", mapped_kb),
	MI("Shmem", shmem_kb),
	MI("KReclaimable", kreclaimable_kb),
	MI("Slab", slab_kb),
	MI("SReclaimable", sreclaimable_kb),
	MI("SUnreclaim", sunreclaim_kb),
	MI("KernelStack", kernel_stack_kb),
	MI("PageTables", page_tables_kb),
	MI("AnonHugePages", anon_huge_pages_kb),
	MI("HugePages_Total", hugepages_total),
	MI("Hugepagesize", hugepagesize_kb),
};
#undef MI

#define MEMINFO_REQUIRED 7	/* bits of the first three keys */

int procfs_parse_meminfo(const char *text, struct rpm_meminfo *m)
{
	unsigned required = 0;

	if (!text || !m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	for (const char *s = text; *s; s = next_line(s)) {
		const char *colon;
		uint64_t v;
		size_t klen;

		if (at_eol(s))
			continue;
		colon = s;
		while (*colon && *colon != ':' && *colon != '\n')
			colon++;
		if (*colon != ':' || colon == s)
			return -EBADMSG;
		klen = (size_t)(colon - s);

		s = skip_blanks(colon + 1);
		if (parse_u64(&s, &v) < 0)
			return -EBADMSG;
		s = skip_blanks(s);
		if (s[0] == 'k' && s[1] == 'B')
			s += 2;
		if (!at_eol(s))
			return -EBADMSG;

		for (size_t i = 0; i < sizeof(meminfo_keys) / sizeof(meminfo_keys[0]); i++) {
			if (strlen(meminfo_keys[i].name) != klen ||
			    memcmp(meminfo_keys[i].name, colon - klen, klen) != 0)
				continue;
			*(uint64_t *)((char *)m + meminfo_keys[i].off) = v;
			if (i < 3)
				required |= 1u << i;
			break;
		}
	}
	return required == MEMINFO_REQUIRED ? 0 : -EBADMSG;
}

/* ---- vmstat ------------------------------------------------------------ */

#define VM(field) { #field, offsetof(struct rpm_vmstat, field) }
static const struct {
	const char *name;
	size_t off;
} vmstat_keys[] = {
	VM(nr_free_pages), VM(nr_file_pages), VM(nr_anon_pages), VM(nr_dirty), VM(nr_writeback),
	VM(pgmajfault),
	VM(workingset_refault_anon), VM(workingset_refault_file),
	VM(pgmigrate_success), VM(pgmigrate_fail),
	VM(compact_stall), VM(compact_fail), VM(compact_success),
	VM(compact_migrate_scanned), VM(compact_free_scanned),
	VM(pgscan_kswapd), VM(pgscan_direct),
	VM(pgsteal_kswapd), VM(pgsteal_direct),
	VM(oom_kill),
};
#undef VM

static void vmstat_store(struct rpm_vmstat *v, const char *name, size_t len,
			 uint64_t val)
{
	static const char allocstall[] = "allocstall_";

	/* One counter per zone type; the sum is what matters. */
	if (len > sizeof(allocstall) - 1 &&
	    memcmp(name, allocstall, sizeof(allocstall) - 1) == 0) {
		v->allocstall = val > UINT64_MAX - v->allocstall ?
				UINT64_MAX : v->allocstall + val;
		v->n_found++;
		return;
	}
	for (size_t i = 0; i < sizeof(vmstat_keys) / sizeof(vmstat_keys[0]); i++) {
		if (strlen(vmstat_keys[i].name) == len &&
		    memcmp(vmstat_keys[i].name, name, len) == 0) {
			*(uint64_t *)((char *)v + vmstat_keys[i].off) = val;
			v->n_found++;
			return;
		}
	}
}

int procfs_parse_vmstat(const char *text, struct rpm_vmstat *v)
{
	if (!text || !v)
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	for (const char *s = text; *s; s = next_line(s)) {
		const char *name = s;
		uint64_t val;
		size_t len;

		if (at_eol(s))
			continue;
		while (*s && *s != '\n' && !is_blank(*s))
			s++;
		len = (size_t)(s - name);
		if (!is_blank(*s))
			return -EBADMSG;
		s = skip_blanks(s);
		if (parse_u64(&s, &val) < 0 || !at_eol(s))
			return -EBADMSG;
		vmstat_store(v, name, len, val);
	}
	return v->n_found ? 0 : -EBADMSG;
}

/* ---- zoneinfo ----------------------------------------------------------- */

enum {
	ZI_FREE = 1 << 0,
	ZI_HIGH = 1 << 1,
	ZI_MANAGED = 1 << 2,
	ZI_PROTECTION = 1 << 3,
	ZI_ALL = ZI_FREE | ZI_HIGH | ZI_MANAGED | ZI_PROTECTION,
};

struct zoneinfo_parse {
	struct rpm_zoneinfo *z;
	bool in_zone, movable, done;	/* done: at the zone's pagesets */
	bool bad;
	unsigned seen;			/* ZI_* of this zone */
	uint64_t free, high, boost, managed, protect;
	unsigned zones_marked;		/* zones with pages and all their marks */
};

/*
 * A zone's lines are read: count its pages and what the kernel keeps free
 * in it.  As calculate_totalreserve_pages() does: the high watermark plus
 * the largest lowmem reserve, at most the zone.  "high" includes the
 * watermark boost (wmark_pages()); the reserve the kernel computes does
 * not, kswapd's target does.
 */
static void zoneinfo_end_zone(struct zoneinfo_parse *p)
{
	struct rpm_zoneinfo *z = p->z;
	uint64_t keep, high, reserve, above;

	if (!p->in_zone || !(p->seen & ZI_MANAGED) || !p->managed)
		return;
	z->managed_pages += p->managed;
	z->zones++;
	if (p->movable) {
		z->movable_pages += p->managed;
		z->movable_zones++;
	}
	if ((p->seen & ZI_ALL) != ZI_ALL)
		return;
	p->zones_marked++;
	high = p->high > p->boost ? p->high - p->boost : 0;
	keep = high + p->protect;
	reserve = keep < p->managed ? keep : p->managed;
	keep = p->high + p->protect;
	above = p->free > keep ? p->free - keep : 0;
	z->reserve_pages += reserve;
	z->free_above_marks += above;
	if (!p->movable) {
		z->low_reserve_pages += reserve;
		z->low_free_above_marks += above;
	}
}

/* "protection: (0, 1945, 1945, 2926)": the largest entry. */
static int parse_protection(const char *s, uint64_t *max)
{
	uint64_t v;

	*max = 0;
	s = skip_blanks(s);
	if (*s++ != '(')
		return -EBADMSG;
	for (;;) {
		s = skip_blanks(s);
		if (parse_u64(&s, &v) < 0)
			return -EBADMSG;
		if (v > *max)
			*max = v;
		s = skip_blanks(s);
		if (*s == ')')
			return at_eol(s + 1) ? 0 : -EBADMSG;
		if (*s++ != ',')
			return -EBADMSG;
	}
}

/* "  <key> N" at the start of @s (after blanks): N in @val. */
static int zoneinfo_field(const char *s, const char *key, uint64_t *val)
{
	size_t len = strlen(key);

	if (strncmp(s, key, len) || !is_blank(s[len]))
		return 0;
	s = skip_blanks(s + len);
	if (parse_u64(&s, val) < 0 || !at_eol(s))
		return -EBADMSG;
	return 1;
}

/*
 * One line of zoneinfo: "Node 0, zone   Normal" starts a zone; up to its
 * "pagesets" line (the per-cpu lists, whose "high:" is another thing) it
 * has "pages free", "boost", "high", "managed" and "protection:".
 */
static void zoneinfo_line(struct zoneinfo_parse *p, const char *line, size_t len)
{
	static const struct {
		const char *key;
		unsigned bit;
		size_t off;
	} fields[] = {
		{ "pages free", ZI_FREE, offsetof(struct zoneinfo_parse, free) },
		{ "boost", 0, offsetof(struct zoneinfo_parse, boost) },
		{ "high", ZI_HIGH, offsetof(struct zoneinfo_parse, high) },
		{ "managed", ZI_MANAGED, offsetof(struct zoneinfo_parse, managed) },
	};
	char name[32];
	unsigned node;
	uint64_t val = 0;
	const char *s;

	if (len >= 4 && !strncmp(line, "Node", 4)) {
		if (sscanf(line, "Node %u, zone %31s", &node, name) != 2) {
			p->bad = true;
			return;
		}
		zoneinfo_end_zone(p);
		p->in_zone = true;
		p->done = false;
		p->seen = 0;
		p->free = p->high = p->boost = p->managed = p->protect = 0;
		p->movable = !strcmp(name, "Movable");
		return;
	}
	if (!p->in_zone || p->done)
		return;
	s = skip_blanks(line);
	if (!strncmp(s, "pagesets", 8) && at_eol(s + 8)) {
		p->done = true;
		return;
	}
	if (!strncmp(s, "protection:", 11)) {
		if (p->seen & ZI_PROTECTION || parse_protection(s + 11, &p->protect) < 0)
			p->bad = true;
		p->seen |= ZI_PROTECTION;
		return;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int r = zoneinfo_field(s, fields[i].key, &val);

		if (!r)
			continue;
		/* Twice in one zone: not the layout we know. */
		if (r < 0 || (fields[i].bit & p->seen))
			p->bad = true;
		p->seen |= fields[i].bit;
		*(uint64_t *)((char *)p + fields[i].off) = val;
		return;
	}
}

/* The last zone ends with the text; the marks count only if every zone had them. */
static int zoneinfo_finish(struct zoneinfo_parse *p)
{
	struct rpm_zoneinfo *z = p->z;

	zoneinfo_end_zone(p);
	if (p->bad || !z->zones)
		return -EBADMSG;
	z->marks = p->zones_marked == z->zones;
	if (!z->marks) {
		z->reserve_pages = z->free_above_marks = 0;
		z->low_reserve_pages = z->low_free_above_marks = 0;
	}
	return 0;
}

int procfs_parse_zoneinfo(const char *text, struct rpm_zoneinfo *z)
{
	struct zoneinfo_parse p = { .z = z };

	if (!text || !z)
		return -EINVAL;
	memset(z, 0, sizeof(*z));
	for (const char *s = text; *s; s = next_line(s)) {
		const char *e = strchr(s, '\n');

		zoneinfo_line(&p, s, e ? (size_t)(e - s) : strlen(s));
	}
	return zoneinfo_finish(&p);
}

int procfs_read_zoneinfo(const char *root, struct rpm_zoneinfo *z)
{
	struct zoneinfo_parse p = { .z = z };
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (!z)
		return -EINVAL;
	memset(z, 0, sizeof(*z));
	if ((size_t)snprintf(path, sizeof(path), "%s%s", root ? root : "", RPM_PROC_ZONEINFO) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (memchr(line, '\0', (size_t)n)) {
			p.bad = true;
			break;
		}
		zoneinfo_line(&p, line, (size_t)n);
	}
	free(line);
	fclose(f);
	return zoneinfo_finish(&p);
}

/* ---- file forms -------------------------------------------------------- */

/* meminfo is about 1.5 KiB, vmstat about 6 KiB on 6.12: room to grow. */
#define PROCFS_BUF 32768

#define DEFINE_READER(fn, parse, path, type)				\
int fn(const char *root, type *out)					\
{									\
	char buf[PROCFS_BUF];						\
	ssize_t n = procfs_read_file(root, path, buf, sizeof(buf));	\
									\
	if (n < 0)							\
		return (int)n;						\
	if (memchr(buf, '\0', (size_t)n))	/* binary junk */	\
		return -EBADMSG;					\
	return parse(buf, out);						\
}

DEFINE_READER(procfs_read_pressure, procfs_parse_pressure,
	      RPM_PROC_PRESSURE_MEMORY, struct rpm_pressure)
DEFINE_READER(procfs_read_meminfo, procfs_parse_meminfo,
	      RPM_PROC_MEMINFO, struct rpm_meminfo)
DEFINE_READER(procfs_read_vmstat, procfs_parse_vmstat,
	      RPM_PROC_VMSTAT, struct rpm_vmstat)

uint64_t procfs_kb_to_pages(uint64_t kb, uint64_t page_size)
{
	if (page_size < 1024 || page_size % 1024)
		return 0;
	return kb / (page_size / 1024);
}

/* kstrtobool() on the @n characters at @v: false if they are not a boolean. */
static bool parse_bool(const char *v, size_t n, bool *out)
{
	if (!n)
		return false;
	switch (v[0]) {
	case 'y': case 'Y': case 't': case 'T': case '1':
		*out = true;
		return true;
	case 'n': case 'N': case 'f': case 'F': case '0':
		*out = false;
		return true;
	case 'o': case 'O':
		if (n < 2)
			return false;
		if (v[1] == 'n' || v[1] == 'N')
			*out = true;
		else if (v[1] == 'f' || v[1] == 'F')
			*out = false;
		else
			return false;
		return true;
	}
	return false;
}

/*
 * The next word of the command line at *@w that is @param, bare or with a
 * value (NULL: no more); *@w moves past it and *@n is its length.
 */
static const char *cmdline_next(const char **w, const char *param, size_t *n)
{
	size_t len = strlen(param);

	while (len && *w && **w) {
		const char *word = *w + strspn(*w, " \t\n");

		*n = strcspn(word, " \t\n");
		*w = word + *n;
		if (*n >= len && !strncmp(word, param, len) && (*n == len || word[len] == '='))
			return word;
	}
	return NULL;
}

bool procfs_cmdline_bool(const char *cmdline, const char *param)
{
	size_t len = strlen(param), n;
	const char *w = cmdline, *word;
	bool on = false;

	while ((word = cmdline_next(&w, param, &n))) {
		if (n == len)
			on = true;	/* a bare boolean parameter means on */
		else
			parse_bool(word + len + 1, n - len - 1, &on);	/* bad: unchanged */
	}
	return on;
}

bool procfs_cmdline_has(const char *cmdline, const char *param)
{
	const char *w = cmdline;
	size_t n;

	return cmdline_next(&w, param, &n) != NULL;
}

int procfs_read_cmdline_bool(const char *root, const char *param, bool *on)
{
	char buf[4096];		/* COMMAND_LINE_SIZE is at most 4096 */
	ssize_t n = procfs_read_file(root, RPM_PROC_CMDLINE, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	*on = procfs_cmdline_bool(buf, param);
	return 0;
}
