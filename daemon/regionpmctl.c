// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmctl: command line client of regionpmd.  Everything but "check"
 * goes through the D-Bus API of org.regionpm1(5); "check" probes the kernel,
 * /proc and /sys directly (and only asks the bus whether the daemon answers).
 * See regionpmctl(8).
 *
 * Exit status by failure class (regionpmctl(8)): 0 ok, 1 other failure,
 * 2 usage, 3 daemon not reachable, 4 permission denied, 5 refused by the
 * daemon, 6 check found something required missing.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <libsmartcols.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-api.h"
#include "genl.h"
#include "procfs-util.h"
#include "linux/regionpm.h"

#define RPM_VERSION "0.1"

#define BUS_NAME RPM_BUS_NAME
#define BUS_PATH RPM_BUS_PATH
#define BUS_IFACE RPM_BUS_IFACE
#define BUS_ERR_PREFIX RPM_BUS_ERR_PREFIX
#define REGION_SIG RPM_BUS_REGION_SIG
#define UNSCANNED RPM_BUS_UNSCANNED

/* The daemon counts in pages of this machine (it runs on it). */
static uint64_t page_bytes;
#define PAGE_BYTES page_bytes

/* A Vacate() call compacts at most BudgetPagesPerRegion= pages, and the
 * daemon's netlink requests time out after 20 s: this is plenty. */
#define SLOW_CALL_USEC (60ULL * 1000000ULL)

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	EXIT_DENIED = 4,
	EXIT_REFUSED = 5,
	EXIT_MISSING = 6,
};

static bool arg_json, arg_raw, arg_no_legend, arg_no_pager, arg_bytes;
static const char *arg_output;

/* ---- messages -------------------------------------------------------- */

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	fputs("regionpmctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("regionpmctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see regionpmctl --help)\n", stderr);
	return EXIT_USAGE;
}

static void help(void)
{
	printf("Usage: regionpmctl [OPTIONS] COMMAND [ARG]\n\n"
	       "Inspect and control regionpmd, the memory region power manager.\n\n"
	       "Commands:\n"
	       "  status               daemon state, policy, totals, power model, region map\n"
	       "  regions              table of the regions (like lsmem)\n"
	       "  vacate ID            empty region ID now (root)\n"
	       "  park ID              park the empty region ID (root)\n"
	       "  unpark ID            give the parked region ID back (root)\n"
	       "  set KEY=VALUE        override a configuration key until reload (root)\n"
	       "  pause                stop emptying and parking (root)\n"
	       "  resume               undo pause (root)\n"
	       "  reload               read the configuration again, return when in effect (root)\n"
	       "  monitor              print the daemon's signals until interrupted\n"
	       "  check                check what regionpm needs, without the daemon\n\n"
	       "Options:\n"
	       "  -J, --json           regions, status: JSON output (sizes in bytes)\n"
	       "  -b, --bytes          regions, status: sizes in bytes\n"
	       "  -r, --raw            regions: raw output\n"
	       "  -n, --no-legend      regions: no header line\n"
	       "  -o, --output LIST    regions: comma-separated columns\n"
	       "      --no-pager       do not pipe status and regions into a pager\n"
	       "  -h, --help           this help\n"
	       "  -V, --version        version\n\n"
	       "Columns: ID RANGE SIZE STATE ZONES FREE ANON FILE UNMOVABLE PARKED PLAN ACTION\n"
	       "(default: all but SIZE).\n\n"
	       "Exit status: 0 ok, 1 failure, 2 usage, 3 daemon not reachable,\n"
	       "4 permission denied, 5 refused by the daemon, 6 check found something missing.\n"
	       "See regionpmctl(8).\n");
}

/* ---- formatting ------------------------------------------------------ */

/* Binary units with one-letter suffixes, as lsmem prints them: 128M, 1.5G. */
static char *size_str(char *buf, size_t len, uint64_t bytes)
{
	if (arg_bytes) {	/* -b: exact, for scripts and comparisons */
		snprintf(buf, len, "%" PRIu64, bytes);
		return buf;
	}
	static const char units[] = "BKMGTPE";
	unsigned u = 0;
	uint64_t whole = bytes, rest = 0;

	while (whole >= 1024 && u < sizeof(units) - 2) {
		rest = whole % 1024;
		whole /= 1024;
		u++;
	}
	/* one decimal, rounded; 1023.96 rounds up to the next unit's 1 */
	unsigned dec = (unsigned)((rest * 10 + 512) / 1024);

	if (dec == 10) {
		whole++;
		dec = 0;
		if (whole == 1024 && u < sizeof(units) - 2) {
			whole = 1;
			u++;
		}
	}
	if (dec)
		snprintf(buf, len, "%" PRIu64 ".%u%c", whole, dec, units[u]);
	else
		snprintf(buf, len, "%" PRIu64 "%c", whole, units[u]);
	return buf;
}

static bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---- pager ----------------------------------------------------------- */

/*
 * As systemctl: on a terminal, long output goes through $SYSTEMD_PAGER, else
 * $PAGER, else less (with LESS=FRSXMK: quits at once if it fits on the
 * screen); "" or "cat" means none; --no-pager turns it off.
 */
static pid_t pager_pid;

static void pager_open(void)
{
	const char *pager = getenv("SYSTEMD_PAGER");
	int fds[2];
	pid_t pid;

	if (arg_no_pager || !isatty(STDOUT_FILENO))
		return;
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || streq(pager, "cat"))
		return;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		setenv("LESS", "FRSXMK", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	signal(SIGPIPE, SIG_IGN);	/* the user may quit the pager early */
	pager_pid = pid;
}

static void pager_close(void)
{
	if (!pager_pid)
		return;
	fflush(stdout);
	fclose(stdout);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = 0;
}

/* ---- bus ------------------------------------------------------------- */

