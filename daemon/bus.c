// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd's D-Bus API (org.regionpm1(5)): the sd-bus vtable, the property
 * getters, the method handlers, the signals, and the property change
 * announcements.
 *
 * Privilege, as in systemd-oomd: the bus policy (systemd/org.regionpm1.conf)
 * lets only root call the mutating methods, and sd-bus checks again itself:
 * they are not SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus asks dbus-daemon for the
 * caller's uid (GetConnectionCredentials, taken with SO_PEERCRED; no /proc)
 * and replies AccessDenied to anyone but root.  GetRegion is open to all but
 * scans pages only for a privileged caller, rate limited; everyone else gets
 * the daemon's cached view.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "bus.h"
#include "conf.h"
#include "genl.h"
#include "log.h"
#include "manager.h"
#include "power-model.h"

#define ERR_INVALID_REGION	RPM_BUS_ERR_INVALID_REGION
#define ERR_BUSY		RPM_BUS_ERR_BUSY
#define ERR_INVALID_POLICY	RPM_BUS_ERR_INVALID_POLICY
#define ERR_KERNEL		RPM_BUS_ERR_KERNEL
#define ERR_PAUSED		RPM_BUS_ERR_PAUSED

#define REGION_SIG		RPM_BUS_REGION_SIG
#define UNSCANNED		RPM_BUS_UNSCANNED
/* Protect.Cgroup= can hold RPM_MAX_PROTECTED paths of up to PATH_MAX bytes */
#define POLICY_VALUE_MAX	(RPM_MAX_PROTECTED * (PATH_MAX + 1))

/* Privileged GetRegion scans: at most SCAN_BURST per SCAN_WINDOW_USEC; past
 * that the caller gets the cached view, as an unprivileged one does.  A scan
 * reads every page of a region (up to 2 GiB) on the single event loop. */
#define SCAN_BURST		5
#define SCAN_WINDOW_USEC	1000000ULL

static const sd_bus_error_map rpm_bus_errors[] = {
	SD_BUS_ERROR_MAP(ERR_INVALID_REGION, ENOENT),
	SD_BUS_ERROR_MAP(ERR_BUSY, EBUSY),
	SD_BUS_ERROR_MAP(ERR_INVALID_POLICY, EINVAL),
	SD_BUS_ERROR_MAP(ERR_KERNEL, EIO),
	SD_BUS_ERROR_MAP(ERR_PAUSED, EAGAIN),
	SD_BUS_ERROR_MAP_END
};

/* What was last announced, so that only changes are sent. */
struct announced {
	char state[16];
	uint32_t region_count, vacated, parked, released, errors;
	uint64_t migrated, dropped;
	double pdf, power_mw;
};

struct rpm_bus {
	sd_bus *bus;
	sd_bus_slot *slot;
	struct manager *m;
	struct power_avg pdf;
	unsigned vacated;
	/* effective policy values as last announced, one per conf key */
	char **policy;
	size_t n_keys;
	struct announced last;
	usec_t_ scan_window;		/* start of the current rate limit window */
	unsigned scans_in_window;
	char *val;			/* POLICY_VALUE_MAX bytes for conf_get() */
};

static usec_t_ now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t_)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- values --------------------------------------------------------------- */

static const char *state_name(const struct manager *m)
{
	if (m->paused)
		return "paused";
	if (m->dry_run)
		return "dry-run";
	return "running";
}

static unsigned regions_parked(const struct manager *m)
{
	unsigned n = 0;

	for (size_t i = 0; i < m->n_regions; i++)
		n += m->regions[i].ours;
	return n;
}

/* Brings the time-weighted fraction up to now; returns the modelled power. */
static double power_update(struct rpm_bus *b, usec_t_ now)
{
	struct manager *m = b->m;
	double mw, frac;

	power_model_regions(m->regions, m->n_regions, m->page_size, &mw, &frac);
	power_avg_update(&b->pdf, now, frac);
	return mw;
}

