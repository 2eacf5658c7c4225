/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * The query-name parser on any name knotd can hand it: a lowercase wire name
 * below one of the zones mod-k8s serves. Every part it returns must point
 * into the name, and a dashed pod address must read back as its label.
 *
 * Input: a byte choosing the zone, then labels as in wire format (a length
 * byte, of which the low six bits count, then the bytes); the zone is appended.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "answer/qname.h"
#include "fz_check.h"

static const struct {
	const char *wire;
	k8s_role_t role;
} zones[] = {
	{ "\x07" "cluster" "\x05" "local", K8S_ROLE_CLUSTER },
	{ "\x0a" "clusterset" "\x05" "local", K8S_ROLE_CLUSTERSET },
	{ "\x07" "in-addr" "\x04" "arpa", K8S_ROLE_REVERSE },
	{ "\x02" "10" "\x07" "in-addr" "\x04" "arpa", K8S_ROLE_REVERSE },
	{ "\x03" "ip6" "\x04" "arpa", K8S_ROLE_REVERSE },
	{ "\x01" "d" "\x01" "f" "\x03" "ip6" "\x04" "arpa", K8S_ROLE_REVERSE },
	{ "\x03" "k8s", K8S_ROLE_CLUSTER },
	{ "\x07" "example", K8S_ROLE_EXTERNAL },
};

static bool inside(const uint8_t *name, size_t size, const uint8_t *p, size_t len)
{
	return p >= name && p <= name + size && len <= (size_t)(name + size - p);
}

static bool is_label(const uint8_t *name, size_t size, const uint8_t *label)
{
	return inside(name, size, label, 1) && label[0] >= 1 && inside(name, size, label, 1 + label[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0) {
		return 0;
	}
	unsigned z = data[0] % (sizeof(zones) / sizeof(zones[0]));
	const uint8_t *zone = (const uint8_t *)zones[z].wire;
	size_t zone_size = strlen(zones[z].wire) + 1;

	uint8_t qname[KNOT_DNAME_MAXLEN];
	size_t len = 0;
	for (size_t i = 1; i < size; ) {
		size_t label = data[i++] & 63;
		if (label == 0) {
			continue;
		}
		if (label > size - i) {
			label = size - i;
		}
		if (label == 0 || len + 1 + label + zone_size > KNOT_DNAME_MAXLEN) {
			break;
		}
		qname[len++] = label;
		memcpy(qname + len, data + i, label);
		len += label;
		i += label;
	}
	memcpy(qname + len, zone, zone_size);
	size_t qsize = len + zone_size;
	CHECK(knot_dname_size(qname) == qsize);
	knot_dname_to_lower(qname);

	k8s_qname_t q;
	k8s_qname_parse(qname, zone, zones[z].role, &q);
	CHECK(q.kind <= K8S_Q_ZONAL);
	if (q.owner != NULL) {
		CHECK(q.owner_len >= 4 && inside(qname, qsize, q.owner, q.owner_len));
		CHECK(is_label(qname, qsize, q.owner));
	}
	if (q.ns != NULL) {
		CHECK(is_label(qname, qsize, q.ns));
	}
	CHECK(q.sub_count <= K8S_QNAME_MAX_SUB);
	for (unsigned i = 0; i < q.sub_count; i++) {
		CHECK(is_label(qname, qsize, q.sub[i]));
	}
	CHECK(q.ip.family == 0 || q.ip.family == AF_INET || q.ip.family == AF_INET6);
	CHECK(q.ip_bits <= 128);
	if (q.kind == K8S_Q_POD) {
		CHECK(q.ip.family != 0);
	}
	if (q.kind == K8S_Q_ZONAL) {
		// Whole labels: the topology zone's run ends where the directive label starts.
		CHECK(zones[z].role == K8S_ROLE_CLUSTER && q.topo_size >= 2);
		CHECK(inside(qname, qsize, q.topo, q.topo_size) && is_label(qname, qsize, q.topo));
		CHECK(q.topo + q.topo_size == q.directive && is_label(qname, qsize, q.directive));
		CHECK(q.owner != NULL && q.ns != NULL);
	}

	// Each label as a pod label: a dashed IPv4 address reads back as the label itself.
	for (const uint8_t *l = qname; *l != 0; l += 1 + *l) {
		k8s_ip_t ip;
		if (!k8s_qname_pod_ip(l, &ip)) {
			continue;
		}
		CHECK(ip.family == AF_INET || ip.family == AF_INET6);
		if (ip.family == AF_INET) {
			char text[64];
			int n = snprintf(text, sizeof(text), "%u-%u-%u-%u",
			                 ip.bytes[0], ip.bytes[1], ip.bytes[2], ip.bytes[3]);
			CHECK(n == l[0] && memcmp(text, l + 1, n) == 0);
		}
	}
	return 0;
}
