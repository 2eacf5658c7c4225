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

#include "table/records.h"
#include "table/records_priv.h"

static void draft_free(draft_t *d)
{
	free(d->sips);
	free(d->eps);
	free(d->ports);
	free(d->block_ports);
	free(d->lists);
	free(d->pool);
	free(d->port_sets);
	free(d->ep_ports);
	free(d->clusters);
	free(d->cluster_wire);
	free(d->topos);
	free(d->topo_wire);
	free(d->externals);
}

/*! \brief Orders addresses (a qsort() comparator of k8s_ip_t). */
static int ip_cmp(const void *a, const void *b)
{
	return k8s_ip_cmp(a, b);
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
			dup = dup || k8s_ip_cmp(&d->sips[j], &ips[i]) == 0;
		}
		if (!dup && (ips[i].family == AF_INET || ips[i].family == AF_INET6)) {
			d->sips[d->sip_count++] = ips[i];
		}
	}
	return KNOT_EOK;
}

/*! \brief Notes a slice's cluster id; equal ids are merged when sorted (sort_clusters()). */
static int cluster_add(draft_t *d, const char *id, uint32_t *index)
{
	if (d->cluster_count == UINT32_MAX ||
	    !records_grow((void **)&d->clusters, &d->cluster_cap, d->cluster_count, sizeof(char *))) {
		return KNOT_ENOMEM;
	}
	*index = d->cluster_count;
	d->clusters[d->cluster_count++] = id;
	return KNOT_EOK;
}

/*!
 * \brief 1 + the index of an endpoint's topology zone among the block's (noted if new), 0
 * for none or past K8S_MAX_TOPOS (a few zones a service: a list is enough).
 */
static uint32_t topo_index(draft_t *d, const char *zone)
{
	if (zone == NULL) {
		return 0;
	}
	for (size_t i = 0; i < d->topo_count; i++) {
		if (strcmp(d->topos[i], zone) == 0) {
			return i + 1;
		}
	}
	if (d->topo_count >= K8S_MAX_TOPOS ||
	    !records_grow((void **)&d->topos, &d->topo_cap, d->topo_count, sizeof(char *))) {
		return 0;  // Out of memory: the endpoint has no zone, which only zonal names see.
	}
	d->topos[d->topo_count++] = zone;
	return d->topo_count;
}

