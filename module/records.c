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
#include <stdlib.h>
#include <string.h>

#include <libknot/dname.h>
#include <libknot/rdata.h>

#include "records.h"

/*! \brief An address record being built, with its label in wire form for sorting. */
typedef struct {
	k8s_ip_t ip;
	uint32_t cluster;       /*!< Slice's cluster id while drafting, then index into the sorted ids. */
	bool explicit_label;    /*!< Hostname or pod name, as opposed to the dashed address. */
	uint8_t label[64];      /*!< Wire label (explicit or derived). */
} ent_t;

/*! \brief A growable array of entries and what else a block needs. */
typedef struct {
	ent_t *sips;
	size_t sip_count;
	ent_t *eps;
	size_t ep_count, ep_cap;
	k8s_port_t *ports;      /*!< Named ports (names point into the objects), duplicates until sorted. */
	size_t port_count, port_cap;
	const char **clusters;  /*!< Source cluster id of each slice kept (points into the objects). */
	size_t cluster_count, cluster_cap;
	uint8_t *cluster_wire;  /*!< Distinct cluster ids in wire form, in order, once sorted. */
	size_t cluster_bytes;
	uint32_t ready_count;
	size_t capped;          /*!< Records and ports left out at the caps. */
} draft_t;

static void draft_free(draft_t *d)
{
	free(d->sips);
	free(d->eps);
	free(d->ports);
	free(d->clusters);
	free(d->cluster_wire);
}

static bool grow(void **arr, size_t *cap, size_t count, size_t elem_size)
{
	if (count < *cap) {
		return true;
	}
	size_t cap_new = (*cap > 0) ? 2 * *cap : 16;
	void *arr_new = realloc(*arr, cap_new * elem_size);
	if (arr_new == NULL) {
		return false;
	}
	*arr = arr_new;
	*cap = cap_new;
	return true;
}

static size_t ip_len(uint8_t family)
{
	return (family == AF_INET) ? 4 : 16;
}

static void label_set(uint8_t label[64], const char *text)
{
	size_t len = strlen(text);
	label[0] = len;
	memcpy(label + 1, text, len);
}

/*! \brief The dashed form of an address (CoreDNS compatible), as a wire label. */
static void label_derive(uint8_t label[64], const k8s_ip_t *ip)
{
	k8s_addr_t addr = { .family = ip->family };
	memcpy(addr.bytes, ip->bytes, ip_len(ip->family));
	// Only the address matters for a derived label.
	k8s_addr_label(NULL, &addr, label);
}

static int label_cmp(const uint8_t *a, const uint8_t *b)
{
	if (a[0] != b[0]) {
		return (a[0] < b[0]) ? -1 : 1;
	}
	return memcmp(a + 1, b + 1, a[0]);
}

static int ip_cmp(const k8s_ip_t *a, const k8s_ip_t *b)
{
	if (a->family != b->family) {
		return (a->family < b->family) ? -1 : 1;
	}
	return memcmp(a->bytes, b->bytes, ip_len(a->family));
}

/*! \brief Sort order of endpoint records; k8s_svc_endpoints() searches in it. */
static int ent_cmp(const void *a, const void *b)
{
	const ent_t *x = a, *y = b;
	if (x->cluster != y->cluster) {
		return (x->cluster < y->cluster) ? -1 : 1;
	}
	int cmp = label_cmp(x->label, y->label);
	return (cmp != 0) ? cmp : ip_cmp(&x->ip, &y->ip);
}

static int ent_ip_cmp(const void *a, const void *b)
{
	return ip_cmp(&((const ent_t *)a)->ip, &((const ent_t *)b)->ip);
}

/*! \brief Collects a named port; duplicates go when the ports are sorted (sort_ports()). */
static int add_port(draft_t *d, const k8s_port_t *port)
{
	if (port->name == NULL || port->port == 0) {
		return KNOT_EOK;  // Unnamed ports have no SRV record.
	}
	if (!grow((void **)&d->ports, &d->port_cap, d->port_count, sizeof(*d->ports))) {
		return KNOT_ENOMEM;
	}
	d->ports[d->port_count++] = *port;
	return KNOT_EOK;
}

