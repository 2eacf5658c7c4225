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

#include <stdint.h>
#include <string.h>

#include "digest.h"

/*
 * The digest is FNV-1a (64-bit) over the decoded fields that make records:
 * kind, namespace, name and each kind's DNS fields, strings with their length
 * (NULL distinct from ""), IPs with their family. Ports and endpoints are sets
 * to DNS, so each element is hashed alone, mixed, and the results summed: a
 * reordered list keeps its digest. The trigger time is metadata and left out.
 */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t len)
{
	const uint8_t *b = data;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++) {
		b[i] = (uint8_t)(v >> (8 * i));
	}
	return fnv_bytes(h, b, sizeof(b));
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	if (s == NULL) {
		return fnv_u64(h, UINT64_MAX);
	}
	size_t len = strlen(s);
	return fnv_bytes(fnv_u64(h, len), s, len);
}

static uint64_t fnv_ip(uint64_t h, const k8s_ip_t *ip)
{
	h = fnv_u64(h, ip->family);
	return fnv_bytes(h, ip->bytes, (ip->family == AF_INET) ? 4 : 16);
}

static uint64_t fnv_ips(uint64_t h, const k8s_ip_t *ips, uint8_t count)
{
	h = fnv_u64(h, count);
	for (uint8_t i = 0; i < count; i++) {
		h = fnv_ip(h, &ips[i]);
	}
	return h;
}

/*! Spreads an element hash over all bits before it is summed (splitmix64 finaliser). */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static uint64_t fnv_ports(uint64_t h, const k8s_port_t *ports, uint16_t count)
{
	uint64_t sum = 0;
	for (uint16_t i = 0; i < count; i++) {
		uint64_t e = fnv_str(FNV_OFFSET, ports[i].name);
		e = fnv_u64(e, ports[i].port);
		e = fnv_u64(e, ports[i].proto);
		sum += mix(e);
	}
	return fnv_u64(fnv_u64(h, count), sum);
}

static uint64_t fnv_endpoints(uint64_t h, const k8s_endpoint_t *eps, uint32_t count)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t e = fnv_ip(FNV_OFFSET, &eps[i].ip);
		e = fnv_u64(e, eps[i].ready);
		e = fnv_str(e, eps[i].hostname);
		e = fnv_str(e, eps[i].target);
		sum += mix(e);
	}
	return fnv_u64(fnv_u64(h, count), sum);
}

uint64_t k8s_digest_meta(const k8s_object_t *obj)
{
	uint64_t h = fnv_u64(FNV_OFFSET, obj->kind);
	h = fnv_str(h, obj->ns);
	return fnv_str(h, obj->name);
}

uint64_t k8s_digest_service(uint64_t h, const k8s_object_t *obj)
{
	const k8s_service_t *svc = (const k8s_service_t *)obj;
	h = fnv_u64(h, svc->type);
	h = fnv_u64(h, svc->publish_not_ready);
	h = fnv_ips(h, svc->ips, svc->ip_count);
	h = fnv_ips(h, svc->ingress, svc->ingress_count);
	h = fnv_str(h, svc->external_name);
	return fnv_ports(h, svc->ports, svc->port_count);
}

uint64_t k8s_digest_slice(uint64_t h, const k8s_object_t *obj)
{
	const k8s_slice_t *slice = (const k8s_slice_t *)obj;
	h = fnv_str(h, slice->service);
	h = fnv_str(h, slice->mcs_service);
	h = fnv_str(h, slice->source_cluster);
	h = fnv_u64(h, slice->family);
	h = fnv_endpoints(h, slice->endpoints, slice->endpoint_count);
	return fnv_ports(h, slice->ports, slice->port_count);
}

uint64_t k8s_digest_pod(uint64_t h, const k8s_object_t *obj)
{
	const k8s_pod_t *pod = (const k8s_pod_t *)obj;
	h = fnv_u64(h, pod->live);
	h = fnv_u64(h, pod->host_network);
	return fnv_ips(h, pod->ips, pod->ip_count);
}

uint64_t k8s_digest_serviceimport(uint64_t h, const k8s_object_t *obj)
{
	const k8s_serviceimport_t *imp = (const k8s_serviceimport_t *)obj;
	h = fnv_u64(h, imp->headless);
	h = fnv_ips(h, imp->ips, imp->ip_count);
	h = fnv_ports(h, imp->ports, imp->port_count);
	uint64_t sum = 0;
	for (uint16_t i = 0; i < imp->cluster_count; i++) {
		sum += mix(fnv_str(FNV_OFFSET, imp->clusters[i]));
	}
	return fnv_u64(fnv_u64(h, imp->cluster_count), sum);
}

uint64_t k8s_digest_clusterproperty(uint64_t h, const k8s_object_t *obj)
{
	return fnv_str(h, ((const k8s_clusterproperty_t *)obj)->value);
}

uint64_t k8s_digest_node(uint64_t h, const k8s_object_t *obj)
{
	const k8s_node_t *node = (const k8s_node_t *)obj;
	h = fnv_str(h, node->zone);
	return fnv_str(h, node->region);
}