static bool startswith(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool errno_unreachable(int e)
{
	switch (e) {
	case ENOENT: case ECONNREFUSED: case ENOTCONN: case ECONNRESET:
	case ETIMEDOUT: case EHOSTUNREACH: case ENXIO: case ESHUTDOWN:
	case EPIPE: case ENOMEDIUM:
		return true;
	}
	return false;
}

/* Exit status for a failed bus call. */
static int exit_for(const sd_bus_error *e, int r)
{
	if (e && sd_bus_error_is_set(e)) {
		const char *n = e->name;

		if (startswith(n, BUS_ERR_PREFIX))
			return EXIT_REFUSED;
		if (streq(n, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
		    streq(n, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
		    streq(n, SD_BUS_ERROR_NO_REPLY) ||
		    streq(n, SD_BUS_ERROR_TIMEOUT) ||
		    streq(n, SD_BUS_ERROR_DISCONNECTED) ||
		    streq(n, SD_BUS_ERROR_NO_SERVER) ||
		    startswith(n, "org.freedesktop.DBus.Error.Spawn.") ||
		    startswith(n, "org.freedesktop.systemd1."))
			return EXIT_UNREACHABLE;
		if (streq(n, SD_BUS_ERROR_ACCESS_DENIED) ||
		    streq(n, SD_BUS_ERROR_AUTH_FAILED) ||
		    streq(n, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
			return EXIT_DENIED;
		return EXIT_FAIL;
	}
	if (r == -EPERM || r == -EACCES)
		return EXIT_DENIED;
	if (errno_unreachable(-r))
		return EXIT_UNREACHABLE;
	return EXIT_FAIL;
}

/* Prints why a call failed and returns the exit status. */
static int report(const char *what, const sd_bus_error *e, int r)
{
	int code = exit_for(e, r);
	const char *text = e && sd_bus_error_is_set(e) && e->message ? e->message :
			   strerror(r < 0 ? -r : r);

	switch (code) {
	case EXIT_UNREACHABLE:
		msg("regionpmd is not reachable on the system bus (%s): %s", what, text);
		break;
	case EXIT_DENIED:
		msg("%s: permission denied (changing things needs root): %s", what, text);
		break;
	default:
		msg("%s: %s", what, text);
	}
	return code;
}

static int bus_connect(sd_bus **ret)
{
	const char *addr = getenv("REGIONPM_BUS_ADDRESS");
	sd_bus *bus = NULL;
	int r;

	if (addr && *addr) {
		r = sd_bus_new(&bus);
		if (r >= 0)
			r = sd_bus_set_address(bus, addr);
		if (r >= 0)
			r = sd_bus_set_bus_client(bus, true);
		if (r >= 0)
			r = sd_bus_start(bus);
	} else {
		r = sd_bus_open_system(&bus);
	}
	if (r < 0) {
		sd_bus_unref(bus);
		*ret = NULL;
		return r;
	}
	*ret = bus;
	return 0;
}

static int connect_or_report(sd_bus **bus)
{
	int r = bus_connect(bus);

	if (r < 0) {
		msg("regionpmd is not reachable: cannot connect to the system bus: %s",
		    strerror(-r));
		return EXIT_UNREACHABLE;
	}
	return EXIT_OK;
}

/* ---- properties ------------------------------------------------------ */

struct kv {
	char *key, *value;
};

struct props {
	char *state, *backend, *backend_missing;
	int dry_run;			/* -1 unknown */
	uint32_t region_count;
	uint64_t region_size;
	uint64_t pages_migrated, pages_dropped;
	uint32_t vacated, parked, released, errors;
	double pdf, power_mw;
	bool have_pdf, have_power;
	struct kv *policy;
	size_t n_policy;
};

static void props_free(struct props *p)
{
	free(p->state);
	free(p->backend);
	free(p->backend_missing);
	for (size_t i = 0; i < p->n_policy; i++) {
		free(p->policy[i].key);
		free(p->policy[i].value);
	}
	free(p->policy);
}

static int read_policy(sd_bus_message *m, struct kv **ret, size_t *n)
{
	const char *k, *v;
	int r;

	r = sd_bus_message_enter_container(m, 'a', "{ss}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0) {
		struct kv *a = realloc(*ret, (*n + 1) * sizeof(**ret));

		if (!a)
			return -ENOMEM;
		*ret = a;
		a[*n].key = strdup(k);
		a[*n].value = strdup(v);
		if (!a[*n].key || !a[*n].value)
			return -ENOMEM;
		(*n)++;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

/* Reads the variant's value if its signature is @sig, skips it otherwise. */
static int read_variant(sd_bus_message *m, const char *sig, void *p)
{
	const char *contents;
	char type;
	int r;

	r = sd_bus_message_peek_type(m, &type, &contents);
	if (r < 0)
		return r;
	if (type != 'v' || !streq(contents, sig))
		return sd_bus_message_skip(m, "v") < 0 ? -EBADMSG : 0;
	r = sd_bus_message_enter_container(m, 'v', sig);
	if (r < 0)
		return r;
	if (sig[0] == 's') {
		const char *s;

		r = sd_bus_message_read_basic(m, 's', &s);
		if (r >= 0) {
			*(char **)p = strdup(s);
			if (!*(char **)p)
				r = -ENOMEM;
		}
	} else {
		r = sd_bus_message_read_basic(m, sig[0], p);
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(m);
	return r < 0 ? r : 1;
}

static int parse_props(sd_bus_message *m, struct props *p)
{
	const char *name;
	int r;

	*p = (struct props) { .dry_run = -1 };
	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		r = sd_bus_message_read_basic(m, 's', &name);
		if (r < 0)
			return r;
		if (streq(name, "State"))
			r = read_variant(m, "s", &p->state);
		else if (streq(name, "Backend"))
			r = read_variant(m, "s", &p->backend);
		else if (streq(name, "BackendMissing"))
			r = read_variant(m, "s", &p->backend_missing);
		else if (streq(name, "DryRun"))
			r = read_variant(m, "b", &p->dry_run);
		else if (streq(name, "RegionCount"))
			r = read_variant(m, "u", &p->region_count);
		else if (streq(name, "RegionSize"))
			r = read_variant(m, "t", &p->region_size);
		else if (streq(name, "PagesMigrated"))
			r = read_variant(m, "t", &p->pages_migrated);
		else if (streq(name, "PagesDropped"))
			r = read_variant(m, "t", &p->pages_dropped);
		else if (streq(name, "RegionsVacated"))
			r = read_variant(m, "u", &p->vacated);
		else if (streq(name, "RegionsParked"))
			r = read_variant(m, "u", &p->parked);
		else if (streq(name, "RegionsReleased"))
			r = read_variant(m, "u", &p->released);
		else if (streq(name, "Errors"))
			r = read_variant(m, "u", &p->errors);
		else if (streq(name, "PowerDownFraction")) {
			r = read_variant(m, "d", &p->pdf);
			p->have_pdf = r > 0;
		} else if (streq(name, "ModelledPowerMilliwatt")) {
			r = read_variant(m, "d", &p->power_mw);
			p->have_power = r > 0;
		} else if (streq(name, "Policy")) {
			r = sd_bus_message_enter_container(m, 'v', "a{ss}");
			if (r >= 0)
				r = read_policy(m, &p->policy, &p->n_policy);
			if (r >= 0)
				r = sd_bus_message_exit_container(m);
		} else
			r = sd_bus_message_skip(m, "v");
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(m);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

static int get_props(sd_bus *bus, struct props *p)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r, code = EXIT_OK;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.Properties",
			       "GetAll", &e, &reply, "s", BUS_IFACE);
	if (r < 0) {
		code = report("reading the properties", &e, r);
		goto out;
	}
	r = parse_props(reply, p);
	if (r < 0) {
		msg("reading the properties: unexpected reply: %s", strerror(-r));
		code = EXIT_FAIL;
	}
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	return code;
}

/* ---- regions --------------------------------------------------------- */

struct region {
	uint32_t id;
	uint64_t start_pfn, pages;
	char *state, *zones, *last_action, *role;
	uint64_t free, anon, file, unmovable, parked;
};

static void regions_free(struct region *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].state);
		free(v[i].zones);
		free(v[i].last_action);
		free(v[i].role);
	}
	free(v);
}

static int read_region(sd_bus_message *m, struct region *g)
{
	const char *state, *zones, *action, *role;
	int r;

	r = sd_bus_message_read(m, REGION_SIG, &g->id, &g->start_pfn, &g->pages, &state,
				&zones, &g->free, &g->anon, &g->file, &g->unmovable,
				&g->parked, &action, &role);
	if (r <= 0)
		return r;
	g->state = strdup(state);
	g->zones = strdup(zones);
	g->last_action = strdup(action);
	g->role = strdup(role);
	if (!g->state || !g->zones || !g->last_action || !g->role)
		return -ENOMEM;
	return 1;
}

static int region_cmp(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every region, sorted by id (the daemon sends them in order anyway). */
static int list_regions(sd_bus *bus, struct region **ret, size_t *n)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct region *v = NULL;
	size_t count = 0;
	int r, code = EXIT_OK;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_IFACE, "ListRegions", &e,
			       &reply, "");
	if (r < 0) {
		code = report("listing the regions", &e, r);
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', REGION_SIG);
	while (r >= 0) {
		struct region *a = realloc(v, (count + 1) * sizeof(*v));

		if (!a) {
			r = -ENOMEM;
			break;
		}
		v = a;
		memset(&v[count], 0, sizeof(v[count]));
		r = read_region(reply, &v[count]);
		if (r <= 0) {
			/* frees what a failed read_region() left behind */
			free(v[count].state);
			free(v[count].zones);
			free(v[count].last_action);
			free(v[count].role);
			break;
		}
		count++;
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	if (r >= 0 && count > 1)
		qsort(v, count, sizeof(*v), region_cmp);
	if (r < 0) {
		msg("listing the regions: unexpected reply: %s", strerror(-r));
		code = EXIT_FAIL;
		regions_free(v, count);
		v = NULL;
		count = 0;
	}
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	*ret = v;
	*n = count;
	return code;
}

enum col_id {
	COL_ID, COL_RANGE, COL_SIZE, COL_STATE, COL_ZONES, COL_FREE, COL_ANON,
	COL_FILE, COL_UNMOVABLE, COL_PARKED, COL_ROLE, COL_ACTION, N_COLS
};

static const struct coldesc {
	const char *name;
	double whint;
	int flags;
	int json_type;
	bool by_default;
} cols[N_COLS] = {
	[COL_ID] = { "ID", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_RANGE] = { "RANGE", 0.3, 0, SCOLS_JSON_STRING, true },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, false },
	[COL_STATE] = { "STATE", 6, 0, SCOLS_JSON_STRING, true },
	[COL_ZONES] = { "ZONES", 5, 0, SCOLS_JSON_STRING, true },
	[COL_FREE] = { "FREE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_ANON] = { "ANON", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_FILE] = { "FILE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_UNMOVABLE] = { "UNMOVABLE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_PARKED] = { "PARKED", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_ROLE] = { "PLAN", 6, 0, SCOLS_JSON_STRING, true },
	[COL_ACTION] = { "ACTION", 8, 0, SCOLS_JSON_STRING, true },
};

/* -o LIST: fills @ids, returns the count or -1 (message printed). */
static int parse_columns(const char *list, enum col_id *ids)
{
	int n = 0;
	const char *p = list;

	if (!*list) {
		usage_error("-o needs a list of columns");
		return -1;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;

		for (int c = 0; c < N_COLS; c++)
			if (strlen(cols[c].name) == len && !strncasecmp(p, cols[c].name, len))
				found = c;
		if (found < 0) {
			usage_error("unknown column '%.*s'", (int)len, p);
			return -1;
		}
		if (n == 64) {
			usage_error("too many columns");
			return -1;
		}
		ids[n++] = (enum col_id)found;
		p += len;
		if (*p == ',')
			p++;
	}
	return n;
}

/* A page count as a cell: human size, bytes in JSON, "-"/null if unknown. */
static int set_pages(struct libscols_line *ln, size_t i, uint64_t pages)
{
	char buf[32];

	if (pages == UNSCANNED)
		return scols_line_set_data(ln, i, arg_json ? NULL : "-");
	if (arg_json)
		snprintf(buf, sizeof(buf), "%" PRIu64, pages * PAGE_BYTES);
	else
		size_str(buf, sizeof(buf), pages * PAGE_BYTES);
	return scols_line_set_data(ln, i, buf);
}

static int cmd_regions(void)
{
	enum col_id ids[64];
	int n_ids = 0, code, r = 0;
	struct libscols_table *tb = NULL;
	struct region *v = NULL;
	size_t n = 0;
	sd_bus *bus = NULL;

	if (arg_output) {
		n_ids = parse_columns(arg_output, ids);
		if (n_ids < 0)
			return EXIT_USAGE;
	} else {
		for (int c = 0; c < N_COLS; c++)
			if (cols[c].by_default)
				ids[n_ids++] = (enum col_id)c;
	}

	code = connect_or_report(&bus);
	if (code)
		return code;
	code = list_regions(bus, &v, &n);
	if (code)
		goto out;

	tb = scols_new_table();
	if (!tb) {
		r = -ENOMEM;
		goto fail;
	}
	if (arg_json) {
		scols_table_enable_json(tb, 1);
		scols_table_set_name(tb, "regions");
	}
	scols_table_enable_raw(tb, arg_raw);
	scols_table_enable_noheadings(tb, arg_no_legend);
	for (int i = 0; i < n_ids; i++) {
		const struct coldesc *d = &cols[ids[i]];
		struct libscols_column *cl = scols_table_new_column(tb, d->name, d->whint, d->flags);

		if (!cl) {
			r = -ENOMEM;
			goto fail;
		}
		if (arg_json)
			scols_column_set_json_type(cl, d->json_type);
	}
	for (size_t k = 0; k < n; k++) {
		const struct region *g = &v[k];
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		char buf[64];

		if (!ln) {
			r = -ENOMEM;
			goto fail;
		}
		for (int i = 0; i < n_ids && r >= 0; i++) {
			switch (ids[i]) {
			case COL_ID:
				snprintf(buf, sizeof(buf), "%" PRIu32, g->id);
				r = scols_line_set_data(ln, i, buf);
				break;
			case COL_RANGE:
				snprintf(buf, sizeof(buf), "0x%016" PRIx64 "-0x%016" PRIx64,
					 g->start_pfn * PAGE_BYTES,
					 (g->start_pfn + g->pages) * PAGE_BYTES - (g->pages ? 1 : 0));
				r = scols_line_set_data(ln, i, buf);
				break;
			case COL_SIZE:
				r = set_pages(ln, i, g->pages);
				break;
			case COL_STATE:
				r = scols_line_set_data(ln, i, g->state);
				break;
			case COL_ZONES:
				r = scols_line_set_data(ln, i, g->zones);
				break;
			case COL_FREE:
				r = set_pages(ln, i, g->free);
				break;
			case COL_ANON:
				r = set_pages(ln, i, g->anon);
				break;
			case COL_FILE:
				r = set_pages(ln, i, g->file);
				break;
			case COL_UNMOVABLE:
				r = set_pages(ln, i, g->unmovable);
				break;
			case COL_PARKED:
				r = set_pages(ln, i, g->parked);
				break;
			case COL_ROLE:
				r = scols_line_set_data(ln, i, g->role);
				break;
			case COL_ACTION:
				r = scols_line_set_data(ln, i, g->last_action);
				break;
			case N_COLS:
				break;
			}
		}
		if (r < 0)
			goto fail;
	}
	pager_open();
	r = scols_print_table(tb);
	if (r < 0)
		goto fail;
	goto out;
fail:
	msg("printing the table: %s", strerror(-r));
	code = EXIT_FAIL;
out:
	scols_unref_table(tb);
	regions_free(v, n);
	sd_bus_flush_close_unref(bus);
	return code;
}

/* ---- JSON -------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_pages(const char *name, uint64_t pages, bool comma)
{
	printf("      \"%s\": ", name);
	if (pages == UNSCANNED)
		printf("null");
	else
		printf("%" PRIu64, pages * PAGE_BYTES);
	printf("%s\n", comma ? "," : "");
}

/* status --json: the properties, the policy and every region; sizes in
 * bytes.  The numbers an operator of many hosts collects. */
static void print_status_json(const struct props *p, const struct region *v, size_t n)
{
	unsigned empty = 0, in_use = 0;

	for (size_t i = 0; i < n; i++) {
		if (streq(v[i].state, "active") && v[i].free >= v[i].pages)
			empty++;
		else if (streq(v[i].state, "active"))
			in_use++;
	}
	printf("{\n  \"state\": ");
	json_str(p->state ? p->state : "");
	printf(",\n  \"backend\": ");
	json_str(p->backend ? p->backend : "");
	printf(",\n  \"backend_missing\": ");
	json_str(p->backend_missing ? p->backend_missing : "");
	printf(",\n  \"dry_run\": %s,\n", p->dry_run > 0 ? "true" : "false");
	printf("  \"page_size\": %" PRIu64 ",\n", page_bytes);
	printf("  \"region_size\": %" PRIu64 ",\n", p->region_size);
	printf("  \"region_count\": %" PRIu32 ",\n", p->region_count);
	printf("  \"regions_in_use\": %u,\n  \"regions_empty\": %u,\n", in_use, empty);
	printf("  \"regions_parked\": %" PRIu32 ",\n", p->parked);
	printf("  \"regions_vacated\": %" PRIu32 ",\n", p->vacated);
	printf("  \"regions_released\": %" PRIu32 ",\n", p->released);
	printf("  \"pages_migrated\": %" PRIu64 ",\n", p->pages_migrated);
	printf("  \"pages_dropped\": %" PRIu64 ",\n", p->pages_dropped);
	printf("  \"errors\": %" PRIu32 ",\n", p->errors);
	if (p->have_pdf)
		printf("  \"power_down_fraction\": %.6f,\n", p->pdf);
	else
		printf("  \"power_down_fraction\": null,\n");
	if (p->have_power)
		printf("  \"modelled_power_milliwatt\": %.3f,\n", p->power_mw);
	else
		printf("  \"modelled_power_milliwatt\": null,\n");
	printf("  \"policy\": {");
	for (size_t i = 0; i < p->n_policy; i++) {
		printf("%s\n    ", i ? "," : "");
		json_str(p->policy[i].key);
		printf(": ");
		json_str(p->policy[i].value);
	}
	printf("%s},\n  \"regions\": [", p->n_policy ? "\n  " : "");
	for (size_t i = 0; i < n; i++) {
		const struct region *g = &v[i];

		printf("%s\n    {\n      \"id\": %" PRIu32 ",\n", i ? "," : "", g->id);
		printf("      \"start\": %" PRIu64 ",\n", g->start_pfn * PAGE_BYTES);
		printf("      \"size\": %" PRIu64 ",\n      \"state\": ", g->pages * PAGE_BYTES);
		json_str(g->state);
		printf(",\n      \"zones\": ");
		json_str(g->zones);
		printf(",\n");
		json_pages("free", g->free, true);
		json_pages("anon", g->anon, true);
		json_pages("file", g->file, true);
		json_pages("unmovable", g->unmovable, true);
		json_pages("parked", g->parked, true);
		printf("      \"plan\": ");
		json_str(g->role);
		printf(",\n      \"action\": ");
		json_str(g->last_action);
		printf("\n    }");
	}
	printf("%s]\n}\n", n ? "\n  " : "");
}

/* ---- status ---------------------------------------------------------- */

/* The policy grouped by section, wrapped, in the order the daemon sends it
 * (that of regionpmd.conf(5)). */
static void print_policy(const struct props *p)
{
	const char *indent = "                     ";
	char section[64] = "";
	size_t col = 0;

	if (!p->n_policy) {
		printf("Policy:              (none)\n");
		return;
	}
	for (size_t i = 0; i < p->n_policy; i++) {
		const char *key = p->policy[i].key, *val = p->policy[i].value;
		const char *dot = strchr(key, '.');
		char sec[64];
		size_t len;

		snprintf(sec, sizeof(sec), "%.*s", dot ? (int)(dot - key) : 0, key);
		if (dot)
			key = dot + 1;
		len = strlen(key) + 1 + strlen(*val ? val : "\"\"");
		if (!i || strcmp(sec, section)) {
			printf("%s%s[%s] ", !i ? "Policy:              " : "\n",
			       !i ? "" : indent, sec);
			col = strlen(indent) + strlen(sec) + 3;
			snprintf(section, sizeof(section), "%s", sec);
		} else if (col + 1 + len > 100) {
			printf("\n%s  ", indent);
			col = strlen(indent) + 2;
		} else {
			putchar(' ');
			col++;
		}
		printf("%s=%s", key, *val ? val : "\"\"");
		col += len;
	}
	putchar('\n');
}

static char region_char(const struct region *g)
{
	if (streq(g->state, "parked"))
		return 'P';
	if (streq(g->state, "busy"))
		return '*';
	if (streq(g->state, "active"))
		return g->free >= g->pages ? '.' : '#';
	return '?';
}

#define MAP_WIDTH 64

/* @v sorted by id (list_regions() sorts). */
static void print_map(const struct region *v, size_t n)
{
	bool blanks = false, unknown = false, first = true;
	size_t k = 0;

	if (!n) {
		printf("Map:                 (no regions)\n");
		return;
	}
	while (k < n) {
		uint64_t row = v[k].id / MAP_WIDTH * MAP_WIDTH;	/* rows without memory are skipped */
		char line[MAP_WIDTH + 1];
		size_t last = 0;

		memset(line, ' ', sizeof(line));
		for (; k < n && v[k].id < row + MAP_WIDTH; k++) {
			size_t pos = (size_t)(v[k].id - row);

			line[pos] = region_char(&v[k]);
			unknown |= line[pos] == '?';
			last = pos;
		}
		line[last + 1] = '\0';
		blanks |= strchr(line, ' ') != NULL;
		printf("%-15s%4" PRIu64 ": %s\n", first ? "Map:" : "", row, line);
		first = false;
	}
	printf("%21s legend: # in use  . empty  P parked  * busy%s%s\n", "",
	       blanks ? "  (blank: no memory)" : "", unknown ? "  ? other" : "");
}

static int cmd_status(void)
{
	struct props p = { .dry_run = -1 };
	struct region *v = NULL;
	size_t n = 0;
	sd_bus *bus = NULL;
	char a[32], b[32];
	int code;

	code = connect_or_report(&bus);
	if (code)
		return code;
	code = get_props(bus, &p);
	if (code)
		goto out;
	code = list_regions(bus, &v, &n);
	if (code)
		goto out;

	pager_open();
	if (arg_json) {
		print_status_json(&p, v, n);
		goto out;
	}
	printf("State:               %s\n", p.state ? p.state : "?");
	printf("Backend:             %s\n", p.backend ? p.backend : "?");
	if (p.backend_missing && *p.backend_missing)
		printf("  cannot:            %s\n", p.backend_missing);
	printf("Dry run:             %s\n", p.dry_run < 0 ? "?" : p.dry_run ? "yes" : "no");
	printf("Regions:             %" PRIu32 " with memory, %s each (%s)\n", p.region_count,
	       size_str(a, sizeof(a), p.region_size),
	       size_str(b, sizeof(b), p.region_size * p.region_count));
	printf("Totals:              %" PRIu64 " pages migrated (%s), %" PRIu64 " dropped (%s)\n",
	       p.pages_migrated, size_str(a, sizeof(a), p.pages_migrated * PAGE_BYTES),
	       p.pages_dropped, size_str(b, sizeof(b), p.pages_dropped * PAGE_BYTES));
	printf("                     %" PRIu32 " regions vacated, %" PRIu32 " parked now, %" PRIu32
	       " released; %" PRIu32 " failed kernel requests\n", p.vacated, p.parked, p.released,
	       p.errors);
	if (p.have_pdf)
		printf("Power-down fraction: %.3f (model)\n", p.pdf);
	else
		printf("Power-down fraction: - (model)\n");
	if (p.have_power)
		printf("DRAM power:          %.1f mW (model)\n", p.power_mw);
	else
		printf("DRAM power:          - (model)\n");
	print_policy(&p);
	print_map(v, n);
out:
	props_free(&p);
	regions_free(v, n);
	sd_bus_flush_close_unref(bus);
	return code;
}

/* ---- vacate / park / unpark / set ----------------------------------- */

/* Strict decimal region id: no sign, no blanks, fits in 32 bits. */
static int parse_id(const char *s, uint32_t *id)
{
	unsigned long long v;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -ERANGE;
	*id = (uint32_t)v;
	return 0;
}

static int call_simple(const char *method, const char *what, uint64_t timeout_usec,
		       sd_bus_message **reply, const char *sig, ...)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	sd_bus *bus = NULL;
	va_list ap;
	int r, code;

	code = connect_or_report(&bus);
	if (code)
		return code;
	r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_IFACE, method);
	if (r >= 0) {
		va_start(ap, sig);
		r = sd_bus_message_appendv(m, sig, ap);
		va_end(ap);
	}
	if (r >= 0)
		r = sd_bus_call(bus, m, timeout_usec, &e, reply);
	code = r < 0 ? report(what, &e, r) : EXIT_OK;
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_flush_close_unref(bus);
	return code;
}

static int cmd_region_op(const char *verb, const char *arg)
{
	sd_bus_message *reply = NULL;
	char what[64];
	uint32_t id;
	int code;

	if (parse_id(arg, &id) < 0)
		return usage_error("invalid region id '%s': expected a decimal number", arg);
	snprintf(what, sizeof(what), "%s region %" PRIu32, verb, id);
	if (streq(verb, "vacate")) {
		uint64_t migrated = 0, dropped = 0, m, d;
		unsigned calls = 0;
		int r;

		/* One Vacate() moves at most BudgetPagesPerRegion= pages (the
		 * daemon's event loop is not held for a whole region): call
		 * again while pages move.  The bound only guards against a
		 * daemon that keeps reporting progress. */
		do {
			code = call_simple("Vacate", what, SLOW_CALL_USEC, &reply, "u", id);
			if (code)
				return code;
			r = sd_bus_message_read(reply, "tt", &m, &d);
			reply = sd_bus_message_unref(reply);
			if (r < 0) {
				msg("%s: unexpected reply: %s", what, strerror(-r));
				return EXIT_FAIL;
			}
			migrated += m;
			dropped += d;
		} while (m + d > 0 && ++calls < 4096);
		printf("region %" PRIu32 ": %" PRIu64 " pages migrated, %" PRIu64 " dropped\n",
		       id, migrated, dropped);
		return EXIT_OK;
	}
	code = call_simple(streq(verb, "park") ? "Park" : "Unpark", what, SLOW_CALL_USEC,
			   NULL, "u", id);
	return code;
}

/* pause, resume, reload: methods without arguments. */
static int cmd_simple(const char *verb)
{
	const char *method = streq(verb, "pause") ? "Pause" : streq(verb, "resume") ? "Resume" :
			     "Reload";

	/* Reload replies once the new configuration is in effect */
	return call_simple(method, verb, SLOW_CALL_USEC, NULL, "");
}

static int cmd_set(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *key;
	int code;

	if (!eq)
		return usage_error("expected KEY=VALUE, got '%s'", arg);
	if (eq == arg)
		return usage_error("missing key in '%s'", arg);
	key = strndup(arg, (size_t)(eq - arg));
	if (!key) {
		msg("out of memory");
		return EXIT_FAIL;
	}
	code = call_simple("SetPolicy", arg, 0, NULL, "ss", key, eq + 1);
	free(key);
	return code;
}

/* ---- monitor --------------------------------------------------------- */

static void stamp(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	printf("%s.%03ld ", buf, ts.tv_nsec / 1000000);
}

static int on_manager_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const char *member = sd_bus_message_get_member(m);
	const char *s, *t;
	uint64_t a, b;
	uint32_t id;

	(void)userdata;
	(void)ret_error;
	stamp();
	if (streq(member, "RegionVacated") &&
	    sd_bus_message_read(m, "utt", &id, &a, &b) > 0)
		printf("region %" PRIu32 " vacated: %" PRIu64 " pages migrated, %" PRIu64
		       " dropped\n", id, a, b);
	else if (streq(member, "RegionParked") && sd_bus_message_read(m, "u", &id) > 0)
		printf("region %" PRIu32 " parked\n", id);
	else if (streq(member, "RegionReleased") && sd_bus_message_read(m, "us", &id, &s) > 0)
		printf("region %" PRIu32 " released (%s)\n", id, s);
	else if (streq(member, "PolicyChanged") && sd_bus_message_read(m, "ss", &s, &t) > 0)
		printf("policy %s=%s\n", s, t);
	else
		printf("signal %s (%s)\n", member ? member : "?",
		       sd_bus_message_get_signature(m, true));
	fflush(stdout);
	return 0;
}

/* "Name=value" for one changed property; unknown types by signature. */
static int print_variant(sd_bus_message *m)
{
	const char *contents;
	char type;
	int r;

	r = sd_bus_message_peek_type(m, &type, &contents);
	if (r < 0)
		return r;
	if (type != 'v')
		return -EBADMSG;
	if (strlen(contents) == 1) {
		union {
			const char *s;
			int b;
			uint32_t u;
			uint64_t t;
			double d;
			int32_t i;
			int64_t x;
		} v;

		r = sd_bus_message_enter_container(m, 'v', contents);
		if (r < 0)
			return r;
		r = sd_bus_message_read_basic(m, contents[0], &v);
		if (r < 0)
			return r;
		switch (contents[0]) {
		case 's': case 'o': case 'g': printf("%s", v.s); break;
		case 'b': printf("%s", v.b ? "yes" : "no"); break;
		case 'u': printf("%" PRIu32, v.u); break;
		case 't': printf("%" PRIu64, v.t); break;
		case 'i': printf("%" PRIi32, v.i); break;
		case 'x': printf("%" PRIi64, v.x); break;
		case 'd': printf("%g", v.d); break;
		default: printf("(%s)", contents); break;
		}
		return sd_bus_message_exit_container(m);
	}
	if (streq(contents, "a{ss}")) {
		struct kv *kv = NULL;
		size_t n = 0;

		r = sd_bus_message_enter_container(m, 'v', contents);
		if (r >= 0)
			r = read_policy(m, &kv, &n);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
		printf("(%zu keys)", n);
		for (size_t i = 0; i < n; i++) {
			free(kv[i].key);
			free(kv[i].value);
		}
		free(kv);
		return r;
	}
	printf("(%s)", contents);
	return sd_bus_message_skip(m, "v");
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const char *iface, *name;
	int r;

	(void)userdata;
	(void)ret_error;
	if (sd_bus_message_read(m, "s", &iface) <= 0 || !streq(iface, BUS_IFACE))
		return 0;
	stamp();
	printf("properties");
	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		r = sd_bus_message_read_basic(m, 's', &name);
		if (r < 0)
			break;
		printf(" %s=", name);
		r = print_variant(m);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(m);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "s");
	while (r >= 0 && (r = sd_bus_message_read_basic(m, 's', &name)) > 0)
		printf(" %s=(changed)", name);
	if (r < 0)
		printf(" (malformed: %s)", strerror(-r));
	putchar('\n');
	fflush(stdout);
	return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const char *name, *old, *new;

	(void)userdata;
	(void)ret_error;
	if (sd_bus_message_read(m, "sss", &name, &old, &new) <= 0 || !streq(name, BUS_NAME))
		return 0;
	stamp();
	if (*new)
		printf("regionpmd is on the bus (%s)\n", new);
	else
		printf("regionpmd left the bus\n");
	fflush(stdout);
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)si;
	(void)userdata;
	return sd_event_exit(sd_event_source_get_event(s), EXIT_OK);
}

