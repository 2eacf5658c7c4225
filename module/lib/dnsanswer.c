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

#include "lib/dnsanswer.h"

bool k8s_soa_minimum(const knot_rdata_t *rdata, uint32_t *minimum)
{
	// Two names, then SERIAL, REFRESH, RETRY, EXPIRE and MINIMUM: each measured first.
	const uint8_t *pos = rdata->data, *end = rdata->data + rdata->len;
	for (int i = 0; i < 2; i++) {
		int size = knot_dname_wire_check(pos, end, NULL);
		if (size <= 0) {
			return false;
		}
		pos += size;
	}
	if (end - pos < 20) {
		return false;
	}
	*minimum = knot_wire_read_u32(pos + 16);
	return true;
}

bool k8s_negative_ttl(const knot_pkt_t *pkt, uint32_t *ttl)
{
	const knot_pktsection_t *ns = knot_pkt_section(pkt, KNOT_AUTHORITY);
	for (uint16_t i = 0; i < ns->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(ns, i);
		uint32_t minimum;
		if (rr->type != KNOT_RRTYPE_SOA || rr->rclass != KNOT_CLASS_IN ||
		    rr->rrs.count == 0 || !k8s_soa_minimum(rr->rrs.rdata, &minimum)) {
			continue;
		}
		*ttl = (rr->ttl < minimum) ? rr->ttl : minimum;
		return true;
	}
	return false;
}