/*! \brief Order of named ports: (name, protocol) as answers search them, then number. */
static int port_cmp(const void *a, const void *b)
{
	const k8s_port_t *x = a, *y = b;
	int cmp = strcmp(x->name, y->name);
	if (cmp != 0) {
		return cmp;
	}
	if (x->proto != y->proto) {
		return (x->proto < y->proto) ? -1 : 1;
	}
	return (x->port > y->port) - (x->port < y->port);
}

/*!
 * \brief Sorts the named ports and keeps one per (name, protocol), at most K8S_MAX_PORTS.
 *
 * Slices disagree on a port's number during a rollout; the lowest number wins,
 * whatever order the slices come in.
 */
static void sort_ports(draft_t *d)
{
	if (d->port_count > 1) {
		qsort(d->ports, d->port_count, sizeof(*d->ports), port_cmp);
	}
	size_t kept = 0;
	for (size_t i = 0; i < d->port_count; i++) {
		const k8s_port_t *prev = (kept > 0) ? &d->ports[kept - 1] : NULL;
		if (prev != NULL && prev->proto == d->ports[i].proto &&
		    strcmp(prev->name, d->ports[i].name) == 0) {
			continue;
		}
		if (kept == K8S_MAX_PORTS) {
			d->capped++;
			continue;
		}
		d->ports[kept++] = d->ports[i];
	}
	d->port_count = kept;
}

static int add_sips(draft_t *d, const k8s_ip_t *ips, size_t count)
{
	d->sips = calloc(count > 0 ? count : 1, sizeof(*d->sips));
	if (d->sips == NULL) {
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		bool dup = false;
		for (size_t j = 0; j < d->sip_count; j++) {
			dup = dup || ip_cmp(&d->sips[j].ip, &ips[i]) == 0;
		}
		if (!dup && (ips[i].family == AF_INET || ips[i].family == AF_INET6)) {
			d->sips[d->sip_count++].ip = ips[i];
		}
	}
	return KNOT_EOK;
}

/*! \brief Notes a slice's cluster id; equal ids are merged when sorted (sort_clusters()). */
static int cluster_add(draft_t *d, const char *id, uint32_t *index)
{
	if (d->cluster_count == UINT32_MAX ||
	    !grow((void **)&d->clusters, &d->cluster_cap, d->cluster_count, sizeof(char *))) {
		return KNOT_ENOMEM;
	}
	*index = d->cluster_count;
	d->clusters[d->cluster_count++] = id;
	return KNOT_EOK;
}

/*! \brief Adds a slice's endpoints; \a keep_records false only counts the ready ones. */
static int add_slice(draft_t *d, const k8s_slice_t *slice, bool all_ready, bool keep_records,
                     const char *cluster, const k8s_records_conf_t *conf)
{
	if (slice->family != AF_INET && slice->family != AF_INET6) {
		return KNOT_EOK;
	}
	uint32_t cluster_idx = 0;
	if (cluster != NULL && keep_records) {
		int ret = cluster_add(d, cluster, &cluster_idx);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}

	for (uint32_t i = 0; i < slice->endpoint_count; i++) {
		const k8s_endpoint_t *ep = &slice->endpoints[i];
		if (!(ep->ready || all_ready) || ep->ip.family != slice->family) {
			continue;
		}
		d->ready_count += (d->ready_count < UINT32_MAX);
		if (!keep_records) {
			continue;
		}
		if (!grow((void **)&d->eps, &d->ep_cap, d->ep_count, sizeof(*d->eps))) {
			return KNOT_ENOMEM;
		}
		ent_t *ent = &d->eps[d->ep_count++];
		memset(ent, 0, sizeof(*ent));
		ent->ip = ep->ip;
		ent->cluster = cluster_idx;
		const char *label = ep->hostname;
		if (label == NULL && conf->endpoint_pod_names) {
			label = ep->target;
		}
		if (label != NULL) {
			ent->explicit_label = true;
			label_set(ent->label, label);
		} else {
			label_derive(ent->label, &ep->ip);
		}
	}

	for (uint16_t i = 0; i < slice->port_count && keep_records; i++) {
		int ret = add_port(d, &slice->ports[i]);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}
	return KNOT_EOK;
}

