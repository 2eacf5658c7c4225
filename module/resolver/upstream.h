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
 * \brief An upstream's answer as the module's own answers read it (ExternalName
 * targets, autopath's outside names, federation names): an entry of the one resolver's
 * cache (forward_cache.h), read through these accessors alone (implemented in
 * forward_cache.c), valid until the end of the RCU read-side section it was looked up in.
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libknot/libknot.h>

/*! \brief A cache entry of the forwarder (forward_cache.h). */
typedef struct k8s_fwd_entry k8s_fwd_entry_t;

typedef enum {
	K8S_UPSTREAM_PENDING = 0,  /*!< Not resolved yet, or the last attempts timed out. */
	K8S_UPSTREAM_READY,        /*!< The entry is the answer (NXDOMAIN or a failure maybe, no records maybe). */
} k8s_upstream_status_t;

/*! \brief The upstream's RCODE: NOERROR, NXDOMAIN, or a failure (REFUSED, SERVFAIL...). */
uint16_t k8s_upstream_rcode(const k8s_fwd_entry_t *e);

/*!
 * \brief True if the answer is the upstream's failure (REFUSED, SERVFAIL...): no
 * records, kept until the name is asked again (with backoff), so that queries get
 * an answer at once rather than wait for one.
 */
bool k8s_upstream_failed(const k8s_fwd_entry_t *e);

/*!
 * \brief True if the failure is that no upstream answered within the deadline (a dead
 * target): answered SERVFAIL with Extended DNS Error 22 at once until its retry, where
 * an upstream's own failure (REFUSED, SERVFAIL) leaves an ExternalName's CNAME alone.
 */
bool k8s_upstream_unreachable(const k8s_fwd_entry_t *e);

/*! \brief Seconds the entry has left (0 once expired: a stale answer's TTLs are 0). */
uint32_t k8s_upstream_ttl_left(const k8s_fwd_entry_t *e, uint64_t now_ms);

/*! \brief Where a walk of an answer's chain is (k8s_upstream_next()). */
typedef struct {
	const knot_dname_t *owner;  /*!< The chain's current name; NULL: done. */
	uint16_t next;              /*!< The next record looked at. */
	uint8_t hops;               /*!< CNAMEs followed. */
	bool records;               /*!< Past the CNAMEs: the records of the type. */
} k8s_upstream_iter_t;

/*! \brief Starts a walk of \a e's answer. */
void k8s_upstream_iter_init(const k8s_fwd_entry_t *e, k8s_upstream_iter_t *it);

/*!
 * \brief The next record of the answer: the CNAME chain from the question's name (8 at
 * most, each found by its owner), then the records of the question's type at its end,
 * in the upstream's order; NULL at the end. Records the chain does not reach (another
 * owner, another type) are never returned.
 */
const knot_rrset_t *k8s_upstream_next(const k8s_fwd_entry_t *e, k8s_upstream_iter_t *it);

/*! \brief True if the answer has records of the question's type at its chain's end. */
bool k8s_upstream_has_records(const k8s_fwd_entry_t *e);

/*! \brief True if the answer has no record at all (no CNAME either). */
bool k8s_upstream_empty(const k8s_fwd_entry_t *e);
