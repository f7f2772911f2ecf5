/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of the memory blocks regionpmd offlined itself:
 * <root>/run/regionpmd/offlined-blocks, one line per block, "ID ZONE"
 * (ZONE: the zone the block was in, as valid_zones named it: "Movable" is
 * onlined back as online_movable, the others as online_kernel; records
 * of regionpmd before 2026-12-06 say "Normal" for every kernel zone).  A stock kernel gives nothing back when
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
	char zone[16];
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
/* The zone block @id was in when regionpmd offlined it, or NULL: not ours. */
const char *offline_state_zone(const struct offline_state *s, uint32_t id);
/* Add (and save; -EINVAL for a zone name valid_zones would not print) / remove (and save). */
int offline_state_add(struct offline_state *s, uint32_t id, const char *zone);
int offline_state_remove(struct offline_state *s, uint32_t id);

/*
 * Online the offline block of @rec into its zone (memblock_online_into();
 * @offered: its valid_zones, as just read); a warning if it came back in
 * another zone.  Returns the write's -errno.
 */
int offline_state_online(const char *root, const struct offline_rec *rec, const char *offered);

/*
 * Online every recorded block that is offline (offline_state_online()),
 * drop the ones that are online already, keep the ones that failed.  Returns the number onlined, or -errno of the first
 * failure (the record then keeps what is left).
 */
int offline_state_restore(struct offline_state *s, const char *root, unsigned *n_failed);
