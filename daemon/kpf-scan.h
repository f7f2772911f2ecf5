/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Occupancy of a physical range from /proc/kpageflags (root only), for the
 * stock backend: what the regionpm kernel helper counts for us, counted
 * here page by page.  Cost O(pages of the range): callers scan candidates
 * only, and rate-limit the rest.
 *
 * Free = KPF_BUDDY (the kernel sets it on every page of a free buddy block,
 * tails included); pages of an offline memory block are KPF_NOPAGE and not
 * present.  The rest is classified like the helper's detailed scan.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "region.h"

#define RPM_PROC_KPAGEFLAGS	"/proc/kpageflags"

/* Add @n flag words to @d; *present counts pages that exist (!NOPAGE). */
void kpf_classify(const uint64_t *flags, size_t n, struct rpm_region_detail *d,
		  uint64_t *present);

/*
 * Scan [start_pfn, start_pfn + n) of <root>/proc/kpageflags into @d
 * (zeroed first; d->valid set, d->when left to the caller).
 */
int kpf_scan(const char *root, uint64_t start_pfn, uint64_t n,
	     struct rpm_region_detail *d, uint64_t *present);
