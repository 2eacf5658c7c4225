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

/*!
 * \file
 *
 * \brief A service block: the layout, order and labels of one service's records, and their readers.
 *
 * One allocation (k8s_block_t) holds everything the names of a service answer.
 * records.c decides what goes in (which endpoints, ports and clusters, the
 * caps); this file lays it out (k8s_block_new()) and reads it back; table.c
 * indexes published blocks. A block is immutable once published.
 *
 * Order. Endpoint records follow the service IPs, sorted by (cluster, label,
 * family, address): clusters by their index into the block's cluster ids,
 * which are sorted with k8s_block_cmp(), labels with k8s_block_cmp() too. So a
 * name's records are adjacent and found by binary search (k8s_svc_endpoints()).
 *
 * Labels. An endpoint is named by an explicit label (its hostname, or its pod
 * name with endpoint-pod-names) stored in the block's strings, else by its
 * dashed address (10-244-1-7), derived when read. All records of one name are
 * explicit if one is, and adjacent equal explicit labels are stored once: the
 * records of one SRV target share a label offset.
 *
 * Ports. A headless block's named ports are the distinct (name, protocol,
 * number) of its EndpointSlices, and an endpoint has the ports of the slices
 * it is in (an EndpointSlice's ports are those of its own endpoints): its
 * port set. Equal sets are stored once; a block whose endpoints all have
 * every port stores none (ep_ports NULL), which is the common case.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <libknot/rdataset.h>

#include "kinds/objects.h"

/*! \brief Which zone a service block belongs to. */
typedef enum {
	K8S_ZONE_CLUSTER = 0,     /*!< <svc>.<ns>.svc.<cluster zone>, from Services. */
	K8S_ZONE_CLUSTERSET = 1,  /*!< <svc>.<ns>.svc.<clusterset zone>, from ServiceImports. */
	K8S_ZONE_COUNT
} k8s_zone_t;

/*! \brief k8s_addr_t flags. */
enum {
	K8S_ADDR_SERVICE_IP = 1 << 0,  /*!< A cluster IP or clusterset IP, not an endpoint. */
};

/*! \brief An address record of a service: a service IP or a ready endpoint address. */
typedef struct {
	uint8_t bytes[16];   /*!< Address, first 4 bytes for IPv4. */
	uint32_t label;      /*!< Offset of the endpoint label in the block's strings, 0 = dashed address. */
	uint32_t idx;        /*!< Own index in the block's addrs (a PTR reference finds its block by it). */
	union {
		uint16_t cluster;  /*!< Clusterset: index of the source cluster id in the block's clusters. */
		uint16_t topo;     /*!< Cluster zone: 1 + index of its topology zone in the block's
		                        topo, 0: none (the same bytes: a block has one or the other). */
	};
	uint8_t family;      /*!< AF_INET or AF_INET6. */
	uint8_t flags;       /*!< K8S_ADDR_*. */
} k8s_addr_t;

/*! \brief Most distinct topology zones of one block's endpoints: the rest have none. */
#define K8S_MAX_TOPOS 255

/*! \brief A named port (the source of SRV records). */
typedef struct {
	uint32_t name;       /*!< Offset of the port name label in the block's strings; ports of one name share it. */
	uint16_t port;
	uint8_t proto;       /*!< k8s_proto_t. */
} k8s_svc_port_t;

/*!
 * \brief Everything the names of one service answer; immutable once published.
 *
 * Labels in strings are stored as in wire format: a length byte, then the
 * lowercase characters. Endpoint records are in the order of the file comment.
 */
