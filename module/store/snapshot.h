/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

/*!
 * \file
 *
 * \brief The warm restart's snapshot: the store's objects, written to a file and read back.
 *
 * The payload of the snapshot file (snapfile.h) holds the slim objects the
 * store keeps, each in a compact binary form of its fields (module/kinds/form.h
 * describes it, each kind's kind_*.c holds its own), read back without the API's JSON
 * decoder but with its checks.
 * Read back, a snapshot's objects go through the store like a LIST's, so that the
 * first real LIST replaces them: what it does not return is deleted, what it
 * returns unchanged changes nothing. The file is not trusted: framing, every
 * length and count (against the bytes left, K8S_SNAP_ENTRY_MAX, K8S_SNAP_MAX) and
 * every field are checked here; the digest is never read (k8s_object_digest_of() computes it).
 *
 * Payload layout (integers little-endian): u32 complete sources (a bit per
 * k8s_source_t), u32 ready roles (K8S_READY_*), then per object: u8 source,
 * u32 length, that many bytes of the object. Version 1 of the file held JSON
 * objects; such a file is refused by its version (snapfile.h), never misread.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "kinds/form.h"
#include "kinds/objects.h"
#include "store/resources.h"
#include "store/snapfile.h"
#include "store/store.h"

/*! \brief A snapshot read back: objects in file order, each with its source. */
typedef struct {
	uint32_t sources;         /*!< Sources whose objects are complete (bit per k8s_source_t). */
	uint32_t ready;           /*!< K8S_READY_* roles the table had. */
	int64_t created_s;        /*!< When it was written (Unix s). */
	size_t count;
	uint8_t *source_of;       /*!< Per object. */
	k8s_object_t **objects;   /*!< Per object; NULL once handed over. */
} k8s_snapshot_t;

/*!
 * \brief The fingerprint a snapshot carries: \a held, the hash of the watch settings
 * that decide what is held (the watcher's k8s_watcher_conf_hash(), K8S_WCONF_HELD),
 * then the resource table's sources and the kinds' form revisions
 * (k8s_object_forms_hash()).
 */
uint64_t k8s_snapshot_fingerprint(uint64_t held);

/*!
 * \brief The objects a snapshot writes, taken from the store at once: pointers to its
 * immutable objects, source by source, so that another thread may write them while the
 * store goes on (k8s_store_hold() keeps what it lets go of meanwhile).
 */
typedef struct {
	uint32_t sources;                  /*!< The sources taken (bit per k8s_source_t). */
	const k8s_object_t **objects;
	size_t end[K8S_SRC_COUNT];         /*!< Source s's objects end here (and start at s - 1's end). */
} k8s_snapshot_objects_t;

/*!
 * \brief Takes the objects of the \a sources held in \a store (free with
 * k8s_snapshot_objects_free()).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
int k8s_snapshot_take(const k8s_store_t *store, uint32_t sources, k8s_snapshot_objects_t *out);

void k8s_snapshot_objects_free(k8s_snapshot_objects_t *objs);

/*!
 * \brief Writes the objects taken as the payload.
 *
 * \param counts  Out: objects written per source.
 *
 * \retval KNOT_EOK, KNOT_ESPACE (larger than K8S_SNAP_MAX), KNOT_ENOMEM
 */
int k8s_snapshot_encode(const k8s_snapshot_objects_t *objs, uint32_t ready,
                        k8s_buf_t *out, uint64_t counts[K8S_SRC_COUNT]);

/*!
 * \brief Reads a payload: every object or none.
 *
 * \param counts   Objects per source the file's header announces.
 * \param why      Out: why it is refused, for the log line.
 *
 * \retval KNOT_EOK     \a snap holds the objects (free with k8s_snapshot_free()).
 * \retval KNOT_EMALF   refused (\a snap is empty).
 * \retval KNOT_ENOMEM  out of memory (\a snap is empty).
 */
int k8s_snapshot_decode(const char *data, size_t len, const uint64_t counts[K8S_SRC_COUNT],
                        k8s_snapshot_t *snap, char *why, size_t why_len);

/*!
 * \brief What the snapshot's objects will publish, as estimates for k8s_table_reserve():
 * services and imports (\a svcs), their addresses and the endpoints' (\a addrs).
 */
void k8s_snapshot_sizes(const k8s_snapshot_t *snap, size_t *svcs, size_t *addrs);

/*!
 * \brief Hands the objects of the sources the snapshot holds whole (k8s_snapshot_t.sources)
 * to \a store, as one LIST per source, as a warm start does; the objects move (the
 * snapshot keeps those of other sources). The caller commits.
 */
void k8s_snapshot_load(k8s_snapshot_t *snap, k8s_store_t *store);

/*! \brief Frees the objects not handed over. */
void k8s_snapshot_free(k8s_snapshot_t *snap);

/*!
 * \brief Writes the snapshot file \a name in \a dir (aside, keyed, then renamed).
 *
 * \param objects  Out: objects written.
 */
int k8s_snapshot_write(const k8s_snapdir_t *dir, const char *name, uint64_t fingerprint,
                       int64_t now_s, const k8s_snapshot_objects_t *objs, uint32_t ready,
                       size_t *objects);

/*!
 * \brief Reads and checks the snapshot file \a name in \a dir (snapfile.h) and its payload.
 *
 * \retval KNOT_EOK     usable: \a snap holds it.
 * \retval KNOT_ENOENT  no snapshot.
 * \retval KNOT_EMALF   refused; \a why says why (truncated, other version, a key check
 *                      that fails, other settings, too old, an object that does not decode).
 * \retval KNOT_E*      another error.
 */
int k8s_snapshot_read(const k8s_snapdir_t *dir, const char *name, uint64_t fingerprint,
                      int64_t now_s, int64_t max_age_s, k8s_snapshot_t *snap, char *why,
                      size_t why_len);
