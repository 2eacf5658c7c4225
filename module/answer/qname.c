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

#include <arpa/inet.h>
#include <string.h>

#include <libknot/dname.h>

#include "answer/qname.h"

/*!
 * \brief Reads "a-b-c-d" as inet_pton() reads "a.b.c.d": four decimal octets
 * of one to three digits, no leading zero, none above 255.
 *
 * The label (7 to 15 bytes) is first copied into a zeroed buffer by word loads inside
 * it, so that the digits are read without a bound check each: the NUL after the copy
 * ends the last octet, and a NUL inside the label is caught by the length. About 90
 * instructions per pod name instead of 156 (callgrind).
 */
static bool pod_ipv4(const uint8_t *label, k8s_ip_t *ip)
{
	memset(ip, 0, sizeof(*ip));
	ip->family = AF_INET;
	size_t len = label[0];
	// "0-0-0-0" to "255-255-255-255".
	if (len < 7 || len > 15) {
		return false;
	}
	// The label's bytes, then zeros: two octets' lookahead past its end reads zeros.
	uint64_t words[3] = { 0, 0, 0 };
	if (len == 7) {
		uint32_t head, tail;
		memcpy(&head, label + 1, 4);
		memcpy(&tail, label + 4, 4);
		words[0] = head | (uint64_t)tail << 24;
	} else {
		uint64_t tail;
		memcpy(&words[0], label + 1, 8);
		memcpy(&tail, label + 1 + len - 8, 8);
		// Bytes 8 to len - 1 (little-endian); none for 8 (and no shift by 64).
		words[1] = (len > 8) ? tail >> (8 * (16 - len)) : 0;
	}
	const uint8_t *text = (const uint8_t *)words;
	// Little-endian word order assumed above; elsewhere, the byte copy does the same.
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
		memset(words, 0, sizeof(words));
		memcpy(words, label + 1, len);
	}

	const uint8_t *c = text;
	// Unrolled: each octet's end (a dash or the NUL) is a constant.
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		unsigned value = (unsigned)(c[0] - '0');
		if (value > 9) {
			return false;
		}
		unsigned d = (unsigned)(c[1] - '0');
		if (d > 9) {
			c += 1;
		} else if (value == 0) {
			return false;  // A leading zero.
		} else {
			value = value * 10 + d;
			d = (unsigned)(c[2] - '0');
			if (d > 9) {
				c += 2;
			} else {
				value = value * 10 + d;
				if (value > 255) {
					return false;
				}
				c += 3;
			}
		}
		ip->bytes[i] = value;
		// A dash between octets, the end after the last.
		if (*c++ != ((i < 3) ? '-' : 0)) {
			return false;
		}
	}
	return (size_t)(c - 1 - text) == len;
}

bool k8s_qname_pod_ip(const uint8_t *label, k8s_ip_t *ip)
{
	// Most pod names are IPv4: read them by hand, as inet_pton() costs as much
	// as the rest of a pod answer.
	if (pod_ipv4(label, ip)) {
		return true;
	}

	char text[64];
	size_t len = label[0];
	if (len == 0 || len >= sizeof(text)) {
		return false;
	}

	// Three dashes and no empty group is IPv4, anything else IPv6 (CoreDNS's rule).
	size_t dashes = 0;
	bool empty_group = false;
	for (size_t i = 0; i < len; i++) {
		char c = label[1 + i];
		dashes += (c == '-');
		empty_group |= (c == '-' && i + 1 < len && label[2 + i] == '-');
	}
	if (dashes == 3 && !empty_group) {
		return false;  // IPv4 by its shape, but not a valid address.
	}
	for (size_t i = 0; i < len; i++) {
		char c = label[1 + i];
		text[i] = (c == '-') ? ':' : c;
	}
	text[len] = '\0';

	memset(ip, 0, sizeof(*ip));
	ip->family = AF_INET6;
	return inet_pton(AF_INET6, text, ip->bytes) == 1;
}

/*!
 * \brief Room for every label of a name: a wire name has at most 255 bytes, so at most
 * 127 labels (KNOT_DNAME_MAXLABELS). Every name parsed is one: the question knotd's
 * parser checked (knot_dname_wire_check()), or a name built here by libknot's functions
 * within KNOT_DNAME_MAXLEN (a CNAME's target, an autopath step).
 */
#define SPLIT_SLOTS KNOT_DNAME_MAXLABELS