/*! \brief Size of a cluster id in wire form with its terminating zero; 0 if invalid. */
static size_t cluster_wire_size(const char *id)
{
	uint8_t wire[KNOT_DNAME_MAXLEN];
	if (knot_dname_from_str(wire, id, sizeof(wire)) == NULL) {
		return 0;
	}
	return knot_dname_size(wire);
}

/*! \brief A slice's cluster id in lowercase wire form, to sort. */
typedef struct {
	const uint8_t *wire;
	size_t size;
	uint32_t slice;
} cluster_key_t;

/*! \brief Orders cluster ids as k8s_svc_endpoints() compares them: wire size, then bytes. */
static int cluster_key_cmp(const void *a, const void *b)
{
	const cluster_key_t *x = a, *y = b;
	if (x->size != y->size) {
		return (x->size < y->size) ? -1 : 1;
	}
	return memcmp(x->wire, y->wire, x->size);
}

/*!
 * \brief Merges the slices' cluster ids into the distinct ones, sorted, and renumbers the endpoints.
 *
 * Endpoints of the clusters past K8S_MAX_CLUSTERS get an index of at least
 * K8S_MAX_CLUSTERS: sort_endpoints() leaves them out.
 */
static int sort_clusters(draft_t *d)
{
	size_t n = d->cluster_count;
	if (n == 0) {
		return KNOT_EOK;
	}
	cluster_key_t *keys = malloc(n * sizeof(*keys));
	uint32_t *rank = malloc(n * sizeof(*rank));
	uint8_t *wire = NULL;
	int ret = KNOT_ENOMEM;
	if (keys == NULL || rank == NULL) {
		goto out;
	}
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		keys[i].size = cluster_wire_size(d->clusters[i]);
		if (keys[i].size == 0) {
			ret = KNOT_EINVAL;
			goto out;
		}
		total += keys[i].size;
	}
	wire = malloc(total);
	d->cluster_wire = malloc(total);
	if (wire == NULL || d->cluster_wire == NULL) {
		goto out;
	}
	uint8_t *pos = wire;
	for (size_t i = 0; i < n; i++) {
		knot_dname_from_str(pos, d->clusters[i], keys[i].size);
		knot_dname_to_lower(pos);
		keys[i].wire = pos;
		keys[i].slice = i;
		pos += keys[i].size;
	}
	qsort(keys, n, sizeof(*keys), cluster_key_cmp);

	size_t distinct = 0;
	d->cluster_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || cluster_key_cmp(&keys[i - 1], &keys[i]) != 0) {
			if (distinct < K8S_MAX_CLUSTERS) {
				memcpy(d->cluster_wire + d->cluster_bytes, keys[i].wire, keys[i].size);
				d->cluster_bytes += keys[i].size;
			}
			distinct++;
		}
		rank[keys[i].slice] = distinct - 1;
	}
	d->cluster_count = (distinct < K8S_MAX_CLUSTERS) ? distinct : K8S_MAX_CLUSTERS;
	for (size_t i = 0; i < d->ep_count; i++) {
		d->eps[i].cluster = rank[d->eps[i].cluster];
	}
	ret = KNOT_EOK;
out:
	free(keys);
	free(rank);
	free(wire);
	return ret;
}

/*! \brief True if two endpoint records have one owner name: same cluster, same label text. */
static bool same_owner(const ent_t *a, const ent_t *b)
{
	return a->cluster == b->cluster && label_cmp(a->label, b->label) == 0;
}

/*! \brief Most addresses of a family one name holds. */
static size_t max_per_name(uint8_t family)
{
	return (family == AF_INET) ? K8S_MAX_A_PER_NAME : K8S_MAX_AAAA_PER_NAME;
}

/*!
 * \brief Sorts the endpoints (clusters first, by id), drops duplicates and what passes the caps.
 *
 * An explicit hostname can equal another endpoint's dashed address (any pod
 * can set hostname "10-244-1-7"): it is one DNS name, so, as CoreDNS matches
 * every address whose hostname or dashed address is the queried label, the
 * name gets both addresses, and both records are labelled explicitly so that
 * they share the stored label and one SRV target.
 */
