/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * What the fuzz targets assert about record blocks and the record table:
 * every pointer and offset stays inside its block, records are where the
 * readers' lookups look for them, and the table's counters and indexes agree
 * with what it holds. A violation aborts, which libFuzzer reports as a crash.
 */

#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "table/table.h"
#include "fz_check.h"

/*
 * The targets are single-threaded: no reader can hold retired memory, so a
 * grace period is over at once. Freeing here instead of on liburcu's thread
 * keeps every input's allocations within the input, as leak detection and
 * reproducibility need. The definition in the program wins over liburcu's.
 */
void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	func(head);
}

/*! \brief True if [p, p + len) lies inside [base, base + size). */
static inline bool check_inside(const void *base, size_t size, const void *p, size_t len)
{
	const uint8_t *b = base, *q = p;
	return q >= b && q <= b + size && len <= (size_t)(b + size - q);
}

/*! \brief A wire label of 1 to 63 bytes inside the block. */
static inline void check_label(const k8s_block_t *svc, const uint8_t *label)
{
	CHECK(check_inside(svc, svc->size, label, 1));
	CHECK(label[0] >= 1 && label[0] <= 63);
	CHECK(check_inside(svc, svc->size, label, 1 + label[0]));
}

/*! \brief A wire dname (with its root label) inside the block. */
static inline void check_dname(const k8s_block_t *svc, const uint8_t *name)
{
	CHECK(check_inside(svc, svc->size, name, 1));
	const uint8_t *end = (const uint8_t *)svc + svc->size;
	CHECK(knot_dname_wire_check(name, end, NULL) > 0);
}

static inline size_t check_ip_len(uint8_t family)
{
	CHECK(family == AF_INET || family == AF_INET6);
	return (family == AF_INET) ? 4 : 16;
}

/*! \brief An A or AAAA rdataset of the block: in it, of the family, each address once, each owned by a record. */
static inline void check_rrs(const k8s_block_t *svc, const knot_rdataset_t *rrs, uint8_t family)
{
	if (rrs->count == 0) {
		return;
	}
	CHECK(check_inside(svc, svc->size, rrs->rdata, rrs->size));
	size_t len = check_ip_len(family), total = 0;
	const knot_rdata_t *rd = rrs->rdata, *prev = NULL;
	for (uint32_t i = 0; i < rrs->count; i++) {
		CHECK(check_inside(rrs->rdata, rrs->size, rd, knot_rdata_size(len)));
		CHECK(rd->len == len);
		CHECK(prev == NULL || memcmp(prev->data, rd->data, len) != 0);
		bool owned = false;
		for (uint32_t j = 0; j < svc->addr_count && !owned; j++) {
			owned = svc->addrs[j].family == family &&
			        memcmp(svc->addrs[j].bytes, rd->data, len) == 0;
		}
		// A literal-IP ExternalName answers its address without a record (no PTR).
		CHECK(owned || svc->type == K8S_SVC_EXTERNALNAME);
		total += knot_rdata_size(len);
		prev = rd;
		rd = knot_rdataset_next((knot_rdata_t *)rd);
	}
	CHECK(total == rrs->size);
}

