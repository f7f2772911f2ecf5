// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DRAM background power model and time-weighted power-down fraction, see
 * power-model.h and regionpm(7).
 */
#include "power-model.h"

double power_model_refresh_ma(void)
{
	return (RPM_PM_IDD5B_MA - RPM_PM_IDD3N_MA) * RPM_PM_TRFC1_NS / RPM_PM_TREFI_NS;
}

double power_model_device_mw(enum rpm_power_state s)
{
	double ma;

	switch (s) {
	case RPM_POWER_EMPTY:
		ma = RPM_PM_IDD2P_MA + power_model_refresh_ma();
		break;
	case RPM_POWER_PARKED:
		ma = RPM_PM_IDD6N_MA;
		break;
	case RPM_POWER_IN_USE:
	default:
		ma = RPM_PM_IDD3N_MA + power_model_refresh_ma();
		break;
	}
	return ma * RPM_PM_VDD_V;
}

double power_model_mw(uint64_t bytes, enum rpm_power_state s)
{
	return power_model_device_mw(s) * (double)bytes / (double)RPM_PM_DEVICE_BYTES;
}

enum rpm_power_state power_model_region_state(const struct rpm_region *r)
{
	if (r->state == RPM_REGION_PARKED)
		return RPM_POWER_PARKED;
	if (r->state == RPM_REGION_ACTIVE && r->managed_pages &&
	    r->free_pages >= r->managed_pages)
		return RPM_POWER_EMPTY;
	return RPM_POWER_IN_USE;
}

void power_model_regions(const struct rpm_region *regions, size_t n, uint64_t page_size,
			 double *power_mw, double *down_fraction)
{
	double mw = 0;
	size_t down = 0;

	for (size_t i = 0; i < n; i++) {
		enum rpm_power_state s = power_model_region_state(&regions[i]);

		mw += power_model_mw(regions[i].spanned_pages * page_size, s);
		down += s != RPM_POWER_IN_USE;
	}
	if (power_mw)
		*power_mw = mw;
	if (down_fraction)
		*down_fraction = n ? (double)down / (double)n : 0;
}

void power_avg_init(struct power_avg *a, usec_t_ now, double initial)
{
	a->start = a->last = now;
	a->area = 0;
	a->current = initial;
}

void power_avg_update(struct power_avg *a, usec_t_ now, double fraction)
{
	if (now > a->last) {
		a->area += a->current * (double)(now - a->last);
		a->last = now;
	}
	a->current = fraction;
}

double power_avg_mean(const struct power_avg *a, usec_t_ now)
{
	double area = a->area;

	if (now > a->last)
		area += a->current * (double)(now - a->last);
	else
		now = a->last;
	if (now <= a->start)
		return a->current;
	return area / (double)(now - a->start);
}