static int sort_endpoints(draft_t *d)
{
	int ret = sort_clusters(d);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (d->ep_count > 1) {
		qsort(d->eps, d->ep_count, sizeof(*d->eps), ent_cmp);
	}

	size_t kept = 0, count[2] = { 0 };
	for (size_t i = 0; i < d->ep_count; i++) {
		const ent_t *ent = &d->eps[i];
		const ent_t *prev = (kept > 0) ? &d->eps[kept - 1] : NULL;
		if (prev != NULL && ent_cmp(prev, ent) == 0) {
			continue;  // The same endpoint in two slices (e.g. during a rollout).
		}
		if (prev == NULL || !same_owner(prev, ent)) {
			count[0] = count[1] = 0;
		}
		size_t *n = &count[ent->ip.family == AF_INET6];
		if (ent->cluster >= K8S_MAX_CLUSTERS || *n == max_per_name(ent->ip.family)) {
			d->capped++;
			continue;
		}
		(*n)++;
		d->eps[kept++] = *ent;
	}
	d->ep_count = kept;

	for (size_t i = 0, end; i < d->ep_count; i = end) {
		bool explicit_label = false;
		for (end = i; end < d->ep_count && same_owner(&d->eps[i], &d->eps[end]); end++) {
			explicit_label = explicit_label || d->eps[end].explicit_label;
		}
		for (size_t j = i; j < end; j++) {
			d->eps[j].explicit_label = explicit_label;
		}
	}
	return KNOT_EOK;
}

/*!
 * \brief True if an endpoint's label is stored once with the previous endpoint's.
 *
 * The block's size and its filling both follow this: they must agree.
 */
static bool label_shared(const ent_t *prev, const ent_t *ent)
{
	return ent->explicit_label && prev != NULL && prev->explicit_label &&
	       label_cmp(prev->label, ent->label) == 0;
}

/*! \brief True if a record of a by-address array is an answer of its family (first of its address). */
static bool rr_takes(const ent_t *ents, size_t i, uint8_t family)
{
	return ents[i].ip.family == family && (i == 0 || ip_cmp(&ents[i - 1].ip, &ents[i].ip) != 0);
}

/*! \brief How many records an rdataset of unique addresses of one family gets, at most the cap. */
static size_t rrs_count(const ent_t *ents, size_t count, uint8_t family, size_t *capped)
{
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		n += rr_takes(ents, i, family);
	}
	size_t max = max_per_name(family);
	if (n > max) {
		*capped += n - max;
		n = max;
	}
	return n;
}

