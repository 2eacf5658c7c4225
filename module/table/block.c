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
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/dname.h>
#include <libknot/rdata.h>

#include "table/block.h"
#include "lib/bulk.h"

/* Labels. */

/*! \brief A byte's decimal digits without leading zeros: how many, then the digits, zero-padded. */
#define DIGITS(v) { ((v) >= 100) ? 3 : ((v) >= 10) ? 2 : 1, \
	((v) >= 100) ? '0' + (v) / 100 : ((v) >= 10) ? '0' + (v) / 10 : '0' + (v), \
	((v) >= 100) ? '0' + (v) / 10 % 10 : ((v) >= 10) ? '0' + (v) % 10 : 0, \
	((v) >= 100) ? '0' + (v) % 10 : 0 }
#define DIGITS4(v) DIGITS(v), DIGITS((v) + 1), DIGITS((v) + 2), DIGITS((v) + 3)
#define DIGITS16(v) DIGITS4(v), DIGITS4((v) + 4), DIGITS4((v) + 8), DIGITS4((v) + 12)
#define DIGITS64(v) DIGITS16(v), DIGITS16((v) + 16), DIGITS16((v) + 32), DIGITS16((v) + 48)
static const uint8_t DECIMAL[256][4] = { DIGITS64(0), DIGITS64(64), DIGITS64(128), DIGITS64(192) };

/*! \brief Writes a byte in decimal without leading zeros; returns the digits written. */
static size_t put_decimal(uint8_t *out, uint8_t value)
{
	// Three bytes at once: the zeros past the digits are overwritten or end the label's padding.
	memcpy(out, DECIMAL[value] + 1, 3);
	return DECIMAL[value][0];
}

/*! \brief The dashed form of an address (CoreDNS compatible) as a wire label; returns its size. */
static size_t dashed_label(uint8_t family, const uint8_t *bytes, uint8_t out[64])
{
	// IPv4 by hand: inet_ntop() formats with sprintf(), which costs more than a whole PTR answer.
	if (family == AF_INET) {
		size_t len = 0;
		for (int i = 0; i < 4; i++) {
			if (i > 0) {
				out[1 + len++] = '-';
			}
			len += put_decimal(out + 1 + len, bytes[i]);
		}
		out[0] = len;
		return 1 + len;
	}
	char text[INET6_ADDRSTRLEN];
	if (inet_ntop(family, bytes, text, sizeof(text)) == NULL) {
		out[0] = 0;
		return 1;
	}
	size_t len = 0;
	for (const char *c = text; *c != '\0'; c++) {
		out[1 + len++] = (*c == '.' || *c == ':') ? '-' : *c;
	}
	if (out[len] == '-') {
		out[1 + len++] = '0';
	}
	out[0] = len;
	return 1 + len;
}

static void label_set(uint8_t *label, const char *text)
{
	size_t len = strlen(text);
	label[0] = len;
	memcpy(label + 1, text, len);
}

/*!
 * \brief Orders two records' labels as k8s_block_cmp() orders them: by length, then bytes.
 *
 * A record's label is zero past its length (k8s_block_ent_init() clears the
 * record), so equal lengths compare as big-endian words, a sort's hot path.
 */
static int label_cmp(const uint8_t a[64], const uint8_t b[64])
{
	if (a[0] != b[0]) {
		return (a[0] < b[0]) ? -1 : 1;
	}
	for (size_t i = 0; i <= a[0]; i += sizeof(uint64_t)) {
		uint64_t x, y;
		memcpy(&x, a + i, sizeof(x));
		memcpy(&y, b + i, sizeof(y));
		if (x != y) {
			return (be64toh(x) < be64toh(y)) ? -1 : 1;
		}
	}
	return 0;
}

/* Readers. */

size_t k8s_addr_label(const k8s_block_t *svc, const k8s_addr_t *addr, uint8_t out[64])
{
	if (addr->label != 0) {
		const uint8_t *label = svc->strings + addr->label;
		memcpy(out, label, 1 + label[0]);
		return 1 + label[0];
	}
	return dashed_label(addr->family, addr->bytes, out);
}

const uint8_t *k8s_addr_cluster(const k8s_block_t *svc, const k8s_addr_t *addr, size_t *size)
{
	if (svc->cluster_count == 0) {
		*size = 0;
		return NULL;
	}
	const uint8_t *labels = svc->strings + svc->clusters[addr->cluster];
	// A cluster id is stored as one or two labels followed by a zero byte.
	size_t len = 0;
	while (labels[len] != 0) {
		len += 1 + labels[len];
	}
	*size = len;
	return labels;
}