typedef struct {
	uint32_t hash;             /*!< Of (zone, owner); set by the table. */
	uint8_t zone;              /*!< k8s_zone_t. */
	uint8_t type;              /*!< k8s_svc_type_t (ClusterSetIP imports are CLUSTERIP). */
	uint16_t port_count;       /*!< Named ports: distinct (name, protocol, number). */
	uint16_t cluster_count;    /*!< Clusterset: source clusters. */
	uint16_t topo_count;       /*!< Cluster zone: distinct topology zones of the endpoints. */
	uint8_t external_count;    /*!< External addresses (k8s_external). */
	uint8_t external_listed;   /*!< The Service's as listed, repeats included (CoreDNS's SRV weight counts them). */
	uint16_t owner_len;        /*!< Bytes of owner. */
	uint32_t size;             /*!< Bytes of the whole block. */
	uint32_t addr_count;       /*!< Records in addrs. */
	uint32_t sip_count;        /*!< addrs[0, sip_count) are service IPs, the rest endpoints. */
	uint32_t ready_count;      /*!< Ready endpoint addresses behind the service (ignore-empty-service). */
	uint32_t capped;           /*!< Records and ports left out at the caps of records.h. */
	const uint8_t *owner;      /*!< Wire labels "<svc><ns>", lowercase, no root label. */
	const uint8_t *target;     /*!< ExternalName target, lowercase wire dname, or NULL. */
	knot_rdataset_t rrs_a;     /*!< A of <svc>.<ns>.svc: service IPs, or the ready endpoints (headless). */
	knot_rdataset_t rrs_aaaa;  /*!< AAAA likewise. */
	const k8s_svc_port_t *ports;   /*!< Named ports sorted by (name, proto, number). */
	const uint32_t *ep_ports;  /*!< Per endpoint record (addrs[sip_count + i]): the offset of its port set in port_sets; NULL: every endpoint has every port. */
	const uint16_t *port_sets; /*!< Port sets, each a count then that many ascending indices into ports. */
	const uint32_t *clusters;  /*!< Clusterset: offsets of the source cluster id labels (a two-label id is stored as two labels). */
	const uint32_t *topo;      /*!< Offsets of the topology zones' labels, each ended by a zero byte. */
	const uint8_t *strings;    /*!< Label storage (offset 0 is unused). */
	const k8s_ip_t *ingress;   /*!< K8S_INGRESS_MAX load-balancer IPs (family 0: unused), or NULL. */
	const k8s_ip_t *externals; /*!< external_count addresses: externalIPs, then ingress IPs, each once. */
	k8s_addr_t addrs[];
} k8s_block_t;

/*! \brief Bytes of an address of a family: 4 for AF_INET, else 16. */
static inline size_t k8s_ip_len(uint8_t family)
{
	return (family == AF_INET) ? 4 : 16;
}

/*! \brief Orders addresses: by family, then bytes. */
static inline int k8s_ip_cmp(const k8s_ip_t *a, const k8s_ip_t *b)
{
	if (a->family != b->family) {
		return (a->family < b->family) ? -1 : 1;
	}
	return memcmp(a->bytes, b->bytes, k8s_ip_len(a->family));
}

/*! \brief Orders labels and cluster ids as blocks sort them: by size, then bytes. */
static inline int k8s_block_cmp(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size)
{
	if (a_size != b_size) {
		return (a_size < b_size) ? -1 : 1;
	}
	return memcmp(a, b, a_size);
}

/* Readers: a published block, from any thread. */

/*! \brief The block holding an address record. */
static inline const k8s_block_t *k8s_addr_svc(const k8s_addr_t *addr)
{
	const k8s_addr_t *first = addr - addr->idx;
	return (const k8s_block_t *)((const uint8_t *)first - offsetof(k8s_block_t, addrs));
}

/*!
 * \brief Writes an address record's label (hostname, pod name or dashed address) as a wire label; returns its size.
 *
 * \a svc may be NULL for a record without an explicit label (only the dashed address is read).
 */
size_t k8s_addr_label(const k8s_block_t *svc, const k8s_addr_t *addr, uint8_t out[64]);

/*! \brief The wire labels of a record's source cluster id (clusterset), and their size. */
const uint8_t *k8s_addr_cluster(const k8s_block_t *svc, const k8s_addr_t *addr, size_t *size);

/*! \brief The wire labels (no root label) of the block's \a i-th topology zone, and their size. */
static inline const uint8_t *k8s_block_topo(const k8s_block_t *svc, size_t i, size_t *size)
{
	const uint8_t *labels = svc->strings + svc->topo[i];
	size_t len = 0;
	while (labels[len] != 0) {
		len += 1 + labels[len];
	}
	*size = len;
	return labels;
}

/*!
 * \brief Finds the endpoint records with a label (and cluster id, in the clusterset zone).
 *
 * \param cluster  Wire labels of the cluster id, or NULL (cluster zone).
 * \param label    Wire label (length byte first), lowercase.
 * \param count    Out: number of adjacent records found.
 *
 * \return The first record, or NULL.
 */
const k8s_addr_t *k8s_svc_endpoints(const k8s_block_t *svc, const uint8_t *cluster,
                                    size_t cluster_size, const uint8_t *label, size_t *count);

/*!
 * \brief The first port of [from, end) of its block that an endpoint record has, or \a end.
 *
 * Every endpoint has every port of a block without port sets (ClusterIP, or
 * a headless service whose slices agree).
 */
