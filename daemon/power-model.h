/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DRAM background power model of regionpm(7), "The DRAM power model":
 * a region of S bytes counts as S / 1 GiB DDR4 8 Gb x8 devices (Micron
 * MT40A1G8, DDR4-2400, VDD 1.2 V) and draws, per device,
 *   in use  IDD3N + I_ref   (active standby plus the refresh the controller issues)
 *   empty   IDD2P + I_ref   (precharge power-down plus refresh)
 *   parked  IDD6N           (self-refresh, refresh included)
 * with I_ref = (IDD5B - IDD3N) * tRFC1 / tREFI.  The parameters are compiled
 * in (regionpm(7) says so).  Also the time-weighted power-down fraction:
 * the share of regions with memory that were empty or parked, integrated
 * over time.  Pure: no sd-event, no sd-bus; tested by test-power-model.c.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "region.h"

/* Per-device currents in mA (module data sheet Table 15, divided by 18). */
#define RPM_PM_IDD3N_MA		43.0
#define RPM_PM_IDD2P_MA		25.0
#define RPM_PM_IDD6N_MA		30.0
#define RPM_PM_IDD5B_MA		((2475.0 - 9 * 25.0) / 9)	/* 250 mA */
#define RPM_PM_TRFC1_NS		350.0
#define RPM_PM_TREFI_NS		7800.0
#define RPM_PM_VDD_V		1.2
#define RPM_PM_DEVICE_BYTES	(1ULL << 30)			/* one 8 Gb device */

enum rpm_power_state {
	RPM_POWER_IN_USE,
	RPM_POWER_EMPTY,
	RPM_POWER_PARKED,
};

/* Average refresh current in mA (about 9.3). */
double power_model_refresh_ma(void);
/* Power of one device in a state, mW. */
double power_model_device_mw(enum rpm_power_state s);
/* Power of @bytes of DRAM in a state, mW. */
double power_model_mw(uint64_t bytes, enum rpm_power_state s);

/* How the model sees a region: parked, empty (active, every managed page
 * free) or in use (everything else, busy included). */
enum rpm_power_state power_model_region_state(const struct rpm_region *r);

/*
 * Over the regions with memory: the modelled power in mW (regions sized
 * spanned_pages * page_size), and the share of them empty or parked now
 * (0 with no regions).
 */
void power_model_regions(const struct rpm_region *regions, size_t n, uint64_t page_size,
			 double *power_mw, double *down_fraction);

/* Time-weighted mean of a fraction that changes in steps. */
struct power_avg {
	usec_t_ start, last;
	double area;		/* fraction x microseconds up to last */
	double current;		/* value since last */
};

void power_avg_init(struct power_avg *a, usec_t_ now, double initial);
/* The value is @fraction from @now on (now before last is treated as last). */
void power_avg_update(struct power_avg *a, usec_t_ now, double fraction);
/* Mean from start to @now; the current value when no time has passed. */
double power_avg_mean(const struct power_avg *a, usec_t_ now);