static int cmd_monitor(void)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_event *ev = NULL;
	sd_bus *bus = NULL;
	char *state = NULL;
	sigset_t mask;
	int r, code;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	code = connect_or_report(&bus);
	if (code)
		return code;
	r = sd_event_default(&ev);
	if (r >= 0)
		r = sd_event_add_signal(ev, NULL, SIGINT, on_signal, NULL);
	if (r >= 0)
		r = sd_event_add_signal(ev, NULL, SIGTERM, on_signal, NULL);
	if (r >= 0)
		r = sd_bus_attach_event(bus, ev, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0) {
		msg("setting up the event loop: %s", strerror(-r));
		code = EXIT_FAIL;
		goto out;
	}
	/* subscribe first, then look: nothing between the two is missed */
	r = sd_bus_match_signal(bus, NULL, BUS_NAME, BUS_PATH, BUS_IFACE, NULL,
				on_manager_signal, NULL);
	if (r >= 0)
		r = sd_bus_match_signal(bus, NULL, BUS_NAME, BUS_PATH,
					"org.freedesktop.DBus.Properties", "PropertiesChanged",
					on_properties_changed, NULL);
	if (r >= 0)
		r = sd_bus_add_match(bus, NULL,
				     "type='signal',sender='org.freedesktop.DBus',"
				     "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
				     "member='NameOwnerChanged',arg0='" BUS_NAME "'",
				     on_owner_changed, NULL);
	if (r < 0) {
		code = report("subscribing to the signals", &e, r);
		goto out;
	}
	r = sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_IFACE, "State", &e, &state);
	if (r < 0) {
		code = report("reading State", &e, r);
		goto out;
	}
	stamp();
	printf("monitoring regionpmd (state %s), Ctrl-C to stop\n", state);
	sd_bus_set_exit_on_disconnect(bus, true);
	/* SIGINT/SIGTERM exit with 0; sd-bus exits with EXIT_FAILURE on disconnect */
	r = sd_event_loop(ev);
	if (r < 0) {
		msg("event loop: %s", strerror(-r));
		code = EXIT_FAIL;
	} else if (r != EXIT_OK) {
		msg("regionpmd is not reachable: connection to the system bus lost");
		code = EXIT_UNREACHABLE;
	} else {
		code = EXIT_OK;
	}
