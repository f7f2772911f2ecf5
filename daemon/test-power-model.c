// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the DRAM power model: the per-GiB and per-128 MiB figures
 * of the table in regionpm(7), region classification, and the
 * time-weighted power-down fraction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "power-model.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

static void test_currents(void **state)
{
	(void)state;
	/* regionpm(7): I_ref = 207 mA x 350 ns / 7.8 us ~ 9.3 mA */
	assert_float_equal(RPM_PM_IDD5B_MA, 250.0, 1e-9);
	assert_float_equal(power_model_refresh_ma(), 9.29, 0.01);
}

static void test_table(void **state)
{
	(void)state;
	/* per GiB: 62.8, 41.2, 36.0 mW; per 128 MiB: 7.84, 5.14, 4.50 mW */
	assert_float_equal(power_model_mw(GIB, RPM_POWER_IN_USE), 62.8, 0.06);
	assert_float_equal(power_model_mw(GIB, RPM_POWER_EMPTY), 41.2, 0.06);
	assert_float_equal(power_model_mw(GIB, RPM_POWER_PARKED), 36.0, 0.05);
	assert_float_equal(power_model_mw(128 * MIB, RPM_POWER_IN_USE), 7.84, 0.005);
	assert_float_equal(power_model_mw(128 * MIB, RPM_POWER_EMPTY), 5.14, 0.005);
	assert_float_equal(power_model_mw(128 * MIB, RPM_POWER_PARKED), 4.50, 0.005);
	assert_float_equal(power_model_mw(0, RPM_POWER_IN_USE), 0, 1e-12);
	/* the example of "Reading the numbers": 96 of 128 regions parked on 16 GiB */
	assert_float_equal(96 * (power_model_mw(128 * MIB, RPM_POWER_IN_USE) -
				 power_model_mw(128 * MIB, RPM_POWER_PARKED)), 320, 2);
	assert_float_equal(128 * power_model_mw(128 * MIB, RPM_POWER_IN_USE), 1004, 2);
}

static void set(struct rpm_region *r, enum rpm_region_state st, uint64_t managed, uint64_t free)
{
	memset(r, 0, sizeof(*r));
	r->state = st;
	r->spanned_pages = 32768;	/* 128 MiB of 4 KiB pages */
	r->managed_pages = managed;
	r->free_pages = free;
}

static void test_regions(void **state)
{
	struct rpm_region r[4];
	double mw, frac;

	(void)state;
	set(&r[0], RPM_REGION_ACTIVE, 30000, 100);	/* in use */
	set(&r[1], RPM_REGION_ACTIVE, 32768, 32768);	/* empty */
	set(&r[2], RPM_REGION_PARKED, 32768, 0);	/* parked */
	set(&r[3], RPM_REGION_BUSY, 32768, 32768);	/* busy counts as in use */
	assert_int_equal(power_model_region_state(&r[0]), RPM_POWER_IN_USE);
	assert_int_equal(power_model_region_state(&r[1]), RPM_POWER_EMPTY);
	assert_int_equal(power_model_region_state(&r[2]), RPM_POWER_PARKED);
	assert_int_equal(power_model_region_state(&r[3]), RPM_POWER_IN_USE);
	power_model_regions(r, 4, 4096, &mw, &frac);
	assert_float_equal(frac, 0.5, 1e-12);
	assert_float_equal(mw, 2 * 7.8435 + 5.1435 + 4.5, 0.01);
	/* a region without managed pages (a hole) is never empty */
	set(&r[0], RPM_REGION_ACTIVE, 0, 0);
	assert_int_equal(power_model_region_state(&r[0]), RPM_POWER_IN_USE);
	power_model_regions(r, 0, 4096, &mw, &frac);
	assert_float_equal(mw, 0, 1e-12);
	assert_float_equal(frac, 0, 1e-12);
}

static void test_time_weighted(void **state)
{
	struct power_avg a;

	(void)state;
	power_avg_init(&a, 1000, 0.25);
	/* no time has passed: the current value */
	assert_float_equal(power_avg_mean(&a, 1000), 0.25, 1e-12);
	assert_float_equal(power_avg_mean(&a, 2000), 0.25, 1e-12);
	/* 0.25 for 1000 us, then 1.0 for 3000 us: (250 + 3000) / 4000 */
	power_avg_update(&a, 2000, 1.0);
	assert_float_equal(power_avg_mean(&a, 5000), 0.8125, 1e-12);
	/* updates at the same instant replace the value, time going back is ignored */
	power_avg_update(&a, 2000, 0.0);
	power_avg_update(&a, 1500, 0.0);
	assert_float_equal(power_avg_mean(&a, 6000), 250.0 / 5000, 1e-12);
	assert_float_equal(power_avg_mean(&a, 100), 250.0 / 1000, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_currents),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_time_weighted),
	};

	return cmocka_run_group_tests_name("power-model", tests, NULL, NULL);
}