/*! \brief Fills an rdataset with the first \a n addresses rrs_count() counted. */
static uint8_t *fill_rrs(knot_rdataset_t *rrs, uint8_t *pos, const ent_t *ents, size_t count,
                         uint8_t family, size_t n)
{
	rrs->rdata = (knot_rdata_t *)pos;
	rrs->count = 0;
	for (size_t i = 0; i < count && rrs->count < n; i++) {
		if (!rr_takes(ents, i, family)) {
			continue;
		}
		knot_rdata_init((knot_rdata_t *)pos, ip_len(family), ents[i].ip.bytes);
		pos += knot_rdata_size(ip_len(family));
		rrs->count++;
	}
	rrs->size = pos - (uint8_t *)rrs->rdata;
	if (rrs->count == 0) {
		rrs->rdata = NULL;
	}
	return pos;
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/*! \brief Lays out and fills the block. */
static k8s_svc_t *assemble(draft_t *d, k8s_zone_t zone, k8s_svc_type_t type,
                           const char *ns, const char *name, const char *target,
                           bool endpoints_answer)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(ns, name, owner);
	if (owner_len == 0) {
		return NULL;
	}
	uint8_t target_wire[KNOT_DNAME_MAXLEN];
	size_t target_size = 0;
	if (target != NULL) {
		if (knot_dname_from_str(target_wire, target, sizeof(target_wire)) == NULL) {
			return NULL;
		}
		knot_dname_to_lower(target_wire);
		target_size = knot_dname_size(target_wire);
	}

	if (sort_endpoints(d) != KNOT_EOK) {
		return NULL;
	}
	sort_ports(d);

	// The A/AAAA answers of the service name: service IPs or ready endpoints, each address once.
	ent_t *answer = endpoints_answer ? d->eps : d->sips;
	size_t answer_count = endpoints_answer ? d->ep_count : d->sip_count;
	ent_t *by_ip = malloc((answer_count > 0 ? answer_count : 1) * sizeof(*by_ip));
	if (by_ip == NULL) {
		return NULL;
	}
	if (answer_count > 0) {
		memcpy(by_ip, answer, answer_count * sizeof(*by_ip));
		qsort(by_ip, answer_count, sizeof(*by_ip), ent_ip_cmp);
	}
	size_t a_count = rrs_count(by_ip, answer_count, AF_INET, &d->capped);
	size_t aaaa_count = rrs_count(by_ip, answer_count, AF_INET6, &d->capped);
	size_t rdata_size = a_count * knot_rdata_size(ip_len(AF_INET)) +
	                    aaaa_count * knot_rdata_size(ip_len(AF_INET6));

	// Strings: offset 0 unused, then labels (see label_shared()), port names, cluster ids.
	size_t strings_size = 1;
	for (size_t i = 0; i < d->ep_count; i++) {
		if (d->eps[i].explicit_label &&
		    !label_shared((i > 0) ? &d->eps[i - 1] : NULL, &d->eps[i])) {
			strings_size += 1 + d->eps[i].label[0];
		}
	}
	for (size_t i = 0; i < d->port_count; i++) {
		strings_size += 1 + strlen(d->ports[i].name);
	}
	strings_size += d->cluster_bytes;

	size_t addr_count = d->sip_count + d->ep_count;
	size_t off_ports = ALIGN8(sizeof(k8s_svc_t) + addr_count * sizeof(k8s_addr_t));
	size_t off_clusters = off_ports + d->port_count * sizeof(k8s_svc_port_t);
	size_t off_rdata = ALIGN8(off_clusters + d->cluster_count * sizeof(uint32_t));
	size_t off_owner = off_rdata + rdata_size;
	size_t off_target = off_owner + owner_len;
	size_t off_strings = off_target + target_size;
	size_t size = off_strings + strings_size;
	if (size > UINT32_MAX) {
		free(by_ip);
		return NULL;
	}

	uint8_t *mem = calloc(1, size);
	if (mem == NULL) {
		free(by_ip);
		return NULL;
	}
	k8s_svc_t *svc = (k8s_svc_t *)mem;
	svc->zone = zone;
	svc->type = type;
	svc->size = size;
	svc->ready_count = d->ready_count;
	svc->capped = (d->capped < UINT32_MAX) ? d->capped : UINT32_MAX;
	svc->owner = memcpy(mem + off_owner, owner, owner_len);
	svc->owner_len = owner_len;
	svc->target = (target_size > 0) ? memcpy(mem + off_target, target_wire, target_size) : NULL;
	uint8_t *strings = mem + off_strings;
	svc->strings = strings;
	size_t str_pos = 1;

	uint8_t *pos = fill_rrs(&svc->rrs_a, mem + off_rdata, by_ip, answer_count, AF_INET, a_count);
	fill_rrs(&svc->rrs_aaaa, pos, by_ip, answer_count, AF_INET6, aaaa_count);
	free(by_ip);

	svc->addr_count = addr_count;
	svc->sip_count = d->sip_count;
	for (size_t i = 0; i < addr_count; i++) {
		bool sip = i < d->sip_count;
		size_t ep = i - d->sip_count;
		const ent_t *ent = sip ? &d->sips[i] : &d->eps[ep];
		k8s_addr_t *addr = &svc->addrs[i];
		memcpy(addr->bytes, ent->ip.bytes, ip_len(ent->ip.family));
		addr->family = ent->ip.family;
		addr->idx = i;
		addr->flags = sip ? K8S_ADDR_SERVICE_IP : 0;
		addr->cluster = sip ? 0 : ent->cluster;
		if (sip || !ent->explicit_label) {
			continue;
		}
		if (label_shared((ep > 0) ? &d->eps[ep - 1] : NULL, ent)) {
			addr->label = svc->addrs[i - 1].label;
		} else {
			addr->label = str_pos;
			memcpy(strings + str_pos, ent->label, 1 + ent->label[0]);
			str_pos += 1 + ent->label[0];
		}
	}

	k8s_svc_port_t *ports = (k8s_svc_port_t *)(mem + off_ports);
	svc->ports = ports;
	svc->port_count = d->port_count;
	for (size_t i = 0; i < d->port_count; i++) {
		ports[i].port = d->ports[i].port;
		ports[i].proto = d->ports[i].proto;
		ports[i].name = str_pos;
		label_set(strings + str_pos, d->ports[i].name);
		str_pos += 1 + strings[str_pos];
	}

	uint32_t *clusters = (uint32_t *)(mem + off_clusters);
	svc->clusters = clusters;
	svc->cluster_count = d->cluster_count;
	const uint8_t *wire = d->cluster_wire;
	for (size_t i = 0; i < d->cluster_count; i++) {
		size_t wire_size = knot_dname_size(wire);
		clusters[i] = str_pos;
		memcpy(strings + str_pos, wire, wire_size);
		str_pos += wire_size;
		wire += wire_size;
	}

	return svc;
}