out:
	free(state);
	sd_bus_error_free(&e);
	sd_bus_flush_close_unref(bus);
	sd_event_unref(ev);
	return code;
}

/* ---- check ----------------------------------------------------------- */

struct family_probe {
	uint16_t family;
	uint32_t grp;
};

static int ctrl_cb(const struct nlmsghdr *nlh, void *data)
{
	struct family_probe *f = data;

	return rpm_parse_ctrl(nlh, REGIONPM_MCGRP_EVENTS, &f->family, &f->grp) < 0 ?
	       MNL_CB_ERROR : MNL_CB_OK;
}

/* CTRL_CMD_GETFAMILY "regionpm" on a socket of our own; needs no privilege. */
static int probe_family(struct family_probe *f)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;
	unsigned portid, seq = (unsigned)time(NULL);
	int r;

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	memset(buf, 0, 256);		/* attribute padding goes out as is */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, REGIONPM_FAMILY_NAME);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = -errno;
		goto out;
	}
	do {
		ssize_t len = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (len < 0) {
			r = -errno;
			goto out;
		}
		r = mnl_cb_run(buf, (size_t)len, seq, portid, ctrl_cb, f);
	} while (r > 0);
	r = r < 0 ? -errno : 0;
	if (!r && !f->family)
		r = -ENOENT;