static void snapshot(struct rpm_bus *b, struct announced *a)
{
	struct manager *m = b->m;
	usec_t_ now = now_usec();

	memset(a, 0, sizeof(*a));
	snprintf(a->state, sizeof(a->state), "%s", state_name(m));
	a->region_count = (uint32_t)m->n_regions;
	a->migrated = m->migrated;
	a->dropped = m->dropped;
	a->vacated = b->vacated;
	a->parked = regions_parked(m);
	a->released = m->unparks + m->released_by_kernel;
	a->errors = m->errors;
	a->power_mw = power_update(b, now);
	a->pdf = power_avg_mean(&b->pdf, now);
}

/* ---- property getters ----------------------------------------------------- */

static int prop_get(sd_bus *bus, const char *path, const char *iface, const char *property,
		    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	struct manager *m = b->m;
	struct announced a;

	(void)bus;
	(void)path;
	(void)iface;
	(void)error;
	snapshot(b, &a);
	if (!strcmp(property, "State"))
		return sd_bus_message_append(reply, "s", a.state);
	if (!strcmp(property, "Backend"))
		return sd_bus_message_append(reply, "s", backend_name(m->backend));
	if (!strcmp(property, "BackendMissing")) {
		char buf[256];

		return sd_bus_message_append(reply, "s", backend_missing(m->backend, buf,
									 sizeof(buf)));
	}
	if (!strcmp(property, "DryRun"))
		return sd_bus_message_append(reply, "b", (int)m->dry_run);
	if (!strcmp(property, "RegionCount"))
		return sd_bus_message_append(reply, "u", a.region_count);
	if (!strcmp(property, "RegionSize"))
		return sd_bus_message_append(reply, "t", m->info.region_size);
	if (!strcmp(property, "PagesMigrated"))
		return sd_bus_message_append(reply, "t", a.migrated);
	if (!strcmp(property, "PagesDropped"))
		return sd_bus_message_append(reply, "t", a.dropped);
	if (!strcmp(property, "RegionsVacated"))
		return sd_bus_message_append(reply, "u", a.vacated);
	if (!strcmp(property, "RegionsParked"))
		return sd_bus_message_append(reply, "u", a.parked);
	if (!strcmp(property, "RegionsReleased"))
		return sd_bus_message_append(reply, "u", a.released);
	if (!strcmp(property, "Errors"))
		return sd_bus_message_append(reply, "u", a.errors);
	if (!strcmp(property, "PowerDownFraction"))
		return sd_bus_message_append(reply, "d", a.pdf);
	if (!strcmp(property, "ModelledPowerMilliwatt"))
		return sd_bus_message_append(reply, "d", a.power_mw);
	return -ENOENT;
}

