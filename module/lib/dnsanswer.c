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

#include <stdio.h>

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

/*! \brief The end of the name at \a pos (compressed or not), or NULL past \a end. */
static const uint8_t *name_skip(const uint8_t *pos, const uint8_t *end)
{
	while (pos < end) {
		uint8_t len = *pos;
		if ((len & 0xc0) == 0xc0) {
			return (end - pos >= 2) ? pos + 2 : NULL;
		} else if ((len & 0xc0) != 0) {
			return NULL;
		} else if (len == 0) {
			return pos + 1;
		}
		pos += 1 + len;
	}
	return NULL;
}

/*! \brief The end of the record at \a pos, its type in \a type; NULL past \a end. */
static const uint8_t *rr_skip(const uint8_t *pos, const uint8_t *end, uint16_t *type)
{
	pos = name_skip(pos, end);
	if (pos == NULL || end - pos < 10) {
		return NULL;
	}
	*type = knot_wire_read_u16(pos);
	uint16_t rdlen = knot_wire_read_u16(pos + 8);
	pos += 10;
	return (end - pos >= rdlen) ? pos + rdlen : NULL;
}

k8s_response_t k8s_response_type(const uint8_t *wire, size_t len)
{
	if (len < KNOT_WIRE_HEADER_SIZE) {
		return K8S_RESPONSE_OTHER;
	}
	uint8_t opcode = knot_wire_get_opcode(wire);
	uint8_t rcode = knot_wire_get_rcode(wire);
	uint16_t qd = knot_wire_get_qdcount(wire), an = knot_wire_get_ancount(wire);
	uint16_t ns = knot_wire_get_nscount(wire);
	if (opcode == KNOT_OPCODE_UPDATE) {
		return K8S_RESPONSE_UPDATE;
	} else if (opcode == KNOT_OPCODE_NOTIFY) {
		return K8S_RESPONSE_META;
	}
	const uint8_t *pos = wire + KNOT_WIRE_HEADER_SIZE, *end = wire + len;
	if (qd > 0) {
		const uint8_t *qend = name_skip(pos, end);
		if (qend != NULL && end - qend >= 4) {
			uint16_t qtype = knot_wire_read_u16(qend);
			if (qtype == KNOT_RRTYPE_AXFR || qtype == KNOT_RRTYPE_IXFR) {
				return K8S_RESPONSE_META;
			}
			pos = qend + 4;
		} else {
			pos = NULL;
		}
	}
	if (an > 0 && rcode == KNOT_RCODE_NOERROR) {
		return K8S_RESPONSE_NOERROR;
	} else if (an > 0 && rcode == KNOT_RCODE_NXDOMAIN) {
		return K8S_RESPONSE_OTHER;
	}
	bool soa = false;
	unsigned nsrr = 0;
	uint16_t type = 0;
	for (uint16_t i = 0; pos != NULL && i < an; i++) {
		pos = rr_skip(pos, end, &type);
	}
	for (uint16_t i = 0; pos != NULL && i < ns; i++) {
		pos = rr_skip(pos, end, &type);
		soa |= (pos != NULL && type == KNOT_RRTYPE_SOA);
		nsrr += (pos != NULL && type == KNOT_RRTYPE_NS);
	}
	if (soa && rcode == KNOT_RCODE_NOERROR) {
		return K8S_RESPONSE_NODATA;
	} else if (rcode == KNOT_RCODE_NXDOMAIN) {
		return K8S_RESPONSE_NXDOMAIN;
	} else if (rcode == KNOT_RCODE_SERVFAIL || rcode == KNOT_RCODE_NOTIMPL) {
		return K8S_RESPONSE_SERVFAIL;
	} else if (nsrr > 0 && rcode == KNOT_RCODE_NOERROR) {
		return K8S_RESPONSE_DELEGATION;
	} else if (rcode == KNOT_RCODE_NOERROR) {
		return K8S_RESPONSE_NOERROR;
	}
	return K8S_RESPONSE_OTHER;
}

k8s_response_class_t k8s_response_class(k8s_response_t type)
{
	switch (type) {
	case K8S_RESPONSE_NOERROR:
	case K8S_RESPONSE_DELEGATION:
		return K8S_RESPONSE_CLASS_SUCCESS;
	case K8S_RESPONSE_NXDOMAIN:
	case K8S_RESPONSE_NODATA:
		return K8S_RESPONSE_CLASS_DENIAL;
	default:
		return K8S_RESPONSE_CLASS_ERROR;
	}
}

const char *k8s_rcode_name(unsigned rcode, char *buf, size_t len)
{
	static const char *names[] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
		"YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"
	};
	if (rcode < sizeof(names) / sizeof(names[0])) {
		return names[rcode];
	}
	snprintf(buf, len, "%u", rcode);
	return buf;
}
