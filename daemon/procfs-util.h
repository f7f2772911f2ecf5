/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pure parsers of the /proc files regionpmd reads: PSI memory pressure,
 * meminfo and vmstat.  Every parser has a string form (unit tested with
 * fixture text) and a file form that takes a root prefix ("" or NULL for
 * the real /, a fixture directory in tests).  Errors are negative errno;
 * malformed input gives -EBADMSG and never crashes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RPM_PROC_PRESSURE_MEMORY	"/proc/pressure/memory"
#define RPM_PROC_MEMINFO		"/proc/meminfo"
#define RPM_PROC_VMSTAT			"/proc/vmstat"
#define RPM_PROC_ZONEINFO		"/proc/zoneinfo"
#define RPM_PROC_CMDLINE		"/proc/cmdline"

/* One line of a PSI file; averages as percent * 100 (exact, no floats). */
struct rpm_psi_line {
	unsigned avg10, avg60, avg300;
	uint64_t total_usec;
};

struct rpm_pressure {
	struct rpm_psi_line some;
	struct rpm_psi_line full;
	bool has_full;		/* "full" is absent for the cpu resource before 5.13 */
};

/* /proc/meminfo, in kB as the file gives them. */
struct rpm_meminfo {
	uint64_t mem_total_kb, mem_free_kb, mem_available_kb;
	uint64_t buffers_kb, cached_kb, swap_cached_kb;
	uint64_t active_anon_kb, inactive_anon_kb;
	uint64_t active_file_kb, inactive_file_kb;
	uint64_t unevictable_kb, mlocked_kb;
	uint64_t swap_total_kb, swap_free_kb;
	uint64_t dirty_kb, writeback_kb;
	uint64_t anon_pages_kb, mapped_kb, shmem_kb;
	uint64_t kreclaimable_kb, slab_kb, sreclaimable_kb, sunreclaim_kb;
	uint64_t kernel_stack_kb, page_tables_kb;
	uint64_t anon_huge_pages_kb;
	uint64_t hugepages_total;	/* a count, not kB */
	uint64_t hugepagesize_kb;
};

/* The /proc/vmstat counters regionpmd uses; absent ones stay 0. */
struct rpm_vmstat {
	uint64_t nr_free_pages, nr_file_pages, nr_anon_pages, nr_dirty, nr_writeback;
	uint64_t pgmajfault;
	uint64_t workingset_refault_anon, workingset_refault_file;
	uint64_t pgmigrate_success, pgmigrate_fail;
	uint64_t compact_stall, compact_fail, compact_success;
	uint64_t compact_migrate_scanned, compact_free_scanned;
	uint64_t pgscan_kswapd, pgscan_direct;
	uint64_t pgsteal_kswapd, pgsteal_direct;
	uint64_t allocstall;		/* sum of allocstall_<zone> */
	uint64_t oom_kill;
	unsigned n_found;		/* how many of the above the file had */
};

/*
 * Read the whole file root/path into buf (NUL terminated).  Returns its
 * length, -EFBIG if it does not fit in size - 1 bytes, -ENAMETOOLONG if the
 * joined path is too long, or the -errno of open/read.
 */
ssize_t procfs_read_file(const char *root, const char *path, char *buf,
			 size_t size);

/* Parse the text of a PSI file ("some ..." and optionally "full ..."). */
int procfs_parse_pressure(const char *text, struct rpm_pressure *p);
int procfs_read_pressure(const char *root, struct rpm_pressure *p);

/*
 * Parse meminfo text.  MemTotal, MemFree and MemAvailable are required
 * (-EBADMSG without them); unknown keys are skipped.
 */
int procfs_parse_meminfo(const char *text, struct rpm_meminfo *m);
int procfs_read_meminfo(const char *root, struct rpm_meminfo *m);

/*
 * Parse vmstat text.  Unknown counters are skipped; counters depend on the
 * kernel config, so a missing one is not an error, but text without any
 * known counter is (-EBADMSG).
 */
int procfs_parse_vmstat(const char *text, struct rpm_vmstat *v);
int procfs_read_vmstat(const char *root, struct rpm_vmstat *v);

/*
 * Managed pages per zone kind from /proc/zoneinfo, summed over nodes:
 * ZONE_MOVABLE against all.  Memory in ZONE_MOVABLE holds no unmovable
 * kernel allocation, so regions wholly in it can always be emptied.
 */
struct rpm_zoneinfo {
	uint64_t managed_pages;		/* every zone */
	uint64_t movable_pages;		/* zone Movable */
	unsigned zones, movable_zones;	/* zones with managed pages */
	/*
	 * What the kernel keeps free (marks: every zone with pages showed its
	 * free pages, watermarks and lowmem reserves):
	 * reserve_pages: the sum over zones of the high watermark plus the
	 * largest lowmem reserve, at most the zone (the kernel's
	 * totalreserve_pages, which MemAvailable leaves out);
	 * free_above_marks: the free pages above high watermark (with its
	 * boost) plus that reserve, summed over zones: what can be allocated
	 * for user memory before kswapd starts to evict.
	 */
	bool marks;
	uint64_t reserve_pages;
	uint64_t free_above_marks;
	/*
	 * The same over the zones below ZONE_MOVABLE only: pages of those
	 * zones can only move within them (the kernel's room check for an
	 * evacuation, room_above_marks(), counts the same zones).
	 */
	uint64_t low_reserve_pages;
	uint64_t low_free_above_marks;
};

/* Parse zoneinfo text; -EBADMSG without a single zone. */
int procfs_parse_zoneinfo(const char *text, struct rpm_zoneinfo *z);
/* Read root/proc/zoneinfo line by line (it grows with CPUs and nodes). */
int procfs_read_zoneinfo(const char *root, struct rpm_zoneinfo *z);

/*
 * Whether the kernel command line @cmdline has the parameter @param set to
 * true: "param", "param=1", "param=y"... (kstrtobool's spelling, the
 * last occurrence wins, as the kernel's own parsing).
 */
bool procfs_cmdline_bool(const char *cmdline, const char *param);
/* The same for root/proc/cmdline; -errno if it cannot be read. */
int procfs_read_cmdline_bool(const char *root, const char *param, bool *on);
/* Whether @cmdline names @param at all (bare or with a value). */
bool procfs_cmdline_has(const char *cmdline, const char *param);

/* kB to pages of page_size bytes (rounded down); 0 for a bad page size. */
uint64_t procfs_kb_to_pages(uint64_t kb, uint64_t page_size);
