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

/*
 * A query answered from the hosts table, as CoreDNS's hosts plugin answers it
 * (hosts.go ServeDNS): PTR for any name, from the addresses' names, else passed on;
 * A and AAAA of the names in the zones; a name with addresses of another type
 * NODATA; an unknown name of the zones passed on with fallthrough, else SERVFAIL
 * ("because of /etc/hosts' setup we don't have a SOA"). Prebuilt rdatasets are put
 * as they are.
 */

#include <arpa/inet.h>
#include <string.h>

#include "hosts/hosts.h"

static const uint8_t IN_ADDR[] = "\x07""in-addr""\x04""arpa";
static const uint8_t IP6[] = "\x03""ip6""\x04""arpa";

/*! \brief A decimal label of 0..255 without leading zeros, as Go's ParseIP reads an IPv4 part. */
static bool octet(const uint8_t *label, uint8_t *out)
{
	if (label[0] == 0 || label[0] > 3 || (label[0] > 1 && label[1] == '0')) {
		return false;
	}
	unsigned v = 0;
	for (uint8_t i = 1; i <= label[0]; i++) {
		if (label[i] < '0' || label[i] > '9') {
			return false;
		}
		v = v * 10 + (label[i] - '0');
	}
	*out = (uint8_t)v;
	return v <= 255;
}

static int nibble(const uint8_t *label)
{
	if (label[0] != 1) {
		return -1;
	}
	uint8_t c = label[1];
	return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

int k8s_hosts_reverse(const knot_dname_t *name, uint8_t bytes[16])
{
	const uint8_t *labels[32];
	size_t n = 0;
	const uint8_t *at = name;
	for (; n < 32 && *at != 0; at += 1 + *at) {
		labels[n++] = at;
		if (n == 4 && memcmp(at + 1 + *at, IN_ADDR, sizeof(IN_ADDR)) == 0) {
			for (size_t i = 0; i < 4; i++) {
				if (!octet(labels[i], &bytes[3 - i])) {
					return 0;
				}
			}
			return AF_INET;
		}
	}
	if (n != 32 || memcmp(at, IP6, sizeof(IP6)) != 0) {
		return 0;
	}
	memset(bytes, 0, 16);
	for (size_t i = 0; i < 32; i++) {
		int v = nibble(labels[i]);
		if (v < 0) {
			return 0;
		}
		size_t pos = 31 - i;  // The last label is the address's first nibble.
		bytes[pos / 2] |= (pos % 2 == 0) ? v << 4 : v;
	}
	return AF_INET6;
}

static k8s_hosts_result_t put(knot_pkt_t *pkt, const knot_dname_t *qname, uint16_t type,
                              uint32_t ttl, const knot_rdataset_t *rrs)
{
	knot_rrset_t rr;
	knot_rrset_init(&rr, (knot_dname_t *)qname, type, KNOT_CLASS_IN, ttl);
	rr.rrs = *rrs;
	switch (knot_pkt_put(pkt, KNOT_COMPR_HINT_QNAME, &rr, 0)) {
	case KNOT_EOK:    return K8S_HOSTS_HIT;
	case KNOT_ESPACE: return K8S_HOSTS_TRUNC;
	default:          return K8S_HOSTS_ERROR;
	}
}

k8s_hosts_result_t k8s_hosts_answer(const k8s_hosts_t *h, const k8s_hosts_conf_t *conf,
                                    const knot_dname_t *qname, uint16_t qtype, knot_pkt_t *pkt)
{
	// PTR for any name: the reverse zones need not be among the zones.
	if (qtype == KNOT_RRTYPE_PTR) {
		uint8_t bytes[16];
		int family = k8s_hosts_reverse(qname, bytes);
		const knot_rdataset_t *names = (family != 0) ? k8s_hosts_names(h, family, bytes) : NULL;
		return (names != NULL) ? put(pkt, qname, KNOT_RRTYPE_PTR, conf->ttl, names)
		                       : K8S_HOSTS_PASS;
	}
	if (conf->zone_count > 0 && !k8s_hosts_under(qname, conf->zones, conf->zone_count)) {
		return K8S_HOSTS_PASS;
	}
	const knot_rdataset_t *v4 = k8s_hosts_addrs(h, qname, AF_INET);
	const knot_rdataset_t *v6 = k8s_hosts_addrs(h, qname, AF_INET6);
	if (qtype == KNOT_RRTYPE_A && v4 != NULL) {
		return put(pkt, qname, KNOT_RRTYPE_A, conf->ttl, v4);
	}
	if (qtype == KNOT_RRTYPE_AAAA && v6 != NULL) {
		return put(pkt, qname, KNOT_RRTYPE_AAAA, conf->ttl, v6);
	}
	bool fall = k8s_hosts_under(qname, conf->fall, conf->fall_count);
	if (qtype != KNOT_RRTYPE_A && qtype != KNOT_RRTYPE_AAAA && conf->fall_unsupported && fall) {
		return K8S_HOSTS_PASS;
	}
	if (v4 == NULL && v6 == NULL) {
		return fall ? K8S_HOSTS_PASS : K8S_HOSTS_SERVFAIL;
	}
	return K8S_HOSTS_NODATA;
}
