/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd on D-Bus: name org.regionpm1, object /org/regionpm1, interface
 * org.regionpm1.Manager, as specified in org.regionpm1(5).  The vtable and
 * its handlers only; the work is done by the manager.
 */
#pragma once

#include <stdio.h>

#include "bus-api.h"

struct manager;

/*
 * Connects to @address (NULL: the system bus), exports the object on it,
 * takes the name and attaches to the manager's event loop.  Hooks itself
 * into the manager (m->notify, m->bus).  Returns 0 or -errno (-EEXIST: the
 * name is owned by someone else).
 */
int bus_open(struct manager *m, const char *address);
/* Releases the name and the connection. */
void bus_close(struct manager *m);

/* Writes the introspection XML of /org/regionpm1 to @f (no bus needed). */
int bus_introspect(FILE *f);