/*! \brief A literal IP as ExternalName is answered as an address, as kube-dns did. */
static bool parse_ip(const char *text, k8s_ip_t *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, text, ip->bytes) == 1) {
		ip->family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, text, ip->bytes) == 1) {
		ip->family = AF_INET6;
		return true;
	}
	return false;
}

k8s_svc_t *k8s_records_service(const k8s_service_t *svc, const k8s_slice_t *const *slices,
                               size_t count, const k8s_records_conf_t *conf)
{
	draft_t d = { 0 };
	k8s_svc_t *block = NULL;
	const char *target = NULL;
	bool headless = svc->type == K8S_SVC_HEADLESS;

	if (svc->type == K8S_SVC_EXTERNALNAME) {
		k8s_ip_t ip;
		if (svc->external_name != NULL && parse_ip(svc->external_name, &ip)) {
			if (add_sips(&d, &ip, 1) != KNOT_EOK) {
				goto out;
			}
		} else {
			target = svc->external_name;
			if (add_sips(&d, NULL, 0) != KNOT_EOK) {
				goto out;
			}
		}
		// ExternalName services have no endpoints, ports or PTR records.
		block = assemble(&d, K8S_ZONE_CLUSTER, K8S_SVC_EXTERNALNAME,
		                 svc->meta.ns, svc->meta.name, target, false);
		if (block != NULL) {
			block->sip_count = 0;
			block->addr_count = 0;
		}
		goto out;
	}

	if (add_sips(&d, svc->ips, headless ? 0 : svc->ip_count) != KNOT_EOK) {
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		if (add_slice(&d, slices[i], svc->publish_not_ready, true, NULL, conf) != KNOT_EOK) {
			goto out;
		}
	}
	if (!headless) {
		// A ClusterIP service's SRV records name the service's own ports.
		d.port_count = 0;
		for (uint16_t i = 0; i < svc->port_count; i++) {
			if (add_port(&d, &svc->ports[i]) != KNOT_EOK) {
				goto out;
			}
		}
	}
	block = assemble(&d, K8S_ZONE_CLUSTER, headless ? K8S_SVC_HEADLESS : K8S_SVC_CLUSTERIP,
	                 svc->meta.ns, svc->meta.name, NULL, headless);
out:
	draft_free(&d);
	return block;
}

k8s_svc_t *k8s_records_import(const k8s_serviceimport_t *imp, const k8s_slice_t *const *slices,
                              size_t count, const k8s_records_conf_t *conf)
{
	draft_t d = { 0 };
	k8s_svc_t *block = NULL;

	if (add_sips(&d, imp->ips, imp->headless ? 0 : imp->ip_count) != KNOT_EOK) {
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		const char *cluster = slices[i]->source_cluster;
		if (cluster == NULL || cluster_wire_size(cluster) == 0) {
			continue;
		}
		// Behind a ClusterSetIP only the count matters; the names are the service's.
		if (add_slice(&d, slices[i], false, imp->headless, cluster, conf) != KNOT_EOK) {
			goto out;
		}
	}
	if (!imp->headless || d.port_count == 0) {
		d.port_count = 0;
		for (uint16_t i = 0; i < imp->port_count; i++) {
			if (add_port(&d, &imp->ports[i]) != KNOT_EOK) {
				goto out;
			}
		}
	}
	block = assemble(&d, K8S_ZONE_CLUSTERSET,
	                 imp->headless ? K8S_SVC_HEADLESS : K8S_SVC_CLUSTERIP,
	                 imp->meta.ns, imp->meta.name, NULL, imp->headless);
out:
	draft_free(&d);
	return block;
}