/*! \brief The topology zones in wire form, for the block's strings. */
static int topo_wire(draft_t *d)
{
	if (d->topo_count == 0) {
		return KNOT_EOK;
	}
	d->topo_wire = malloc(d->topo_count * KNOT_DNAME_MAXLEN);
	if (d->topo_wire == NULL) {
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < d->topo_count; i++) {
		// The decoder keeps only zones that are DNS names: each converts.
		uint8_t *at = d->topo_wire + d->topo_bytes;
		if (knot_dname_from_str(at, d->topos[i], KNOT_DNAME_MAXLEN) == NULL) {
			return KNOT_EINVAL;
		}
		d->topo_bytes += knot_dname_size(at);
	}
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
	uint32_t slice_idx = d->slice_count;
	if (keep_records) {
		if (d->slice_count == UINT32_MAX) {
			return KNOT_ENOMEM;
		}
		d->slice_count++;
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
		if (!records_grow((void **)&d->eps, &d->ep_cap, d->ep_count, sizeof(*d->eps))) {
			return KNOT_ENOMEM;
		}
		const char *label = ep->hostname;
		if (label == NULL && conf->endpoint_pod_names) {
			label = ep->target;
		}
		k8s_block_ent_init(&d->eps[d->ep_count], &ep->ip, cluster_idx, label);
		// Zonal names are not defined in the clusterset zone (CoreDNS's zonal option).
		d->eps[d->ep_count].topo = (cluster == NULL) ? topo_index(d, ep->zone) : 0;
		d->eps[d->ep_count++].ports = slice_idx;
	}

	for (uint16_t i = 0; i < slice->port_count && keep_records; i++) {
		int ret = records_add_port(d, &slice->ports[i], slice_idx);
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

/*! \brief Orders cluster ids as blocks keep them (k8s_block_cmp()). */
static int cluster_key_cmp(const void *a, const void *b)
{
	const cluster_key_t *x = a, *y = b;
	return k8s_block_cmp(x->wire, x->size, y->wire, y->size);
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

/*! \brief Most addresses of a family one name holds. */
static size_t max_per_name(uint8_t family)
{
	return (family == AF_INET) ? K8S_MAX_A_PER_NAME : K8S_MAX_AAAA_PER_NAME;
}

/*! \brief Sorts the endpoints in block order, drops duplicates and what passes the caps. */
static int sort_endpoints(draft_t *d)
{
	int ret = sort_clusters(d);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (d->ep_count > 1) {
		qsort(d->eps, d->ep_count, sizeof(*d->eps), k8s_block_ent_cmp);
	}
	if (d->per_slice_ports && (ret = records_union_duplicates(d)) != KNOT_EOK) {
		return ret;
	}

	size_t kept = 0, count[2] = { 0 };
	for (size_t i = 0; i < d->ep_count; i++) {
		const k8s_block_ent_t *ent = &d->eps[i];
		const k8s_block_ent_t *prev = (kept > 0) ? &d->eps[kept - 1] : NULL;
		if (prev != NULL && k8s_block_ent_cmp(prev, ent) == 0) {
			continue;  // The same endpoint in two slices (e.g. during a rollout).
		}
		if (prev == NULL || !k8s_block_same_name(prev, ent)) {
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
	k8s_block_name_endpoints(d->eps, d->ep_count);
	return records_intern_port_sets(d);
}

/*!
 * \brief The addresses of the service name's A and AAAA answers: service IPs or
 * ready endpoints, each address once, the lowest up to the caps.
 *
 * \return How many, written to a new array in \a out; SIZE_MAX without memory.
 */
static size_t answer_addrs(draft_t *d, bool endpoints_answer, k8s_ip_t **out)
{
	size_t count = endpoints_answer ? d->ep_count : d->sip_count;
	k8s_ip_t *ips = malloc((count > 0 ? count : 1) * sizeof(*ips));
	if (ips == NULL) {
		return SIZE_MAX;
	}
	for (size_t i = 0; i < count; i++) {
		ips[i] = endpoints_answer ? d->eps[i].ip : d->sips[i];
	}
	if (count > 1) {
		qsort(ips, count, sizeof(*ips), ip_cmp);
	}
	size_t kept = 0, per_family[2] = { 0 };
	for (size_t i = 0; i < count; i++) {
		if (kept > 0 && k8s_ip_cmp(&ips[kept - 1], &ips[i]) == 0) {
			continue;
		}
		size_t *n = &per_family[ips[i].family == AF_INET6];
		if (*n == max_per_name(ips[i].family)) {
			d->capped++;
			continue;
		}
		(*n)++;
		ips[kept++] = ips[i];
	}
	*out = ips;
	return kept;
}

/*! \brief Settles what the block holds and lays it out. */
static k8s_block_t *assemble(draft_t *d, k8s_zone_t zone, k8s_svc_type_t type,
                           const char *ns, const char *name, const char *target,
                           bool endpoints_answer)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(ns, name, owner);
	if (owner_len == 0) {
		return NULL;
	}
	uint8_t target_wire[KNOT_DNAME_MAXLEN];
	if (target != NULL) {
		if (knot_dname_from_str(target_wire, target, sizeof(target_wire)) == NULL) {
			return NULL;
		}
		knot_dname_to_lower(target_wire);
	}

	// The ports first: an endpoint's port set is made of their indices.
	if (records_sort_ports(d) != KNOT_EOK || sort_endpoints(d) != KNOT_EOK ||
	    topo_wire(d) != KNOT_EOK) {
		return NULL;
	}
	k8s_ip_t *answer = NULL;
	size_t answer_count = answer_addrs(d, endpoints_answer, &answer);
	if (answer_count == SIZE_MAX) {
		return NULL;
	}

	// ExternalName services have no endpoints, ports or PTR records: a literal IP only answers.
	bool external = type == K8S_SVC_EXTERNALNAME;
	k8s_block_parts_t parts = {
		.zone = zone,
		.type = type,
		.owner = owner,
		.owner_len = owner_len,
		.target = (target != NULL) ? target_wire : NULL,
		.sips = d->sips,
		.sip_count = external ? 0 : d->sip_count,
		.eps = d->eps,
		.ep_count = d->ep_count,
		.answer = answer,
		.answer_count = answer_count,
		.ports = d->block_ports,
		.port_count = d->block_port_count,
		.port_sets = d->port_sets,
		.port_sets_len = d->port_sets_len,
		.ep_ports = d->ep_ports,
		.cluster_ids = d->cluster_wire,
		.cluster_count = d->cluster_count,
		.cluster_bytes = d->cluster_bytes,
		.ready_count = d->ready_count,
		.capped = d->capped,
		.ingress = d->ingress,
		.ingress_count = d->ingress_count,
		.topo_wire = d->topo_wire,
		.topo_count = d->topo_count,
		.topo_bytes = d->topo_bytes,
		.externals = d->externals,
		.external_count = d->external_count,
		.external_listed = d->external_listed,
	};
	k8s_block_t *svc = k8s_block_new(&parts);
	free(answer);
	return svc;
}

/*! \brief The service's external addresses (k8s_external's), each once, in its order. */
static int add_externals(draft_t *d, const k8s_service_t *svc)
{
	if (svc->external_count == 0) {
		return KNOT_EOK;
	}
	d->externals = malloc(svc->external_count * sizeof(*d->externals));
	if (d->externals == NULL) {
		return KNOT_ENOMEM;
	}
	for (uint8_t i = 0; i < svc->external_count; i++) {
		bool dup = false;
		for (size_t j = 0; j < d->external_count && !dup; j++) {
			dup = k8s_ip_cmp(&d->externals[j], &svc->externals[i]) == 0;
		}
		if (!dup) {
			d->externals[d->external_count++] = svc->externals[i];
		}
	}
	d->external_listed = svc->external_count;
	return KNOT_EOK;
}

bool k8s_records_external_ip(const k8s_service_t *svc, k8s_ip_t *ip)
{
	const char *text = svc->external_name;
	memset(ip, 0, sizeof(*ip));
	if (svc->type != K8S_SVC_EXTERNALNAME || text == NULL) {
		return false;
	}
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

k8s_block_t *k8s_records_service(const k8s_service_t *svc, const k8s_slice_t *const *slices,
                               size_t count, const k8s_records_conf_t *conf)
{
	draft_t d = { 0 };
	k8s_block_t *block = NULL;
	const char *target = NULL;
	bool headless = svc->type == K8S_SVC_HEADLESS;
	if (add_externals(&d, svc) != KNOT_EOK) {
		goto out;
	}

	if (svc->type == K8S_SVC_EXTERNALNAME) {
		k8s_ip_t ip;
		if (k8s_records_external_ip(svc, &ip)) {
			if (add_sips(&d, &ip, 1) != KNOT_EOK) {
				goto out;
			}
		} else {
			target = svc->external_name;
			if (add_sips(&d, NULL, 0) != KNOT_EOK) {
				goto out;
			}
		}
		block = assemble(&d, K8S_ZONE_CLUSTER, K8S_SVC_EXTERNALNAME,
		                 svc->meta.ns, svc->meta.name, target, false);
		goto out;
	}

	if (add_sips(&d, svc->ips, headless ? 0 : svc->ip_count) != KNOT_EOK) {
		goto out;
	}
	d.ingress = svc->ingress;
	d.ingress_count = svc->ingress_count;
	for (size_t i = 0; i < count; i++) {
		if (add_slice(&d, slices[i], svc->publish_not_ready, true, NULL, conf) != KNOT_EOK) {
			goto out;
		}
	}
	if (!headless) {
		// A ClusterIP service's SRV records name the service's own ports.
		d.port_count = 0;
		for (uint16_t i = 0; i < svc->port_count; i++) {
			if (records_add_port(&d, &svc->ports[i], 0) != KNOT_EOK) {
				goto out;
			}
		}
	}
	// A headless service's endpoints have the ports of their own slices.
	d.per_slice_ports = headless;
	block = assemble(&d, K8S_ZONE_CLUSTER, headless ? K8S_SVC_HEADLESS : K8S_SVC_CLUSTERIP,
	                 svc->meta.ns, svc->meta.name, NULL, headless);
out:
	draft_free(&d);
	return block;
}

k8s_block_t *k8s_records_import(const k8s_serviceimport_t *imp, const k8s_slice_t *const *slices,
                              size_t count, const k8s_records_conf_t *conf)
{
	draft_t d = { 0 };
	k8s_block_t *block = NULL;

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
	// A headless import's endpoints have the ports of their own slices; the
	// import's ports are every endpoint's when no slice names any.
	d.per_slice_ports = imp->headless && d.port_count > 0;
	if (!d.per_slice_ports) {
		d.port_count = 0;
		for (uint16_t i = 0; i < imp->port_count; i++) {
			if (records_add_port(&d, &imp->ports[i], 0) != KNOT_EOK) {
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