out:
	mnl_socket_close(nl);
	return r;
}

static void read_param(const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/regionpm/parameters/%s", name);
	f = fopen(path, "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	else
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* Effective capability bit @cap of this process, from /proc/self/status. */
static bool have_cap(int cap)
{
	char line[256];
	bool ret = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			ret = (v >> cap) & 1;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* What a missing item means: regionpmd cannot run, runs degraded, or
 * (the daemon itself) only that the other commands will not work now. */
enum item_class { ITEM_REQUIRED, ITEM_DEGRADES, ITEM_DAEMON };

struct check_state {
	unsigned missing[3];
};

static void item(struct check_state *c, bool ok, enum item_class cls, const char *what,
		 const char *detail, const char *loss)
{
	printf("%-8s %s%s%s\n", ok ? "OK" : "MISSING", what, detail && *detail ? ": " : "",
	       detail ? detail : "");
	if (!ok) {
		c->missing[cls]++;
		if (loss)
			printf("%-8s without it: %s\n", "", loss);
	}
}

/* A file the daemon opens as root: present, and readable if we can tell. */
static void check_file(struct check_state *c, const char *what, const char *path,
		       int flags, const char *loss)
{
	char detail[512];
	struct stat st;
	bool ok = false;

	if (stat(path, &st) < 0) {
		snprintf(detail, sizeof(detail), "%s: %s", path, strerror(errno));
	} else {
		int fd = open(path, flags | O_CLOEXEC);

		if (fd >= 0) {
			char b[64];
			/* PSI can exist and still fail to read (psi=0 at boot) */
			if (read(fd, b, sizeof(b)) < 0) {
				snprintf(detail, sizeof(detail), "%s: %s", path, strerror(errno));
			} else {
				snprintf(detail, sizeof(detail), "%s", path);
				ok = true;
			}
			close(fd);
		} else if (errno == EACCES || errno == EPERM) {
			snprintf(detail, sizeof(detail),
				 "%s (present; not accessible to this user, the daemon runs as root)",
				 path);
			ok = true;
		} else {
			snprintf(detail, sizeof(detail), "%s: %s", path, strerror(errno));
		}
	}
	item(c, ok, ITEM_DEGRADES, what, detail, loss);
}

static void check_daemon(struct check_state *c)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus *bus = NULL;
	char detail[512];
	const char *state = NULL;
	const char *loss = "status, regions, vacate, park, unpark, set and monitor do not "
			   "work (not required by this check)";
	int r;

	r = bus_connect(&bus);
	if (r < 0) {
		snprintf(detail, sizeof(detail), "no system bus: %s", strerror(-r));
		goto out;
	}
	/* ask, but do not start it through bus activation */
	r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH,
					   "org.freedesktop.DBus.Properties", "Get");
	if (r >= 0)
		r = sd_bus_message_set_auto_start(m, false);
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", BUS_IFACE, "State");
	if (r >= 0)
		r = sd_bus_call(bus, m, 5 * 1000000ULL, &e, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "v", "s", &state);
	if (r < 0) {
		snprintf(detail, sizeof(detail), "%s not answering: %s", BUS_NAME,
			 sd_bus_error_is_set(&e) ? e.message : strerror(-r));
		goto out;
	}
	snprintf(detail, sizeof(detail), "%s answers, state %s", BUS_NAME, state);
out:
	item(c, r >= 0, ITEM_DAEMON, "regionpmd on the bus", detail, loss);
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
}

/*
 * ZONE_MOVABLE (movablecore=, memory_hotplug.online_policy=auto-movable,
 * virtio-mem, CXL): no unmovable kernel allocation lands there, so every
 * region wholly in it can be emptied; the rest of memory sets the ceiling.
 */
static void check_movable(void)
{
	bool bottom_up = false, boot_movable = false;
	char cmdline[4096];	/* COMMAND_LINE_SIZE is at most 4096 */
	struct rpm_zoneinfo z;
	int r = procfs_read_zoneinfo(NULL, &z);

	if (r < 0) {
		printf("%-8s movable memory: /proc/zoneinfo: %s\n", "INFO", strerror(-r));
		return;
	}
	if (!z.movable_pages) {
		printf("%-8s movable memory: no ZONE_MOVABLE; slab and page tables may land in "
		       "any region (movablecore= or memory_hotplug.online_policy=auto-movable "
		       "make a part of memory that can always be emptied)\n", "INFO");
		return;
	}
	printf("%-8s movable memory: %" PRIu64 " MiB of %" PRIu64 " MiB (%" PRIu64
	       " %%) in ZONE_MOVABLE: regions wholly in it can always be emptied, the "
	       "kernel's unmovable memory lives in the other %" PRIu64 " MiB\n", "INFO",
	       z.movable_pages * PAGE_BYTES >> 20, z.managed_pages * PAGE_BYTES >> 20,
	       z.movable_pages * 100 / z.managed_pages,
	       (z.managed_pages - z.movable_pages) * PAGE_BYTES >> 20);
	/*
	 * memblock is top-down: the memory map (1.6 % of memory) lies at the
	 * top of the node, in ZONE_MOVABLE, where it pins a region for good
	 * unless the patched kernel was booted with regionpm.bottom_up=1.
	 * Only where ZONE_MOVABLE is boot memory (movablecore=, kernelcore=):
	 * hotplugged memory (virtio-mem, CXL, auto-movable) gets its memory
	 * map from memory that was there before.
	 */
	if (procfs_read_file(NULL, RPM_PROC_CMDLINE, cmdline, sizeof(cmdline)) >= 0) {
		boot_movable = procfs_cmdline_has(cmdline, "movablecore") ||
			       procfs_cmdline_has(cmdline, "kernelcore");
		bottom_up = procfs_cmdline_bool(cmdline, "regionpm.bottom_up");
	}
	if (boot_movable && !bottom_up &&
	    access("/sys/module/regionpm/parameters/bias", F_OK) == 0)
		printf("%-8s boot memory: booted without regionpm.bottom_up=1, so the memory map "
		       "and other boot allocations lie at the top of ZONE_MOVABLE and keep a "
		       "region there from ever being emptied (see regionpm.rst)\n", "INFO");
}

/*
 * memory_hotplug.memmap_on_memory: each memory block hotplugged (ACPI
 * DIMMs, dax/kmem for CXL) holds its own memory map, 1/64 of it, at its
 * start.  Those pages are in use for as long as the block is online, so
 * the kernel helper never parks or holds a region of it.  Offlining (the
 * stock backend) is not affected: the memory map of an offline block is
 * never read, and it is written anew when the block comes back.
 * virtio-mem does not place its memory map so.
 */
static void check_memmap_on_memory(bool family)
{
	char buf[16] = "";
	FILE *f = fopen("/sys/module/memory_hotplug/parameters/memmap_on_memory", "re");

	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!family ||
	    (buf[0] != 'Y' && buf[0] != 'y' && buf[0] != '1' && strncmp(buf, "force", 5)))
		return;
	printf("%-8s hotplugged memory: memory_hotplug.memmap_on_memory is on, so every memory "
	       "block hotplugged (ACPI DIMMs, dax/kmem) holds its own memory map and regionpm "
	       "never parks a region of it (boot with memory_hotplug.memmap_on_memory=0, the "
	       "default, to put the memory map in memory that was there before)\n", "INFO");
}