/*! \brief A record block as k8s_records_*() builds it and readers rely on it. */
static inline void check_svc(const k8s_block_t *svc)
{
	CHECK(svc->size >= sizeof(*svc) + (size_t)svc->addr_count * sizeof(k8s_addr_t));
	CHECK(svc->zone < K8S_ZONE_COUNT);
	CHECK(svc->type <= K8S_SVC_EXTERNALNAME);
	CHECK(svc->sip_count <= svc->addr_count);

	// The owner: exactly two labels, "<svc><ns>".
	CHECK(svc->owner_len >= 4 && svc->owner_len <= 128);
	CHECK(check_inside(svc, svc->size, svc->owner, svc->owner_len));
	size_t labels = 0, pos = 0;
	while (pos < svc->owner_len) {
		CHECK(svc->owner[pos] >= 1 && svc->owner[pos] <= 63);
		pos += 1 + svc->owner[pos];
		labels++;
	}
	CHECK(pos == svc->owner_len && labels == 2);

	if (svc->target != NULL) {
		check_dname(svc, svc->target);
	}
	CHECK(check_inside(svc, svc->size, svc->ports, (size_t)svc->port_count * sizeof(*svc->ports)));
	for (uint16_t i = 0; i < svc->port_count; i++) {
		check_label(svc, svc->strings + svc->ports[i].name);
		CHECK(svc->ports[i].proto < K8S_PROTO_COUNT);
		// Readers tell a name's run of ports by its offset.
		if (i > 0) {
			const uint8_t *prev = svc->strings + svc->ports[i - 1].name;
			const uint8_t *name = svc->strings + svc->ports[i].name;
			bool equal = prev[0] == name[0] && memcmp(prev + 1, name + 1, name[0]) == 0;
			CHECK(equal == (svc->ports[i - 1].name == svc->ports[i].name));
		}
	}
	// Port sets: a count, then that many ascending indices into ports, all inside the block.
	CHECK((svc->ep_ports == NULL) == (svc->port_sets == NULL));
	if (svc->ep_ports != NULL) {
		CHECK(svc->type == K8S_SVC_HEADLESS);
		size_t ep_count = svc->addr_count - svc->sip_count;
		CHECK(check_inside(svc, svc->size, svc->ep_ports, ep_count * sizeof(*svc->ep_ports)));
		for (size_t i = 0; i < ep_count; i++) {
			const uint16_t *set = svc->port_sets + svc->ep_ports[i];
			CHECK(check_inside(svc, svc->size, set, sizeof(*set)));
			CHECK(check_inside(svc, svc->size, set, (1 + (size_t)set[0]) * sizeof(*set)));
			for (size_t j = 0; j < set[0]; j++) {
				CHECK(set[1 + j] < svc->port_count);
				CHECK(j == 0 || set[j] < set[1 + j]);
			}
		}
	}
	CHECK(check_inside(svc, svc->size, svc->clusters,
	                   (size_t)svc->cluster_count * sizeof(*svc->clusters)));
	for (uint16_t i = 0; i < svc->cluster_count; i++) {
		check_dname(svc, svc->strings + svc->clusters[i]);
	}
	CHECK(svc->cluster_count == 0 || svc->zone == K8S_ZONE_CLUSTERSET);
	CHECK(svc->type != K8S_SVC_EXTERNALNAME || svc->addr_count == 0);
	// Topology zones (zonal names): cluster-zone blocks, names inside, each once.
	CHECK(svc->topo_count == 0 || svc->zone == K8S_ZONE_CLUSTER);
	CHECK(svc->topo_count <= K8S_MAX_TOPOS);
	CHECK(check_inside(svc, svc->size, svc->topo, (size_t)svc->topo_count * sizeof(*svc->topo)));
	for (uint16_t i = 0; i < svc->topo_count; i++) {
		check_dname(svc, svc->strings + svc->topo[i]);
		size_t a_size, b_size;
		const uint8_t *a = k8s_block_topo(svc, i, &a_size);
		for (uint16_t j = 0; j < i; j++) {
			const uint8_t *b = k8s_block_topo(svc, j, &b_size);
			CHECK(a_size != b_size || memcmp(a, b, a_size) != 0);
		}
	}
	// External addresses (k8s_external): inside, each once.
	CHECK(svc->external_count <= K8S_EXTERNAL_MAX);
	CHECK((svc->external_count == 0) == (svc->externals == NULL));
	CHECK(svc->external_count == 0 ||
	      check_inside(svc, svc->size, svc->externals,
	                   (size_t)svc->external_count * sizeof(*svc->externals)));
	for (uint8_t i = 0; i < svc->external_count; i++) {
		check_ip_len(svc->externals[i].family);
		for (uint8_t j = 0; j < i; j++) {
			CHECK(k8s_ip_cmp(&svc->externals[i], &svc->externals[j]) != 0);
		}
	}

	for (uint32_t i = 0; i < svc->addr_count; i++) {
		const k8s_addr_t *addr = &svc->addrs[i];
		bool sip = i < svc->sip_count;
		CHECK(addr->idx == i);
		CHECK(k8s_addr_svc(addr) == svc);
		check_ip_len(addr->family);
		CHECK(!!(addr->flags & K8S_ADDR_SERVICE_IP) == sip);
		if (addr->label != 0) {
			CHECK(!sip);
			check_label(svc, svc->strings + addr->label);
		}
		uint8_t label[64];
		size_t size = k8s_addr_label(svc, addr, label);
		CHECK(size >= 2 && size <= 64 && size == 1u + label[0]);
		if (sip) {
			continue;
		}

		// Readers find an endpoint by its label (and cluster id): it must be in that run.
		const uint8_t *cluster = NULL;
		size_t cluster_size = 0;
		if (svc->cluster_count > 0) {
			CHECK(addr->cluster < svc->cluster_count);
			cluster = k8s_addr_cluster(svc, addr, &cluster_size);
			CHECK(cluster != NULL);
			CHECK(k8s_svc_has_cluster(svc, cluster, cluster_size));
		}
		if (svc->zone == K8S_ZONE_CLUSTER) {
			CHECK(addr->topo <= svc->topo_count);
		}
		size_t count = 0;
		const k8s_addr_t *run = k8s_svc_endpoints(svc, cluster, cluster_size, label, &count);
		CHECK(run != NULL && addr >= run && addr < run + count);
	}

	check_rrs(svc, &svc->rrs_a, AF_INET);
	check_rrs(svc, &svc->rrs_aaaa, AF_INET6);
}

