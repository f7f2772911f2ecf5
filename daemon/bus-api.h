/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The org.regionpm1 D-Bus API as both ends see it (org.regionpm1(5)): names,
 * error names and the region signature.  Shared by regionpmd (bus.c) and
 * regionpmctl, so the two cannot drift apart.  Plain macros, no code.
 */
#pragma once

#include <stdint.h>

#define RPM_BUS_NAME		"org.regionpm1"
#define RPM_BUS_PATH		"/org/regionpm1"
#define RPM_BUS_IFACE		"org.regionpm1.Manager"

#define RPM_BUS_ERR_PREFIX	"org.regionpm1.Error."
#define RPM_BUS_ERR_INVALID_REGION	RPM_BUS_ERR_PREFIX "InvalidRegion"
#define RPM_BUS_ERR_BUSY		RPM_BUS_ERR_PREFIX "Busy"
#define RPM_BUS_ERR_INVALID_POLICY	RPM_BUS_ERR_PREFIX "InvalidPolicy"
#define RPM_BUS_ERR_KERNEL		RPM_BUS_ERR_PREFIX "Kernel"
#define RPM_BUS_ERR_PAUSED		RPM_BUS_ERR_PREFIX "Paused"

/* One region of ListRegions()/GetRegion(): id, start pfn, pages, state,
 * zones, free, anon, file, unmovable, parked (pages), last action. */
#define RPM_BUS_REGION_SIG	"(uttsstttttss)"
/* A breakdown count the daemon has not scanned yet. */
#define RPM_BUS_UNSCANNED	UINT64_MAX
