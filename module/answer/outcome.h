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
 * \brief The outcomes of an answer and what each one replies: the response's
 * RCODE, its Extended DNS Error, and whether the zone's SOA follows.
 *
 * The one place that says so: the ANSWER hook (k8s.c) sets knotd's RCODE and EDE
 * from it, the cold waiter (coldwait.c) builds its late responses from it. What
 * knotd's state is and which counter counts an outcome are the glue's.
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

/*! \brief The outcome of an answer (k8s_answer() and the roles' answers). */
typedef enum {
	K8S_ANSWER_PASS = 0,     /*!< Not ours (zone apex): leave knotd's result. */
	K8S_ANSWER_HIT,          /*!< Records put. */
	K8S_ANSWER_HIT_NXDOMAIN, /*!< CNAME put, its target does not exist. */
	K8S_ANSWER_NODATA,       /*!< The name exists without records of the type. */
	K8S_ANSWER_NXDOMAIN,     /*!< No such name. */
	K8S_ANSWER_TRUNC,        /*!< Did not fit; TC is set. */
	K8S_ANSWER_NOTREADY,     /*!< First sync not complete. */
	K8S_ANSWER_SERVFAIL,     /*!< The upstream for an ExternalName failed, or no memory. */
	K8S_ANSWER_UNREACHABLE,  /*!< A name outside our zones whose upstreams did not answer
	                              within the deadline, until its retry (EDE 22). */
	K8S_ANSWER_REFUSED,      /*!< An autopath search list over K8S_AUTOPATH_MAX_LISTED domains,
	                              or a federation without nameservers (K8S-DNS role). */
	K8S_ANSWER_COUNT
} k8s_answer_t;

/*! \brief What an outcome replies. */
typedef struct {
	uint8_t rcode;   /*!< The response's RCODE (KNOT_RCODE_*). */
	bool negative;   /*!< No records of ours: the zone's SOA goes in the authority section. */
	int16_t ede;     /*!< Its Extended DNS Error (KNOT_EDNS_EDE_*), or KNOT_EDNS_EDE_NONE. */
} k8s_answer_reply_t;

/*!
 * \brief The reply of each outcome, indexed by k8s_answer_t. K8S_ANSWER_PASS leaves
 * knotd's answer in a worker; late, where knotd has none, it is SERVFAIL.
 */
extern const k8s_answer_reply_t k8s_answer_replies[K8S_ANSWER_COUNT];