/*!
 * \brief Labels of a name from the left: fills \a labels, returns their count. Every query
 * splits its name, so the loop is six instructions a label: no check of the count in it
 * (4 more a label, about 20 per query, callgrind), as a name's labels all fit.
 */
static size_t split(const uint8_t *name, const uint8_t *labels[SPLIT_SLOTS])
{
	const uint8_t **at = labels;
	for (uint8_t len = *name; len != 0; len = *name) {
		*at++ = name;
		name += 1 + len;
	}
	return at - labels;
}

/*!
 * \brief Reads a decimal octet label (no leading zeros).
 *
 * pod_ipv4() applies the same rule within a label; sharing its digit loop here
 * cost 63 instructions per IPv4 PTR query (callgrind), as the length known up
 * front makes this loop simpler.
 */
static bool octet(const uint8_t *label, uint8_t *out)
{
	size_t len = label[0];
	if (len == 0 || len > 3 || (len > 1 && label[1] == '0')) {
		return false;
	}
	unsigned value = 0;
	for (size_t i = 1; i <= len; i++) {
		if (label[i] < '0' || label[i] > '9') {
			return false;
		}
		value = value * 10 + (label[i] - '0');
	}
	if (value > 255) {
		return false;
	}
	*out = value;
	return true;
}

static bool nibble(const uint8_t *label, uint8_t *out)
{
	if (label[0] != 1) {
		return false;
	}
	uint8_t c = label[1];
	if (c >= '0' && c <= '9') {
		*out = c - '0';
	} else if (c >= 'a' && c <= 'f') {
		*out = c - 'a' + 10;
	} else {
		return false;
	}
	return true;
}

#define MAX_LABELS 40

static void parse_reverse(const uint8_t **labels, size_t n, k8s_qname_t *q)
{
	q->kind = K8S_Q_INVALID;
	memset(&q->ip, 0, sizeof(q->ip));
	// The last two labels are in-addr.arpa or ip6.arpa.
	if (n < 2 || !k8s_label_is(labels[n - 1], "arpa")) {
		return;
	}
	size_t given = n - 2;
	if (k8s_label_is(labels[n - 2], "in-addr")) {
		if (given > 4) {
			return;
		}
		q->ip.family = AF_INET;
		for (size_t i = 0; i < given; i++) {
			// The label next to in-addr is the first octet.
			if (!octet(labels[n - 3 - i], &q->ip.bytes[i])) {
				return;
			}
		}
		q->ip_bits = 8 * given;
	} else if (k8s_label_is(labels[n - 2], "ip6")) {
		if (given > 32) {
			return;
		}
		q->ip.family = AF_INET6;
		for (size_t i = 0; i < given; i++) {
			uint8_t value;
			if (!nibble(labels[n - 3 - i], &value)) {
				return;
			}
			q->ip.bytes[i / 2] |= (i % 2 == 0) ? value << 4 : value;
		}
		q->ip_bits = 4 * given;
	} else {
		return;
	}
	q->kind = K8S_Q_REVERSE;
}

/*!
 * \brief The <ns> of <name>.<ns>.svc.<zone> for a name of more labels than the
 * parse's list holds (\a n of them below the zone), or NULL.
 */
static const uint8_t *long_svc_ns(const uint8_t *qname, size_t n)
{
	if (n < 3) {
		return NULL;
	}
	for (size_t skip = n - 2; skip > 0; skip--) {
		qname += 1 + qname[0];
	}
	return k8s_label_is(qname + 1 + qname[0], "svc") ? qname : NULL;
}

/*! \brief The external role's names (k8s_external): <ns>, <svc>.<ns> and one or two labels below. */
static void parse_external(const uint8_t **labels, size_t n, k8s_qname_t *q)
{
	q->kind = K8S_Q_INVALID;
	q->ns = labels[n - 1];
	if (n == 1) {
		q->kind = K8S_Q_NAMESPACE;
		return;
	}
	q->owner = labels[n - 2];
	q->owner_len = q->ns + 1 + q->ns[0] - q->owner;
	if (n == 2) {
		q->kind = K8S_Q_SERVICE;
		return;
	}
	if (n > 4) {
		return;
	}
	q->kind = K8S_Q_SUBNAME;
	q->sub_count = n - 2;
	q->sub[0] = labels[0];
	q->sub[1] = labels[1];
}