/*
 * Without the family: what regionpmd's stock backend needs (memory blocks,
 * offline support, /proc/kpageflags) and what it uses if there (DAMON).
 */
static bool check_stock(char *detail, size_t len)
{
	unsigned blocks = 0, offline = 0;
	char buf[64] = "";
	struct dirent *de;
	struct stat st;
	bool damon;
	FILE *f;
	DIR *d;

	f = fopen("/sys/devices/system/memory/block_size_bytes", "re");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		snprintf(detail, len, "no generic netlink family \"%s\" and no memory blocks "
			 "(/sys/devices/system/memory: CONFIG_MEMORY_HOTPLUG) for the stock backend",
			 REGIONPM_FAMILY_NAME);
		return false;
	}
	fclose(f);
	d = opendir("/sys/devices/system/memory");
	while (d && (de = readdir(d))) {
		char path[300], state[32] = "";

		if (strncmp(de->d_name, "memory", 6) || !de->d_name[6])
			continue;
		blocks++;
		snprintf(path, sizeof(path), "/sys/devices/system/memory/%s/state", de->d_name);
		f = fopen(path, "re");
		if (f) {
			if (fgets(state, sizeof(state), f) && !strncmp(state, "offline", 7))
				offline++;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	damon = stat("/sys/kernel/mm/damon/admin/kdamonds", &st) == 0;
	if (stat("/proc/kpageflags", &st) < 0) {
		snprintf(detail, len, "no generic netlink family \"%s\"; stock backend: no "
			 "/proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)", REGIONPM_FAMILY_NAME);
		return false;
	}
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(detail, len, "no generic netlink family \"%s\": stock backend, %u memory "
		 "blocks of 0x%s bytes (%u offline), /proc/kpageflags, DAMON sysfs %s",
		 REGIONPM_FAMILY_NAME, blocks, buf, offline,
		 damon ? "present" : "missing (idle page cache is not dropped)");
	return true;
}

static int cmd_check(void)
{
	static const char *const params[] = { "enable", "track", "region_size", "bias", "frontier",
					      "bias_headroom_pct", "event_interval_ms" };
	struct check_state c = { 0 };
	struct family_probe f = { 0 };
	char detail[512], buf[64];
	size_t len = 0;
	bool root = geteuid() == 0;
	bool caps = have_cap(21 /* CAP_SYS_ADMIN */) && have_cap(12 /* CAP_NET_ADMIN */);
	bool stock_ok, family;
	struct stat st;
	int r;

	r = probe_family(&f);
	family = r == 0;
	if (r == 0) {
		snprintf(detail, sizeof(detail), "generic netlink family \"%s\" (id %u, %s group %u)",
			 REGIONPM_FAMILY_NAME, f.family, REGIONPM_MCGRP_EVENTS, f.grp);
		item(&c, true, ITEM_REQUIRED, "kernel support", detail, NULL);
	} else {
		char enable[16];

		read_param("enable", enable, sizeof(enable));
		if (r == -ENOENT && stat("/sys/module/regionpm", &st) < 0)
			snprintf(detail, sizeof(detail),
				 "no generic netlink family \"%s\": kernel built without CONFIG_REGIONPM",
				 REGIONPM_FAMILY_NAME);
		else if (r == -ENOENT && (enable[0] == 'N' || enable[0] == '0'))
			snprintf(detail, sizeof(detail),
				 "no generic netlink family \"%s\": disabled at boot (regionpm.enable=0)",
				 REGIONPM_FAMILY_NAME);
		else
			snprintf(detail, sizeof(detail), "generic netlink family \"%s\": %s",
				 REGIONPM_FAMILY_NAME, strerror(-r));
		stock_ok = check_stock(detail, sizeof(detail));
		item(&c, stock_ok, ITEM_REQUIRED, "kernel support", detail,
		     "regionpmd cannot run at all: it needs the regionpm family or, for "
		     "its stock backend, memory blocks that can go offline and "
		     "/proc/kpageflags");
		if (stock_ok)
			printf("%-8s backend: stock; cannot: exact occupancy (it scans "
			       "/proc/kpageflags), events, migrate without parking (parking = "
			       "offline), kernel release (it records what it offlined in "
			       "/run/regionpmd and onlines it on stop, crash and pressure), "
			       "bias\n", "");
	}
	if (stat("/sys/module/regionpm/parameters", &st) == 0) {
		for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			read_param(params[i], buf, sizeof(buf));
			len += (size_t)snprintf(detail + len, sizeof(detail) - len, "%s%s=%s",
						i ? " " : "", params[i], buf);
			if (len >= sizeof(detail))
				break;
		}
		printf("%-8s parameters: %s\n", "", detail);
	}

	check_file(&c, "PSI", "/proc/pressure/memory", O_RDONLY,
		   "no memory pressure trigger: the daemon neither slows down nor gives "
		   "parked regions back early under pressure, only when MemAvailable falls "
		   "below the headroom at its next pass (the kernel's shrinker still "
		   "takes them back)");
	check_file(&c, "idle page tracking", "/sys/kernel/mm/page_idle/bitmap", O_RDWR,
		   "idle page cache cannot be told from hot: clean page cache is migrated, "
		   "never dropped");
	check_file(&c, "page flags", "/proc/kpageflags", O_RDONLY,
		   "no idle sampling (it finds page cache by its flags) and no test for "
		   "protected cgroups' pages: page cache is migrated, never dropped");

	if (caps)
		snprintf(detail, sizeof(detail), "%s with CAP_SYS_ADMIN and CAP_NET_ADMIN",
			 root ? "root" : "not root, but");
	else
		snprintf(detail, sizeof(detail), "%s without CAP_SYS_ADMIN and CAP_NET_ADMIN",
			 root ? "root, but" : "not root,");
	item(&c, caps, ITEM_REQUIRED, "privileges", detail,
	     "regionpmd must run as root (the netlink family needs CAP_SYS_ADMIN and "
	     "CAP_NET_ADMIN); vacate, park, unpark and set need root too, and the checks "
	     "above could not open the files");

	check_daemon(&c);
	check_movable();
	check_memmap_on_memory(family);

	if (c.missing[ITEM_REQUIRED])
		printf("%u required item(s) missing: regionpmd cannot run here.\n",
		       c.missing[ITEM_REQUIRED]);
	else if (c.missing[ITEM_DEGRADES])
		printf("%u optional item(s) missing: regionpmd runs in a degraded mode.\n",
		       c.missing[ITEM_DEGRADES]);
	else
		printf("Everything regionpmd uses is present.\n");
	if (c.missing[ITEM_DAEMON])
		printf("regionpmd does not answer on the bus.\n");
	return c.missing[ITEM_REQUIRED] ? EXIT_MISSING : EXIT_OK;
}

