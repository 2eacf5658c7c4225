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
 * \brief The kept names' cache entries (keeper.h): a response made into one
 * immutable block (the kept names', forward/keeper.c).
 */

#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include <libknot/packet/pkt.h>

#include "upstream/upstream.h"

/*! \brief A published answer with its key, in one allocation (the answer follows it). */
typedef struct {
	uint32_t hash;                 /*!< Of (name, qtype, source). */
	uint16_t qtype;
	atomic_bool used;              /*!< Looked up since published (the one field readers write). */
	const knot_dname_t *name;      /*!< Key: the asked name, at the end of the allocation. */
	const uint8_t *source;         /*!< Key: the source-cluster label (after the name), or NULL. */
	k8s_upstream_answer_t *ans;    /*!< Right after this header. */
} k8s_upstream_entry_t;

/*!
 * \brief Makes a cache entry of a NOERROR or NXDOMAIN response.
 *
 * Expiry follows the shortest TTL of the chain; a negative answer (no records
 * of the type) also lasts no longer than its SOA allows.
 *
 * \param source  Source-cluster label of the key (a forwarder's), or NULL.
 * \param hash    Of (name, qtype, source), the cache key.
 *
 * \retval KNOT_EOK, KNOT_ELIMIT (a longer CNAME chain), KNOT_ESPACE (too large), KNOT_ENOMEM
 */
int k8s_upstream_entry_build(const knot_pkt_t *pkt, const knot_dname_t *name, uint16_t qtype,
                             const uint8_t *source, uint16_t rcode, uint64_t now, uint32_t hash,
                             k8s_upstream_entry_t **out);

/*!
 * \brief Makes a cache entry of an upstream's failure: no records, \a rcode (REFUSED,
 * SERVFAIL...), running out at \a expires (monotonic seconds).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
int k8s_upstream_entry_failure(const knot_dname_t *name, uint16_t qtype, const uint8_t *source,
                               uint16_t rcode, uint32_t expires, uint32_t hash,
                               k8s_upstream_entry_t **out);