static int prop_get_policy(sd_bus *bus, const char *path, const char *iface,
			   const char *property, sd_bus_message *reply, void *userdata,
			   sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	char *val = b->val;
	const char *key;
	int r;

	(void)bus;
	(void)path;
	(void)iface;
	(void)property;
	(void)error;
	r = sd_bus_message_open_container(reply, 'a', "{ss}");
	for (size_t i = 0; r >= 0 && (key = conf_key_name(i)); i++) {
		if (conf_get(&b->m->config, key, val, POLICY_VALUE_MAX) < 0)
			continue;
		r = sd_bus_message_append(reply, "{ss}", key, val);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

/* ---- announcements -------------------------------------------------------- */

static void emit_changes(struct rpm_bus *b)
{
	struct announced a, *l = &b->last;
	const char *names[13];
	size_t n = 0;

	snapshot(b, &a);
	if (strcmp(a.state, l->state))
		names[n++] = "State";
	if (a.region_count != l->region_count)
		names[n++] = "RegionCount";
	if (a.migrated != l->migrated)
		names[n++] = "PagesMigrated";
	if (a.dropped != l->dropped)
		names[n++] = "PagesDropped";
	if (a.vacated != l->vacated)
		names[n++] = "RegionsVacated";
	if (a.parked != l->parked)
		names[n++] = "RegionsParked";
	if (a.released != l->released)
		names[n++] = "RegionsReleased";
	if (a.errors != l->errors)
		names[n++] = "Errors";
	/* the mean drifts with every pass: only announce visible changes */
	if (fabs(a.pdf - l->pdf) >= 0.0005)
		names[n++] = "PowerDownFraction";
	if (fabs(a.power_mw - l->power_mw) >= 0.05)
		names[n++] = "ModelledPowerMilliwatt";
	if (!n)
		return;
	names[n] = NULL;
	*l = a;
	if (b->bus)
		sd_bus_emit_properties_changed_strv(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE,
						    (char **)names);
}

/* PolicyChanged for every key whose effective value differs from the last
 * announced one, then a change of Policy. */
static void emit_policy_changes(struct rpm_bus *b)
{
	char *val = b->val;
	unsigned changed = 0;

	for (size_t i = 0; i < b->n_keys; i++) {
		const char *key = conf_key_name(i);
		char *copy;

		if (!key || conf_get(&b->m->config, key, val, POLICY_VALUE_MAX) < 0)
			continue;
		if (b->policy[i] && !strcmp(b->policy[i], val))
			continue;
		copy = strdup(val);
		if (!copy)
			continue;
		free(b->policy[i]);
		b->policy[i] = copy;
		changed++;
		log_info("policy: %s=%s", key, val);
		if (b->bus)
			sd_bus_emit_signal(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE, "PolicyChanged",
					   "ss", key, val);
	}
	if (changed && b->bus)
		sd_bus_emit_properties_changed(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE, "Policy", NULL);
}

static void on_note(struct manager *m, enum manager_note what, uint32_t id, uint32_t arg)
{
	struct rpm_bus *b = m->bus;
	struct rpm_region *reg;

	if (!b)
		return;
	switch (what) {
	case MANAGER_NOTE_COMPACTED:
		reg = manager_find_region(m, id);
		if (reg && power_model_region_state(reg) == RPM_POWER_EMPTY) {
			b->vacated++;
			sd_bus_emit_signal(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE, "RegionVacated",
					   "utt", id, reg->pages_migrated, reg->pages_dropped);
		}
		break;
	case MANAGER_NOTE_PARKED:
		sd_bus_emit_signal(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE, "RegionParked", "u", id);
		break;
	case MANAGER_NOTE_RELEASED:
		sd_bus_emit_signal(b->bus, RPM_BUS_PATH, RPM_BUS_IFACE, "RegionReleased", "us",
				   id, rpm_release_reason_name(arg));
		break;
	case MANAGER_NOTE_PASS:
		break;
	case MANAGER_NOTE_RELOADED:
		emit_policy_changes(b);
		break;
	}
	/* keep the time-weighted fraction exact at every change */
	power_update(b, now_usec());
	if (what == MANAGER_NOTE_PASS)
		emit_changes(b);
}

/* ---- method helpers ------------------------------------------------------- */

static int kernel_error(struct manager *m, sd_bus_error *error, int r, const char *what,
			uint32_t id)
{
	/* the request's own message: a re-read after it clears the socket's */
	const char *ext = m->last_error ? m->last_extack : backend_error(m->backend);

	return sd_bus_error_setf(error, r == -EBUSY || r == -EAGAIN ? ERR_BUSY : ERR_KERNEL,
				 "%s region %" PRIu32 ": %s", what, id,
				 ext && *ext ? ext : strerror(-r));
}

static struct rpm_region *region_or_error(struct manager *m, uint32_t id, sd_bus_error *error)
{
	struct rpm_region *reg = manager_find_region(m, id);

	if (!reg)
		sd_bus_error_setf(error, ERR_INVALID_REGION, "no region %" PRIu32
				  " with memory (regions: %zu)", id, m->n_regions);
	return reg;
}

static const char *region_state_name(enum rpm_region_state s)
{
	switch (s) {
	case RPM_REGION_PARKED:
		return "parked";
	case RPM_REGION_BUSY:
		return "busy";
	case RPM_REGION_HELD:
		return "held";
	case RPM_REGION_ACTIVE:
	default:
		return "active";
	}
}

/* The region's part in the last plan (policy.c), for ListRegions. */
static const char *region_role_name(enum rpm_region_role role)
{
	switch (role) {
	case RPM_ROLE_KEEP:
		return "keep";
	case RPM_ROLE_PINNED:
		return "pinned";
	case RPM_ROLE_TARGET:
		return "empty";
	case RPM_ROLE_SPARE:
		return "park";
	case RPM_ROLE_PARKED:
		return "parked";
	case RPM_ROLE_NONE:
	default:
		return "-";
	}
}

static int append_region(sd_bus_message *reply, const struct rpm_region *r)
{
	const struct rpm_region_detail *d = &r->detail;
	uint64_t anon = UNSCANNED, file = UNSCANNED, unmovable = UNSCANNED;

	if (d->valid) {
		anon = d->anon;
		file = d->file_clean + d->file_dirty + d->writeback + d->shmem;
		unmovable = d->slab + d->page_table + d->reserved + d->kernel_other;
	}
	return sd_bus_message_append(reply, REGION_SIG, r->id, r->start_pfn, r->spanned_pages,
				     region_state_name(r->state), r->zones, r->free_pages, anon,
				     file, unmovable,
				     r->state == RPM_REGION_PARKED ? r->parked_pages : (uint64_t)0,
				     r->last_action ? r->last_action : "none",
				     region_role_name(r->role));
}

/* ---- methods -------------------------------------------------------------- */

static int method_list_regions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	sd_bus_message *reply = NULL;
	int r;

	(void)error;
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', REGION_SIG);
	for (size_t i = 0; r >= 0 && i < b->m->n_regions; i++)
		r = append_region(reply, &b->m->regions[i]);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

/* May this privileged caller have a fresh scan now?  Counts it if so. */
static bool scan_allowed(struct rpm_bus *b)
{
	usec_t_ now = now_usec();

	if (now - b->scan_window >= SCAN_WINDOW_USEC) {
		b->scan_window = now;
		b->scans_in_window = 0;
	}
	if (b->scans_in_window >= SCAN_BURST)
		return false;
	b->scans_in_window++;
	return true;
}

static int method_get_region(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	sd_bus_message *reply = NULL;
	struct rpm_region *reg;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "u", &id);
	if (r < 0)
		return r;
	reg = region_or_error(b->m, id, error);
	if (!reg)
		return -ENOENT;
	/*
	 * The page-by-page breakdown is what the kernel gives CAP_SYS_ADMIN
	 * only (like /proc/kpageflags): the same privilege sd-bus wants for
	 * the mutating methods.  Others get what the daemon already knows.
	 */
	r = sd_bus_query_sender_privilege(msg, CAP_SYS_ADMIN);
	if (r > 0 && scan_allowed(b)) {
		r = manager_scan_region(b->m, reg, "D-Bus GetRegion()");
		if (r < 0)
			return kernel_error(b->m, error, r, "scanning", id);
	} else if (r > 0) {
		log_debug("GetRegion(%" PRIu32 "): more than %d scans per second, cached view",
			  id, SCAN_BURST);
	}
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_region(reply, reg);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int refuse_paused(struct manager *m, sd_bus_error *error)
{
	if (m->paused)
		return sd_bus_error_setf(error, ERR_PAUSED, "regionpmd is paused: call Resume() first");
	if (m->dry_run)
		return sd_bus_error_setf(error, ERR_PAUSED, "regionpmd runs with --dry-run and changes nothing");
	return 0;
}

static int method_vacate(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	struct manager *m = b->m;
	struct rpm_region *reg;
	uint64_t migrated, dropped;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "u", &id);
	if (r < 0)
		return r;
	r = refuse_paused(m, error);
	if (r < 0)
		return r;
	reg = region_or_error(m, id, error);
	if (!reg)
		return -ENOENT;
	if (reg->state != RPM_REGION_ACTIVE)
		return sd_bus_error_setf(error, ERR_BUSY, "region %" PRIu32 " is %s", id,
					 region_state_name(reg->state));
	migrated = m->migrated;
	dropped = m->dropped;
	/* like the policy: drop clean cache where allowed, migrate the rest
	 * (manager_compact_region() only migrates protected cgroups' cache);
	 * one request of at most BudgetPagesPerRegion= pages, so the event loop
	 * (and the watchdog) are not held for a whole region: the caller calls
	 * again while pages move (regionpmctl vacate does) */
	r = manager_compact_region(m, reg, m->config.policy.drop_cache ? RPM_COMPACT_BOTH :
				   RPM_COMPACT_MIGRATE, m->config.policy.budget_pages_per_region,
				   "D-Bus Vacate()");
	emit_changes(b);
	if (r < 0)
		return kernel_error(m, error, r, "compacting", id);
	return sd_bus_reply_method_return(msg, "tt", m->migrated - migrated, m->dropped - dropped);
}

static int method_park(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	struct manager *m = b->m;
	struct rpm_region *reg;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "u", &id);
	if (r < 0)
		return r;
	r = refuse_paused(m, error);
	if (r < 0)
		return r;
	reg = region_or_error(m, id, error);
	if (!reg)
		return -ENOENT;
	manager_refresh_region(m, reg, false);
	if (reg->state != RPM_REGION_ACTIVE)
		return sd_bus_error_setf(error, ERR_BUSY, "region %" PRIu32 " is %s", id,
					 region_state_name(reg->state));
	/* whether it is empty is the kernel's call (free counts here may lag
	 * pages still on per-cpu lists): it says EBUSY, "region is not empty" */
	r = manager_park_region(m, reg, "D-Bus Park()");
	emit_changes(b);
	if (r < 0)
		return kernel_error(m, error, r, "parking", id);
	return sd_bus_reply_method_return(msg, "");
}

