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
 * targets, autopath's outside names, federation names): the kept names' entries
 * (keeper.h, resolved by the forwarder core, forward/keeper.c), one immutable block
 * readable until the end of the RCU read-side section. Types only: the one resolver
 * is the forwarder's (forward/forward.h).
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libknot/libknot.h>

/*! \brief A cached upstream answer: immutable, readable until the end of the RCU read-side section. */
typedef struct {
	uint16_t rcode;         /*!< Upstream RCODE: NOERROR, NXDOMAIN, or a failure (count 0). */
	uint16_t count;         /*!< RRsets of the answer section (CNAME chain first, then the addresses). */
	uint32_t expires;       /*!< Monotonic seconds (k8s_now_ms() / 1000) when it runs out. */
	knot_rrset_t rrsets[];  /*!< Owners and rdata live inside this allocation. */
} k8s_upstream_answer_t;

/*!
 * \brief True if the answer is the upstream's failure (REFUSED, SERVFAIL...): no
 * records, kept until the name is asked again (with backoff), so that queries get
 * an answer at once rather than wait for one.
 */
static inline bool k8s_upstream_failed(const k8s_upstream_answer_t *ans)
{
	return ans->rcode != KNOT_RCODE_NOERROR && ans->rcode != KNOT_RCODE_NXDOMAIN;
}

typedef enum {
	K8S_UPSTREAM_PENDING = 0,  /*!< Not resolved yet, or the last attempts timed out. */
	K8S_UPSTREAM_READY,        /*!< \a ans holds the answer (rcode may be NXDOMAIN or a failure, count may be 0). */
} k8s_upstream_status_t;
