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

#include <libknot/libknot.h>

#include "answer/outcome.h"

const k8s_answer_reply_t k8s_answer_replies[K8S_ANSWER_COUNT] = {
	[K8S_ANSWER_PASS]         = { KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NONE },
	[K8S_ANSWER_HIT]          = { KNOT_RCODE_NOERROR,  false, KNOT_EDNS_EDE_NONE },
	// The CNAME answers; its target's NXDOMAIN is the response's RCODE (RFC 6604).
	[K8S_ANSWER_HIT_NXDOMAIN] = { KNOT_RCODE_NXDOMAIN, false, KNOT_EDNS_EDE_NONE },
	[K8S_ANSWER_NODATA]       = { KNOT_RCODE_NOERROR,  true,  KNOT_EDNS_EDE_NONE },
	[K8S_ANSWER_NXDOMAIN]     = { KNOT_RCODE_NXDOMAIN, true,  KNOT_EDNS_EDE_NONE },
	// What fit, with TC set: the client retries over TCP.
	[K8S_ANSWER_TRUNC]        = { KNOT_RCODE_NOERROR,  false, KNOT_EDNS_EDE_NONE },
	// Until the zone's resources have completed a first LIST: a resolver tries another server.
	[K8S_ANSWER_NOTREADY]     = { KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NOT_READY },
	[K8S_ANSWER_SERVFAIL]     = { KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NONE },
	// A dead target: at once, as the deadline's SERVFAIL would have been (No Reachable Authority).
	[K8S_ANSWER_UNREACHABLE]  = { KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NREACH_AUTH },
	[K8S_ANSWER_REFUSED]      = { KNOT_RCODE_REFUSED,  false, KNOT_EDNS_EDE_NONE },
};