static int method_unpark(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	struct manager *m = b->m;
	struct rpm_region *reg;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "u", &id);
	if (r < 0)
		return r;
	reg = region_or_error(m, id, error);
	if (!reg)
		return -ENOENT;
	manager_refresh_region(m, reg, false);
	if (reg->state != RPM_REGION_PARKED)
		return sd_bus_error_setf(error, ERR_INVALID_REGION, "region %" PRIu32
					 " is not parked", id);
	r = manager_unpark_region(m, reg, "D-Bus Unpark()");
	emit_changes(b);
	if (r < 0)
		return kernel_error(m, error, r, "unparking", id);
	return sd_bus_reply_method_return(msg, "");
}

static int method_set_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	const char *key, *value;
	char err[256] = "";
	int r;

	r = sd_bus_message_read(msg, "ss", &key, &value);
	if (r < 0)
		return r;
	r = conf_set(&b->m->config, key, value, err, sizeof(err));
	if (r < 0)
		return sd_bus_error_setf(error, ERR_INVALID_POLICY, "%s", *err ? err :
					 r == -ENOENT ? "unknown key" : strerror(-r));
	/* in effect now, not at the next reload: re-arm what depends on it */
	manager_config_changed(b->m, key);
	emit_policy_changes(b);
	return sd_bus_reply_method_return(msg, "");
}