static inline size_t k8s_addr_next_port(const k8s_block_t *svc, const k8s_addr_t *addr,
                                        size_t from, size_t end)
{
	if (svc->ep_ports == NULL) {
		return (from < end) ? from : end;
	}
	const uint16_t *set = svc->port_sets + svc->ep_ports[addr->idx - svc->sip_count];
	size_t lo = 0, hi = set[0];
	while (lo < hi) {  // The first index of the set at or above from.
		size_t mid = lo + (hi - lo) / 2;
		if (set[1 + mid] < from) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return (lo < set[0] && set[1 + lo] < end) ? set[1 + lo] : end;
}

/*! \brief True if an endpoint record has one of the ports [first, end) of its block. */
static inline bool k8s_addr_has_port(const k8s_block_t *svc, const k8s_addr_t *addr,
                                     size_t first, size_t end)
{
	return first < end && k8s_addr_next_port(svc, addr, first, end) < end;
}

/*! \brief True if some endpoint comes from this cluster id (clusterset). */
bool k8s_svc_has_cluster(const k8s_block_t *svc, const uint8_t *cluster, size_t cluster_size);

/*! \brief Writes the owner labels "<svc><ns>" of a service; returns their size, 0 if a name is no label. */
size_t k8s_svc_owner(const char *ns, const char *name, uint8_t out[128]);

/* Writer: laying out a block (records.c). */

/*! \brief An address record to lay out, with its label in wire form for sorting. */
typedef struct {
	k8s_ip_t ip;
	uint32_t cluster;       /*!< Index into the block's sorted cluster ids (records.c drafts with its own). */
	uint32_t topo;          /*!< 1 + index into the block's topology zones, 0: none (cluster zone). */
	bool explicit_label;    /*!< Hostname or pod name, as opposed to the dashed address. */
	uint8_t label[64];      /*!< Wire label (explicit or derived), zero past its length. */
	uint32_t ports;         /*!< records.c's while drafting: which ports the endpoint has. */
} k8s_block_ent_t;

/*! \brief An endpoint record named by \a label (a valid DNS label), or by its dashed address if NULL. */
void k8s_block_ent_init(k8s_block_ent_t *ent, const k8s_ip_t *ip, uint32_t cluster,
                        const char *label);

/*! \brief The order of endpoint records (a qsort() comparator of k8s_block_ent_t). */
int k8s_block_ent_cmp(const void *a, const void *b);

/*! \brief True if two endpoint records have one owner name: same cluster, same label text. */
bool k8s_block_same_name(const k8s_block_ent_t *a, const k8s_block_ent_t *b);

/*!
 * \brief Settles the labels of sorted endpoint records: all records of a name are explicit if one is.
 *
 * An explicit hostname can equal another endpoint's dashed address (any pod
 * can set hostname "10-244-1-7"): it is one DNS name, so, as CoreDNS matches
 * every address whose hostname or dashed address is the queried label, the
 * name gets both addresses, and both records are labelled explicitly so that
 * they share the stored label and one SRV target.
 */
void k8s_block_name_endpoints(k8s_block_ent_t *eps, size_t count);

/*! \brief What a block is made of, decided by records.c. */
typedef struct {
	k8s_zone_t zone;
	k8s_svc_type_t type;
	const uint8_t *owner;          /*!< "<svc><ns>" (k8s_svc_owner()). */
	size_t owner_len;
	const uint8_t *target;         /*!< ExternalName target, lowercase wire dname, or NULL. */
	const k8s_ip_t *sips;          /*!< Service IPs (PTR records), distinct. */
	size_t sip_count;
	const k8s_block_ent_t *eps;    /*!< Endpoint records in order, labels settled (k8s_block_name_endpoints()). */
	size_t ep_count;
	const k8s_ip_t *answer;        /*!< Addresses of the service name's A and AAAA, distinct, by k8s_ip_cmp(). */
	size_t answer_count;
	const k8s_port_t *ports;       /*!< Named ports by (name, protocol, number), each once. */
	size_t port_count;
	const uint16_t *port_sets;     /*!< Distinct port sets (k8s_block_t.port_sets), or NULL: every endpoint has every port. */
	size_t port_sets_len;          /*!< Values in port_sets. */
	const uint32_t *ep_ports;      /*!< With port_sets: per endpoint record, the offset of its set. */
	const uint8_t *cluster_ids;    /*!< Distinct cluster ids in order, wire names one after another. */
	size_t cluster_count;
	size_t cluster_bytes;
	uint32_t ready_count;
	size_t capped;
	const k8s_ip_t *ingress;       /*!< Load-balancer IPs, at most K8S_INGRESS_MAX. */
	size_t ingress_count;
	const uint8_t *topo_wire;      /*!< Distinct topology zones, wire names one after another. */
	size_t topo_count;             /*!< At most K8S_MAX_TOPOS. */
	size_t topo_bytes;
	const k8s_ip_t *externals;     /*!< External addresses, distinct, at most K8S_EXTERNAL_MAX. */
	size_t external_count;
	size_t external_listed;        /*!< The Service's external addresses, repeats included. */
} k8s_block_parts_t;

/*! \brief Lays out a block in one allocation; NULL without memory or past 4 GiB. */
k8s_block_t *k8s_block_new(const k8s_block_parts_t *parts);
