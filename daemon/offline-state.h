/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of the memory blocks regionpmd offlined itself:
 * <root>/run/regionpmd/offlined-blocks, one line per block, "ID ZONE"
 * (ZONE: the zone the block was in, "Movable" to online it back as
 * online_movable, else "Normal").  A stock kernel gives nothing back when
 * the daemon dies, so this file is how it is given back: on stop
 * (SIGTERM), by ExecStopPost= (regionpmd --restore), and by the next
 * daemon to start.  A block is written here before it is offlined and
 * removed after it is online again; blocks not in it are never onlined.
 * Writes are atomic (temporary file, rename).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPM_OFFLINE_STATE_DIR	"/run/regionpmd"
#define RPM_OFFLINE_STATE_FILE	RPM_OFFLINE_STATE_DIR "/offlined-blocks"
#define RPM_OFFLINE_MAX		4096

struct offline_rec {
	uint32_t id;
	bool movable;
};

struct offline_state {
	char path[4096];
	struct offline_rec v[RPM_OFFLINE_MAX];
	size_t n;
};

/* Parse the text of the file; bad lines give -EBADMSG (the good ones are kept). */
int offline_state_parse(const char *text, struct offline_state *s);
/* Load <root>/run/regionpmd/offlined-blocks (missing: empty). */
int offline_state_load(struct offline_state *s, const char *root);
int offline_state_save(const struct offline_state *s);
bool offline_state_has(const struct offline_state *s, uint32_t id, bool *movable);
/* Add (and save) / remove (and save). */
int offline_state_add(struct offline_state *s, uint32_t id, bool movable);
int offline_state_remove(struct offline_state *s, uint32_t id);

/*
 * Online every recorded block that is offline (online_movable when it was
 * movable and may be), drop the ones that are online already, keep the
 * ones that failed.  Returns the number onlined, or -errno of the first
 * failure (the record then keeps what is left).
 */
int offline_state_restore(struct offline_state *s, const char *root, unsigned *n_failed);