static int method_pause_resume(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	bool pause = !strcmp(sd_bus_message_get_member(msg), "Pause");

	(void)error;
	if (b->m->paused != pause) {
		b->m->paused = pause;
		log_info("%s", pause ? "paused: no emptying or parking until Resume()" : "resumed");
		if (!pause && b->m->pass_timer)	/* decide again at once */
			sd_event_source_set_time_relative(b->m->pass_timer, 0);
		emit_changes(b);
	}
	return sd_bus_reply_method_return(msg, "");
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct rpm_bus *b = userdata;
	int r;

	/* The SIGHUP path (PolicyChanged through the note), but synchronous:
	 * the reply goes out once the new configuration is in effect, so
	 * ExecReload=busctl call ... Reload makes "systemctl reload" wait. */
	r = manager_reload(b->m);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_FAILED,
					 "reading the configuration: %s; the previous one stays in effect",
					 strerror(-r));
	return sd_bus_reply_method_return(msg, "");
}

/* ---- vtable --------------------------------------------------------------- */

#define PROP(name, sig) SD_BUS_PROPERTY(name, sig, prop_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define PROP_CONST(name, sig) SD_BUS_PROPERTY(name, sig, prop_get, 0, SD_BUS_VTABLE_PROPERTY_CONST)

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	PROP("State", "s"),
	PROP_CONST("Backend", "s"),
	PROP_CONST("BackendMissing", "s"),
	PROP_CONST("DryRun", "b"),
	PROP("RegionCount", "u"),
	PROP_CONST("RegionSize", "t"),
	PROP("PagesMigrated", "t"),
	PROP("PagesDropped", "t"),
	PROP("RegionsVacated", "u"),
	PROP("RegionsParked", "u"),
	PROP("RegionsReleased", "u"),
	PROP("Errors", "u"),
	PROP("PowerDownFraction", "d"),
	PROP("ModelledPowerMilliwatt", "d"),
	SD_BUS_PROPERTY("Policy", "a{ss}", prop_get_policy, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),

	SD_BUS_METHOD_WITH_NAMES("ListRegions", "", "",
				 "a" REGION_SIG, SD_BUS_PARAM(regions),
				 method_list_regions, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("GetRegion", "u", SD_BUS_PARAM(id),
				 REGION_SIG, SD_BUS_PARAM(region),
				 method_get_region, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Vacate", "u", SD_BUS_PARAM(id),
				 "tt", SD_BUS_PARAM(migrated) SD_BUS_PARAM(dropped),
				 method_vacate, 0),
	SD_BUS_METHOD_WITH_NAMES("Park", "u", SD_BUS_PARAM(id), "", "",
				 method_park, 0),
	SD_BUS_METHOD_WITH_NAMES("Unpark", "u", SD_BUS_PARAM(id), "", "",
				 method_unpark, 0),
	SD_BUS_METHOD_WITH_NAMES("SetPolicy", "ss", SD_BUS_PARAM(key) SD_BUS_PARAM(value),
				 "", "",
				 method_set_policy, 0),
	SD_BUS_METHOD("Pause", "", "", method_pause_resume, 0),
	SD_BUS_METHOD("Resume", "", "", method_pause_resume, 0),
	SD_BUS_METHOD("Reload", "", "", method_reload, 0),

	/* methods without SD_BUS_VTABLE_UNPRIVILEGED: sd-bus lets only root
	 * (or a caller with CAP_SYS_ADMIN) call them */
	SD_BUS_SIGNAL_WITH_NAMES("RegionVacated", "utt",
				 SD_BUS_PARAM(id) SD_BUS_PARAM(migrated) SD_BUS_PARAM(dropped), 0),
	SD_BUS_SIGNAL_WITH_NAMES("RegionParked", "u", SD_BUS_PARAM(id), 0),
	SD_BUS_SIGNAL_WITH_NAMES("RegionReleased", "us", SD_BUS_PARAM(id) SD_BUS_PARAM(reason), 0),
	SD_BUS_SIGNAL_WITH_NAMES("PolicyChanged", "ss", SD_BUS_PARAM(key) SD_BUS_PARAM(value), 0),
	SD_BUS_VTABLE_END
};