/*! \brief Counts the live elements of an index. */
static inline size_t check_walk_count(const k8s_rcuhash_t *h)
{
	size_t pos = 0, n = 0;
	while (k8s_rcuhash_walk(h, &pos) != NULL) {
		n++;
	}
	CHECK(n == h->live);
	return n;
}

static int check_ip_cmp(const void *a, const void *b)
{
	const k8s_ip_t *x = a, *y = b;
	if (x->family != y->family) {
		return (x->family < y->family) ? -1 : 1;
	}
	return memcmp(x->bytes, y->bytes, sizeof(x->bytes));
}

/*! \brief The whole table: each block, the name and PTR indexes, prefixes, counters. */
static inline void check_table(const k8s_table_t *t)
{
	size_t blocks[K8S_ZONE_COUNT] = { 0 }, records = 0, bytes = 0;
	size_t family_records[2] = { 0 };
	k8s_ip_t *ips = malloc((k8s_table_stats(t).record_count + 1) * sizeof(*ips));
	CHECK(ips != NULL);
	size_t ip_count = 0;
	size_t pos = 0;
	const k8s_block_t *svc;
	while ((svc = k8s_rcuhash_walk(&t->svcs, &pos)) != NULL) {
		check_svc(svc);
		CHECK(k8s_table_block(t, svc->zone, svc->owner, svc->owner_len) == svc);
		blocks[svc->zone]++;
		records += svc->addr_count;
		bytes += svc->size;
		for (uint32_t i = 0; i < svc->addr_count; i++) {
			const k8s_addr_t *addr = &svc->addrs[i];
			family_records[addr->family == AF_INET6]++;

			// Every record is reachable by PTR, and so is each prefix above it.
			k8s_ip_t ip = { .family = addr->family };
			memcpy(ip.bytes, addr->bytes, 16);
			const k8s_addr_t *refs[256];
			size_t found = k8s_table_ptr(t, &ip, refs, 256);
			bool self = false;
			for (size_t j = 0; j < found && j < 256; j++) {
				self = self || refs[j] == addr;
				// No PTR reference outlives its block: each points into a published one.
				const k8s_block_t *owner = k8s_addr_svc(refs[j]);
				CHECK(k8s_table_block(t, owner->zone, owner->owner, owner->owner_len) == owner);
			}
			CHECK(found >= 1 && (self || found > 256));
			CHECK(ip_count < k8s_table_stats(t).record_count + 1);  // The counter is checked below; no overflow first.
			ips[ip_count++] = ip;
			CHECK(k8s_table_prefix(t, &ip, (addr->family == AF_INET) ? 24 : 64));
		}
	}
	for (int z = 0; z < K8S_ZONE_COUNT; z++) {
		CHECK(blocks[z] == k8s_table_stats(t).svc_count[z]);
	}
	CHECK(records == k8s_table_stats(t).record_count);
	CHECK(bytes == k8s_table_stats(t).bytes);
	CHECK(check_walk_count(&t->svcs) == blocks[0] + blocks[1]);

	// One PTR slot per distinct address (a record or a set of them), none left over.
	size_t distinct = 0;
	if (ip_count > 0) {
		qsort(ips, ip_count, sizeof(*ips), check_ip_cmp);
		distinct = 1;
		for (size_t i = 1; i < ip_count; i++) {
			distinct += (check_ip_cmp(&ips[i - 1], &ips[i]) != 0);
		}
	}
	free(ips);
	CHECK(check_walk_count(&t->ptrs) == distinct);

	// Each prefix counts the records under it: per length, the counts add up to the records.
	size_t per_bits[2][129] = { { 0 } };
	pos = 0;
	const k8s_prefix_t *prefix;
	while ((prefix = k8s_rcuhash_walk(&t->prefixes, &pos)) != NULL) {
		CHECK(prefix->family == AF_INET || prefix->family == AF_INET6);
		CHECK(prefix->bits >= 4 && prefix->bits <= 64);
		CHECK(prefix->count > 0);
		per_bits[prefix->family == AF_INET6][prefix->bits] += prefix->count;
	}
	for (unsigned bits = 8; bits <= 24; bits += 8) {
		CHECK(per_bits[0][bits] == family_records[0]);
	}
	for (unsigned bits = 4; bits <= 64; bits += 4) {
		CHECK(per_bits[1][bits] == family_records[1]);
	}

	CHECK(check_walk_count(&t->nss) == k8s_table_stats(t).ns_count);
	CHECK(check_walk_count(&t->pods) == k8s_table_stats(t).pod_count);
}