/*!
 * \brief <topology zone>.<directive>._zone below a service (CoreDNS's zonal names): the
 * zone is every label left of the directive, at least one. Only names too long for a
 * service's subnames come here: no cost to the others.
 */
static void parse_zonal(const uint8_t **labels, size_t n, k8s_qname_t *q)
{
	// labels[n - 4] is the label next to the service: _zone; the directive before it.
	if (n < 6 || !k8s_label_is(labels[n - 4], "_zone")) {
		return;
	}
	q->kind = K8S_Q_ZONAL;
	q->directive = labels[n - 5];
	q->topo = labels[0];
	q->topo_size = q->directive - q->topo;
}

void k8s_qname_parse(const uint8_t *qname, const uint8_t *zone, k8s_role_t role, k8s_qname_t *q)
{
	k8s_qname_parse_below(qname, k8s_dname_labels(zone), role, q);
}

void k8s_qname_parse_below(const uint8_t *qname, size_t zone_labels, k8s_role_t role,
                           k8s_qname_t *q)
{
	// Field by field: sub[] is read only below sub_count, ip's bytes only for a pod (set
	// by the pod label's parse) or an address (zeroed by parse_reverse()). A memset()
	// of the whole parse cost 21 instructions per query (callgrind).
	q->owner = NULL;
	q->owner_len = 0;
	q->ns = NULL;
	q->under_pod = false;
	q->sub_count = 0;
	q->ip.family = 0;
	q->ip_bits = 0;
	q->svc_ns = NULL;

	const uint8_t *labels[SPLIT_SLOTS];
	size_t total = split(qname, labels);
	if (total > MAX_LABELS || total < zone_labels) {
		q->kind = K8S_Q_INVALID;
		if (total > MAX_LABELS && role != K8S_ROLE_REVERSE) {
			q->svc_ns = long_svc_ns(qname, total - zone_labels);
		}
		return;
	}
	size_t n = total - zone_labels;  // Labels below the zone apex.
	if (n == 0) {
		q->kind = K8S_Q_APEX;
		return;
	}

	if (role == K8S_ROLE_REVERSE) {
		parse_reverse(labels, total, q);
		return;
	}
	if (role == K8S_ROLE_EXTERNAL) {
		parse_external(labels, n, q);
		return;
	}

	q->kind = K8S_Q_INVALID;
	const uint8_t *kind_label = labels[n - 1];  // Next to the apex: svc or pod.
	if (n == 1) {
		if (k8s_label_is(kind_label, "dns-version")) {
			q->kind = K8S_Q_DNS_VERSION;
		} else if (k8s_label_is(kind_label, "svc")) {
			q->kind = K8S_Q_SVC_ROOT;
		} else if (k8s_label_is(kind_label, "pod")) {
			q->kind = K8S_Q_POD_ROOT;
		}
		return;
	}

	bool svc = k8s_label_is(kind_label, "svc");
	bool pod = k8s_label_is(kind_label, "pod");
	if (!svc && !pod) {
		return;
	}
	q->ns = labels[n - 2];
	if (n == 2) {
		q->kind = K8S_Q_NAMESPACE;
		q->under_pod = pod;
		return;
	}
	if (svc) {
		q->svc_ns = q->ns;
	}

	if (pod) {
		// Pods have names only in the cluster zone.
		if (n == 3 && role == K8S_ROLE_CLUSTER && k8s_qname_pod_ip(labels[0], &q->ip)) {
			q->kind = K8S_Q_POD;
		}
		return;
	}

	q->owner = labels[n - 3];
	q->owner_len = kind_label - q->owner;
	if (n == 3) {
		q->kind = K8S_Q_SERVICE;
		return;
	}

	// Below a service: _port._proto, <endpoint>, <hostname>.<clusterid> (one or two labels).
	size_t sub = n - 3;
	size_t max_sub = (role == K8S_ROLE_CLUSTERSET) ? 3 : 2;
	if (sub > max_sub) {
		if (role == K8S_ROLE_CLUSTER) {
			parse_zonal(labels, n, q);
		}
		return;
	}
	q->kind = K8S_Q_SUBNAME;
	q->sub_count = sub;
	// All three, without a loop: n >= 4 labels below the zone, labels[0..2] are set.
	_Static_assert(K8S_QNAME_MAX_SUB == 3, "sub[] copied whole");
	q->sub[0] = labels[0];
	q->sub[1] = labels[1];
	q->sub[2] = labels[2];
}