/* ---- life cycle ----------------------------------------------------------- */

static void bus_free(struct rpm_bus *b)
{
	if (!b)
		return;
	if (b->bus) {
		sd_bus_release_name(b->bus, RPM_BUS_NAME);
		sd_bus_detach_event(b->bus);
	}
	sd_bus_slot_unref(b->slot);
	sd_bus_flush_close_unref(b->bus);
	for (size_t i = 0; i < b->n_keys; i++)
		free(b->policy[i]);
	free(b->policy);
	free(b->val);
	free(b);
}

int bus_open(struct manager *m, const char *address)
{
	struct rpm_bus *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->m = m;
	while (conf_key_name(b->n_keys))
		b->n_keys++;
	b->policy = calloc(b->n_keys ? b->n_keys : 1, sizeof(*b->policy));
	b->val = malloc(POLICY_VALUE_MAX);
	if (!b->policy || !b->val) {
		r = -ENOMEM;
		goto fail;
	}
	power_avg_init(&b->pdf, now_usec(), 0);
	sd_bus_error_add_map(rpm_bus_errors);

	if (address) {
		r = sd_bus_new(&b->bus);
		if (r >= 0)
			r = sd_bus_set_address(b->bus, address);
		if (r >= 0)
			r = sd_bus_set_bus_client(b->bus, 1);
		if (r >= 0)
			r = sd_bus_start(b->bus);
	} else {
		r = sd_bus_open_system(&b->bus);
	}
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "connecting to %s", address ? address : "the system bus");
		goto fail;
	}
	sd_bus_set_description(b->bus, "regionpmd");
	r = sd_bus_add_object_vtable(b->bus, &b->slot, RPM_BUS_PATH, RPM_BUS_IFACE,
				     manager_vtable, b);
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "exporting %s", RPM_BUS_PATH);
		goto fail;
	}
	r = sd_bus_request_name(b->bus, RPM_BUS_NAME, 0);
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "taking the bus name %s", RPM_BUS_NAME);
		goto fail;
	}
	r = sd_bus_attach_event(b->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "attaching the bus to the event loop");
		goto fail;
	}
	/* the starting point of the announcements: nothing is sent for it */
	for (size_t i = 0; i < b->n_keys; i++) {
		char *val = b->val;

		if (conf_get(&m->config, conf_key_name(i), val, POLICY_VALUE_MAX) == 0)
			b->policy[i] = strdup(val);
	}
	power_update(b, now_usec());
	snapshot(b, &b->last);
	m->bus = b;
	m->notify = on_note;
	log_info("on the bus as %s", RPM_BUS_NAME);
	return 0;
