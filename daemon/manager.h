/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd's manager: the state (regions, kernel facts, configuration,
 * policy state) and the named sd-event sources that drive it (genl events,
 * PSI, the decision timer, signals, watchdog).  Executes the actions of the
 * pure policy through the genl client and feeds the results back.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "backend.h"
#include "conf.h"
#include "genl.h"
#include "policy.h"
#include "region.h"

struct idle_sample;
struct rpm_metrics;
struct psi_monitor;

#define MANAGER_MAX_SAMPLES RPM_IDLE_MAX_REGIONS
#define MANAGER_MAX_PROT_INO (1U << 20)	/* cgroup inodes protected, at most */

enum manager_note {
	MANAGER_NOTE_COMPACTED,		/* id: the daemon compacted the region */
	MANAGER_NOTE_PARKED,		/* id: the daemon parked the region */
	MANAGER_NOTE_RELEASED,		/* id, arg = enum regionpm_release_reason */
	MANAGER_NOTE_PASS,		/* a decision pass or an event changed state */
	MANAGER_NOTE_RELOADED,		/* the configuration was read again */
};

struct manager {
	sd_event *event;
	struct rpm_backend *backend;	/* netlink or stock (backend.h) */

	/* options */
	char *config_path, *dropin_dir;
	const char *root;		/* "" normally; a prefix for /proc and /sys */
	bool dry_run, once, packet_dump;
	FILE *report;			/* --once: what was done goes here too */

	struct rpm_config config;
	struct rpm_kernel_info info;
	struct rpm_region *regions;
	size_t n_regions;
	struct rpm_policy_state pstate;

	struct psi_monitor *psi;
	bool psi_event;
	struct reclaim_watch *reclaim_watch;	/* armed while we have parked or held regions */
	uint64_t reclaim_watch_pages;		/* what it saw since the last pass */
	sd_event_source *genl_io, *pass_timer, *sig_hup, *sig_term, *sig_int;
	struct idle_sample *samples[MANAGER_MAX_SAMPLES];
	uint32_t sample_region[MANAGER_MAX_SAMPLES];

	/* protected cgroups: inodes of the cgroups and their descendants */
	uint64_t *prot_ino;
	size_t n_prot_ino, cap_prot_ino, prot_logged;
	bool prot_unknown;		/* could not resolve them all: drop nothing */
	unsigned prot_resolved_pass;	/* m->passes when last resolved */

	uint64_t page_size;
	usec_t_ started;
	bool need_dump;
	bool progress;			/* the last pass changed something */
	unsigned idle_passes;		/* passes in a row without an action */
	bool converged;			/* the last pass reached the plan (logged once) */
	bool hold_supported;		/* the kernel knows region-hold */
	bool exiting;
	unsigned passes;
	uint64_t scans;			/* page scans asked for over D-Bus */
	/* totals of this run */
	uint64_t migrated, dropped, failed;
	unsigned compacts, parks, unparks, released_by_kernel, protected_forced;
	unsigned errors;		/* kernel requests (compact, park, unpark) that failed */
	usec_t_ last_checkpoint;		/* of the ext4 journals (CheckpointJournals=) */
	int metrics_error;		/* of the last MetricsFile= write */

	/* D-Bus (bus.c): told what happened, so it can send signals and
	 * property changes; NULL without a bus. */
	void (*notify)(struct manager *m, enum manager_note what, uint32_t id, uint32_t arg);
	void *bus;
	bool paused;			/* Pause(): no emptying or parking, releases go on */
	int last_error;			/* of the last compact or park request, 0 or -errno */
	char last_extack[256];		/* and the kernel's message for it */
};

int manager_new(struct manager **ret);
struct manager *manager_free(struct manager *m);

/* Loads the configuration (main file, then drop-ins); *n_warnings counts
 * lines that were ignored. */
int manager_load_config(struct manager *m, unsigned *n_warnings);
/* Opens the backend (Backend=), reads the kernel info and the first dump,
 * resolves protected cgroups, sets up every event source. */
int manager_start(struct manager *m);
/* One decision pass: dump, observe, decide, execute. */
int manager_pass(struct manager *m);
/* --once: waits for pending idle samples, then returns. */
int manager_run(struct manager *m);
/* Unparks every region this daemon parked (SIGTERM). */
void manager_release_all(struct manager *m);
/* The numbers of MetricsFile= (and of the bus's Errors). */
void manager_metrics(const struct manager *m, struct rpm_metrics *mx);
/* Status line for sd_notify STATUS= and the log. */
void manager_status(const struct manager *m, char *buf, size_t len);

/* For the bus: look up a region, re-read it (with a page-by-page scan),
 * compact it (at most @budget pages) / park it like a policy action (m->last_error tells how it
 * went), unpark it, reload the configuration as SIGHUP does. */
struct rpm_region *manager_find_region(struct manager *m, uint32_t id);
int manager_refresh_region(struct manager *m, struct rpm_region *reg, bool scan);
int manager_compact_region(struct manager *m, struct rpm_region *reg, uint32_t mode,
			   uint64_t budget, const char *why);
int manager_park_region(struct manager *m, struct rpm_region *reg, const char *why);
int manager_unpark_region(struct manager *m, struct rpm_region *reg, const char *why);
/* -errno if the configuration could not be read (the old one stays). */
int manager_reload(struct manager *m);
/* A key changed at run time (D-Bus SetPolicy; NULL: all of them, after a
 * reload): re-arm what depends on it (PSI trigger, protected cgroups,
 * decision timer) so that it is in effect at once. */
void manager_config_changed(struct manager *m, const char *key);
/* A page-by-page kernel scan of one region for @why; counted in m->scans. */
int manager_scan_region(struct manager *m, struct rpm_region *reg, const char *why);

/* Exposed for tests: meminfo from <root>/proc/meminfo, in pages. */
int manager_read_meminfo(const char *root, uint64_t page_size,
			 uint64_t *total, uint64_t *available, uint64_t *free_pages);