/* ---- main ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	enum { OPT_NO_PAGER = 0x100 };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ "no-legend", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "no-pager", no_argument, NULL, OPT_NO_PAGER },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *verb;
	bool table_opts = false;
	long ps = sysconf(_SC_PAGESIZE);
	int c, nargs, code;

	page_bytes = ps > 0 ? (uint64_t)ps : 4096;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Jrno:bhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'J':
			arg_json = true;
			break;
		case 'r':
			arg_raw = table_opts = true;
			break;
		case 'n':
			arg_no_legend = table_opts = true;
			break;
		case 'o':
			arg_output = optarg;
			table_opts = true;
			break;
		case 'b':
			arg_bytes = true;
			break;
		case OPT_NO_PAGER:
			arg_no_pager = true;
			break;
		case 'h':
			help();
			return EXIT_OK;
		case 'V':
			printf("regionpmctl %s\n", RPM_VERSION);
			return EXIT_OK;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (startswith(argv[optind - 1], "--") || !optopt)
				return usage_error("unknown option '%s'", argv[optind - 1]);
			return usage_error("unknown option '-%c'", optopt);
		}
	}
	if (optind >= argc)
		return usage_error("missing command");
	verb = argv[optind];
	nargs = argc - optind - 1;

	if (table_opts && !streq(verb, "regions"))
		return usage_error("--raw, --no-legend and --output are options of 'regions'");
	if (arg_json && !streq(verb, "regions") && !streq(verb, "status"))
		return usage_error("--json is an option of 'regions' and 'status'");
	if (arg_bytes && !streq(verb, "regions") && !streq(verb, "status"))
		return usage_error("--bytes is an option of 'regions' and 'status'");
	if (arg_json && arg_raw)
		return usage_error("--json and --raw cannot be combined");

	if (streq(verb, "status") || streq(verb, "regions") || streq(verb, "monitor") ||
	    streq(verb, "check") || streq(verb, "pause") || streq(verb, "resume") ||
	    streq(verb, "reload")) {
		if (nargs > 0)
			return usage_error("'%s' takes no argument, got '%s'", verb, argv[optind + 1]);
		if (streq(verb, "status"))
			code = cmd_status();
		else if (streq(verb, "regions"))
			code = cmd_regions();
		else if (streq(verb, "monitor"))
			code = cmd_monitor();
		else if (streq(verb, "check"))
			code = cmd_check();
		else
			code = cmd_simple(verb);
		pager_close();
		return code;
	}
	if (streq(verb, "vacate") || streq(verb, "park") || streq(verb, "unpark") ||
	    streq(verb, "set")) {
		if (nargs < 1)
			return usage_error("'%s' needs %s", verb,
					   streq(verb, "set") ? "KEY=VALUE" : "a region ID");
		if (nargs > 1)
			return usage_error("'%s' takes one argument, got also '%s'", verb,
					   argv[optind + 2]);
		if (streq(verb, "set"))
			return cmd_set(argv[optind + 1]);
		return cmd_region_op(verb, argv[optind + 1]);
	}
	return usage_error("unknown command '%s'", verb);
}