fail:
	bus_free(b);
	return r;
}

void bus_close(struct manager *m)
{
	if (!m || !m->bus)
		return;
	bus_free(m->bus);
	m->bus = NULL;
	m->notify = NULL;
}

/* ---- introspection without a bus ------------------------------------------
 * A private peer-to-peer connection over a socket pair: one end exports the
 * vtable, the other asks for Introspect(), both driven here until the reply
 * arrives.  This is the XML that sd-bus really serves. */

struct introspect_ctx {
	bool done;
	int error;
	char *xml;
};

static int on_introspect_reply(sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct introspect_ctx *c = userdata;
	const sd_bus_error *err = sd_bus_message_get_error(reply);
	const char *xml;
	int r;

	(void)e;
	c->done = true;
	if (err) {
		c->error = -sd_bus_error_get_errno(err);
		return 0;
	}
	r = sd_bus_message_read(reply, "s", &xml);
	if (r < 0) {
		c->error = r;
		return 0;
	}
	c->xml = strdup(xml);
	if (!c->xml)
		c->error = -ENOMEM;
	return 0;
}

int bus_introspect(FILE *f)
{
	struct introspect_ctx c = { 0 };
	struct rpm_bus dummy = { 0 };
	sd_bus *server = NULL, *client = NULL;
	sd_id128_t id;
	int fds[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0)
		return -errno;
	r = sd_id128_randomize(&id);
	if (r >= 0)
		r = sd_bus_new(&server);
	if (r >= 0)
		r = sd_bus_set_fd(server, fds[0], fds[0]);
	if (r >= 0) {
		fds[0] = -1;
		r = sd_bus_set_server(server, 1, id);
	}
	if (r >= 0)
		r = sd_bus_set_anonymous(server, 1);
	if (r >= 0)
		r = sd_bus_add_object_vtable(server, NULL, RPM_BUS_PATH, RPM_BUS_IFACE,
					     manager_vtable, &dummy);
	if (r >= 0)
		r = sd_bus_start(server);
	if (r >= 0)
		r = sd_bus_new(&client);
	if (r >= 0)
		r = sd_bus_set_fd(client, fds[1], fds[1]);
	if (r >= 0) {
		fds[1] = -1;
		r = sd_bus_set_anonymous(client, 1);
	}
	if (r >= 0)
		r = sd_bus_start(client);
	if (r >= 0)
		r = sd_bus_call_method_async(client, NULL, NULL, RPM_BUS_PATH,
					     "org.freedesktop.DBus.Introspectable", "Introspect",
					     on_introspect_reply, &c, "");
	for (int i = 0; r >= 0 && !c.done && i < 10000; i++) {
		int a = sd_bus_process(server, NULL), b = sd_bus_process(client, NULL);

		if (a < 0 || b < 0) {
			r = a < 0 ? a : b;
			break;
		}
		if (a == 0 && b == 0)
			sd_bus_wait(client, 1000);
	}
	if (r >= 0 && !c.done)
		r = -ETIMEDOUT;
	if (r >= 0)
		r = c.error;
	if (r >= 0)
		fputs(c.xml, f);
	free(c.xml);
	sd_bus_flush_close_unref(client);
	sd_bus_flush_close_unref(server);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return r;
}