/*! \brief Compares an endpoint record's (cluster, label) to a key. */
static int endpoint_cmp(const k8s_block_t *svc, const k8s_addr_t *addr,
                        const uint8_t *cluster, size_t cluster_size,
                        const uint8_t *label, size_t label_size)
{
	if (cluster != NULL) {
		size_t size;
		const uint8_t *own = k8s_addr_cluster(svc, addr, &size);
		int cmp = k8s_block_cmp(own, size, cluster, cluster_size);
		if (cmp != 0) {
			return cmp;
		}
	}
	uint8_t own[64];
	size_t size = k8s_addr_label(svc, addr, own);
	return k8s_block_cmp(own, size, label, label_size);
}

const k8s_addr_t *k8s_svc_endpoints(const k8s_block_t *svc, const uint8_t *cluster,
                                    size_t cluster_size, const uint8_t *label, size_t *count)
{
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t n = svc->addr_count - svc->sip_count;
	size_t label_size = 1 + label[0];

	// Lower bound of the key, then count the equal run.
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (endpoint_cmp(svc, &eps[mid], cluster, cluster_size, label, label_size) < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	size_t end = lo;
	while (end < n &&
	       endpoint_cmp(svc, &eps[end], cluster, cluster_size, label, label_size) == 0) {
		end++;
	}
	*count = end - lo;
	return (end > lo) ? &eps[lo] : NULL;
}

bool k8s_svc_has_cluster(const k8s_block_t *svc, const uint8_t *cluster, size_t cluster_size)
{
	for (uint32_t i = svc->sip_count; i < svc->addr_count; i++) {
		size_t size;
		const uint8_t *own = k8s_addr_cluster(svc, &svc->addrs[i], &size);
		if (own != NULL && k8s_block_cmp(own, size, cluster, cluster_size) == 0) {
			return true;
		}
	}
	return false;
}

size_t k8s_svc_owner(const char *ns, const char *name, uint8_t out[128])
{
	size_t ns_len = strlen(ns), name_len = strlen(name);
	if (ns_len == 0 || ns_len > 63 || name_len == 0 || name_len > 63) {
		return 0;
	}
	out[0] = name_len;
	memcpy(out + 1, name, name_len);
	out[1 + name_len] = ns_len;
	memcpy(out + 2 + name_len, ns, ns_len);
	return 2 + name_len + ns_len;
}

/* Writer. */

void k8s_block_ent_init(k8s_block_ent_t *ent, const k8s_ip_t *ip, uint32_t cluster,
                        const char *label)
{
	memset(ent, 0, sizeof(*ent));
	ent->ip = *ip;
	ent->cluster = cluster;
	if (label != NULL) {
		ent->explicit_label = true;
		label_set(ent->label, label);
	} else {
		dashed_label(ip->family, ip->bytes, ent->label);
	}
}

int k8s_block_ent_cmp(const void *a, const void *b)
{
	const k8s_block_ent_t *x = a, *y = b;
	if (x->cluster != y->cluster) {
		return (x->cluster < y->cluster) ? -1 : 1;
	}
	int cmp = label_cmp(x->label, y->label);
	return (cmp != 0) ? cmp : k8s_ip_cmp(&x->ip, &y->ip);
}

bool k8s_block_same_name(const k8s_block_ent_t *a, const k8s_block_ent_t *b)
{
	return a->cluster == b->cluster && label_cmp(a->label, b->label) == 0;
}

void k8s_block_name_endpoints(k8s_block_ent_t *eps, size_t count)
{
	for (size_t i = 0, end; i < count; i = end) {
		bool explicit_label = false;
		for (end = i; end < count && k8s_block_same_name(&eps[i], &eps[end]); end++) {
			explicit_label = explicit_label || eps[end].explicit_label;
		}
		for (size_t j = i; j < end; j++) {
			eps[j].explicit_label = explicit_label;
		}
	}
}

/*!
 * \brief True if an endpoint's label is stored once with the previous endpoint's.
 *
 * The block's size and its filling both follow this: they must agree.
 */
static bool label_shared(const k8s_block_ent_t *prev, const k8s_block_ent_t *ent)
{
	return ent->explicit_label && prev != NULL && prev->explicit_label &&
	       label_cmp(prev->label, ent->label) == 0;
}

/*! \brief True if a port's name is stored once with the previous port's (equal names are adjacent). */
static bool port_name_shared(const k8s_block_parts_t *p, size_t i)
{
	return i > 0 && strcmp(p->ports[i - 1].name, p->ports[i].name) == 0;
}

/*! \brief Bytes of the strings: offset 0 unused, then labels (see label_shared()), port names, cluster ids. */
static size_t strings_size(const k8s_block_parts_t *p)
{
	size_t size = 1;
	for (size_t i = 0; i < p->ep_count; i++) {
		if (p->eps[i].explicit_label &&
		    !label_shared((i > 0) ? &p->eps[i - 1] : NULL, &p->eps[i])) {
			size += 1 + p->eps[i].label[0];
		}
	}
	for (size_t i = 0; i < p->port_count; i++) {
		size += port_name_shared(p, i) ? 0 : 1 + strlen(p->ports[i].name);
	}
	return size + p->cluster_bytes + p->topo_bytes;
}

/*! \brief Addresses of a family in the service name's answer. */
static size_t answer_count(const k8s_block_parts_t *p, uint8_t family)
{
	size_t n = 0;
	for (size_t i = 0; i < p->answer_count; i++) {
		n += (p->answer[i].family == family);
	}
	return n;
}

/*! \brief Fills an rdataset with the answer's addresses of a family. */
static uint8_t *fill_rrs(knot_rdataset_t *rrs, uint8_t *pos, const k8s_block_parts_t *p,
                         uint8_t family)
{
	rrs->rdata = (knot_rdata_t *)pos;
	rrs->count = 0;
	for (size_t i = 0; i < p->answer_count; i++) {
		if (p->answer[i].family != family) {
			continue;
		}
		knot_rdata_init((knot_rdata_t *)pos, k8s_ip_len(family), p->answer[i].bytes);
		pos += knot_rdata_size(k8s_ip_len(family));
		rrs->count++;
	}
	rrs->size = pos - (uint8_t *)rrs->rdata;
	if (rrs->count == 0) {
		rrs->rdata = NULL;
	}
	return pos;
}

/*! \brief Fills the address records: service IPs, then endpoints with their labels. */
static size_t fill_addrs(k8s_block_t *svc, uint8_t *strings, size_t str_pos,
                         const k8s_block_parts_t *p)
{
	size_t addr_count = p->sip_count + p->ep_count;
	for (size_t i = 0; i < addr_count; i++) {
		bool sip = i < p->sip_count;
		size_t ep = i - p->sip_count;
		const k8s_ip_t *ip = sip ? &p->sips[i] : &p->eps[ep].ip;
		k8s_addr_t *addr = &svc->addrs[i];
		memcpy(addr->bytes, ip->bytes, k8s_ip_len(ip->family));
		addr->family = ip->family;
		addr->idx = i;
		addr->flags = sip ? K8S_ADDR_SERVICE_IP : 0;
		if (sip) {
			continue;
		}
		const k8s_block_ent_t *ent = &p->eps[ep];
		if (p->zone == K8S_ZONE_CLUSTERSET) {
			addr->cluster = ent->cluster;
		} else {
			addr->topo = ent->topo;
		}
		if (!ent->explicit_label) {
			continue;
		}
		if (label_shared((ep > 0) ? &p->eps[ep - 1] : NULL, ent)) {
			addr->label = svc->addrs[i - 1].label;
		} else {
			addr->label = str_pos;
			memcpy(strings + str_pos, ent->label, 1 + ent->label[0]);
			str_pos += 1 + ent->label[0];
		}
	}
	return str_pos;
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

k8s_block_t *k8s_block_new(const k8s_block_parts_t *p)
{
	size_t a_count = answer_count(p, AF_INET);
	size_t aaaa_count = answer_count(p, AF_INET6);
	size_t rdata_size = a_count * knot_rdata_size(k8s_ip_len(AF_INET)) +
	                    aaaa_count * knot_rdata_size(k8s_ip_len(AF_INET6));
	size_t target_size = (p->target != NULL) ? knot_dname_size(p->target) : 0;

	// Layout: header and records, ports, cluster offsets, topology zone offsets, the endpoints' port
	// sets, rdata, owner, target, ingress, externals, strings.
	size_t addr_count = p->sip_count + p->ep_count;
	size_t ingress_size = (p->ingress_count > 0) ? K8S_INGRESS_MAX * sizeof(k8s_ip_t) : 0;
	size_t externals_size = p->external_count * sizeof(k8s_ip_t);
	size_t ep_ports_count = (p->port_sets != NULL) ? p->ep_count : 0;
	size_t off_ports = ALIGN8(sizeof(k8s_block_t) + addr_count * sizeof(k8s_addr_t));
	size_t off_clusters = off_ports + p->port_count * sizeof(k8s_svc_port_t);
	size_t off_topo = off_clusters + p->cluster_count * sizeof(uint32_t);
	size_t off_ep_ports = off_topo + p->topo_count * sizeof(uint32_t);
	size_t off_port_sets = off_ep_ports + ep_ports_count * sizeof(uint32_t);
	size_t port_sets_size = (p->port_sets != NULL) ? p->port_sets_len * sizeof(uint16_t) : 0;
	size_t off_rdata = ALIGN8(off_port_sets + port_sets_size);
	size_t off_owner = off_rdata + rdata_size;
	size_t off_target = off_owner + p->owner_len;
	size_t off_ingress = off_target + target_size;
	size_t off_externals = off_ingress + ingress_size;
	size_t off_strings = off_externals + externals_size;
	size_t size = off_strings + strings_size(p);
	if (size > UINT32_MAX) {
		return NULL;
	}

	uint8_t *mem = k8s_bulk_calloc(size);
	if (mem == NULL) {
		return NULL;
	}
	k8s_block_t *svc = (k8s_block_t *)mem;
	svc->zone = p->zone;
	svc->type = p->type;
	svc->size = size;
	svc->ready_count = p->ready_count;
	svc->capped = (p->capped < UINT32_MAX) ? p->capped : UINT32_MAX;
	svc->owner = memcpy(mem + off_owner, p->owner, p->owner_len);
	svc->owner_len = p->owner_len;
	svc->target = (target_size > 0) ? memcpy(mem + off_target, p->target, target_size) : NULL;
	if (ingress_size > 0) {
		size_t n = (p->ingress_count < K8S_INGRESS_MAX) ? p->ingress_count : K8S_INGRESS_MAX;
		svc->ingress = memcpy(mem + off_ingress, p->ingress, n * sizeof(k8s_ip_t));
	}
	if (p->external_count > 0) {
		svc->externals = memcpy(mem + off_externals, p->externals, externals_size);
		svc->external_count = p->external_count;
		svc->external_listed = p->external_listed;
	}
	uint8_t *strings = mem + off_strings;
	svc->strings = strings;

	uint8_t *pos = fill_rrs(&svc->rrs_a, mem + off_rdata, p, AF_INET);
	fill_rrs(&svc->rrs_aaaa, pos, p, AF_INET6);

	svc->addr_count = addr_count;
	svc->sip_count = p->sip_count;
	size_t str_pos = fill_addrs(svc, strings, 1, p);

	k8s_svc_port_t *ports = (k8s_svc_port_t *)(mem + off_ports);
	svc->ports = ports;
	svc->port_count = p->port_count;
	for (size_t i = 0; i < p->port_count; i++) {
		ports[i].port = p->ports[i].port;
		ports[i].proto = p->ports[i].proto;
		if (port_name_shared(p, i)) {
			ports[i].name = ports[i - 1].name;
			continue;
		}
		ports[i].name = str_pos;
		label_set(strings + str_pos, p->ports[i].name);
		str_pos += 1 + strings[str_pos];
	}

	if (p->port_sets != NULL) {
		svc->ep_ports = memcpy(mem + off_ep_ports, p->ep_ports, ep_ports_count * sizeof(uint32_t));
		svc->port_sets = memcpy(mem + off_port_sets, p->port_sets, port_sets_size);
	}

	uint32_t *clusters = (uint32_t *)(mem + off_clusters);
	svc->clusters = clusters;
	svc->cluster_count = p->cluster_count;
	const uint8_t *wire = p->cluster_ids;
	for (size_t i = 0; i < p->cluster_count; i++) {
		size_t wire_size = knot_dname_size(wire);
		clusters[i] = str_pos;
		memcpy(strings + str_pos, wire, wire_size);
		str_pos += wire_size;
		wire += wire_size;
	}

	uint32_t *topo = (uint32_t *)(mem + off_topo);
	svc->topo = topo;
	svc->topo_count = p->topo_count;
	wire = p->topo_wire;
	for (size_t i = 0; i < p->topo_count; i++) {
		size_t wire_size = knot_dname_size(wire);
		topo[i] = str_pos;
		memcpy(strings + str_pos, wire, wire_size);
		str_pos += wire_size;
		wire += wire_size;
	}
	return svc;
}
