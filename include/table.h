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
 * \brief The record table: what the watcher knows, as knotd's workers read it.
 *
 * The table holds one immutable block per service (k8s_svc_t) with everything
 * its names answer, indexes from names to blocks and from IP addresses to the
 * records that own them (PTR), the namespaces, and the pods. The watcher
 * thread is the only writer: it builds a changed service's block aside and
 * swaps it in with one pointer store; what it replaces is freed after an RCU
 * grace period. Workers read without locks inside knotd's RCU read-side
 * section and see each service either wholly before or wholly after a change.
 * No function here calls knotd.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/rdataset.h>

#include "objects.h"
#include "rcuhash.h"
#include "retire.h"

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
	uint16_t cluster;    /*!< Clusterset: index of the source cluster id in the block's clusters. */
	uint8_t family;      /*!< AF_INET or AF_INET6. */
	uint8_t flags;       /*!< K8S_ADDR_*. */
} k8s_addr_t;

/*! \brief A named port (the source of SRV records). */
typedef struct {
	uint32_t name;       /*!< Offset of the port name label in the block's strings. */
	uint16_t port;
	uint8_t proto;       /*!< k8s_proto_t. */
} k8s_svc_port_t;

/*!
 * \brief Everything the names of one service answer; immutable once published.
 *
 * Labels in strings are stored as in wire format: a length byte, then the
 * lowercase characters. Endpoint records are sorted by (cluster, label, family,
 * address) so that a label's records are adjacent and found by binary search.
 */
typedef struct {
	uint32_t hash;             /*!< Of (zone, owner). */
	uint8_t zone;              /*!< k8s_zone_t. */
	uint8_t type;              /*!< k8s_svc_type_t (ClusterSetIP imports are CLUSTERIP). */
	uint16_t port_count;       /*!< Named ports. */
	uint16_t cluster_count;    /*!< Clusterset: source clusters. */
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
	const k8s_svc_port_t *ports;   /*!< Named ports sorted by (name, proto). */
	const uint32_t *clusters;  /*!< Clusterset: offsets of the source cluster id labels (a two-label id is stored as two labels). */
	const uint8_t *strings;    /*!< Label storage (offset 0 is unused). */
	k8s_addr_t addrs[];
} k8s_svc_t;

/*! \brief The block holding an address record. */
static inline const k8s_svc_t *k8s_addr_svc(const k8s_addr_t *addr)
{
	const k8s_addr_t *first = addr - addr->idx;
	return (const k8s_svc_t *)((const uint8_t *)first - offsetof(k8s_svc_t, addrs));
}

/*! \brief Writes an address record's label (hostname, pod name or dashed address) as a wire label; returns its size. */
size_t k8s_addr_label(const k8s_svc_t *svc, const k8s_addr_t *addr, uint8_t out[64]);

/*! \brief The wire labels of a record's source cluster id (clusterset), and their size. */
const uint8_t *k8s_addr_cluster(const k8s_svc_t *svc, const k8s_addr_t *addr, size_t *size);

/*!
 * \brief Finds the endpoint records with a label (and cluster id, in the clusterset zone).
 *
 * \param cluster  Wire labels of the cluster id, or NULL (cluster zone).
 * \param label    Wire label (length byte first), lowercase.
 * \param count    Out: number of adjacent records found.
 *
 * \return The first record, or NULL.
 */
const k8s_addr_t *k8s_svc_endpoints(const k8s_svc_t *svc, const uint8_t *cluster,
                                    size_t cluster_size, const uint8_t *label, size_t *count);

/*! \brief True if some endpoint comes from this cluster id (clusterset). */
bool k8s_svc_has_cluster(const k8s_svc_t *svc, const uint8_t *cluster, size_t cluster_size);

/*! \brief A namespace entry. */
typedef struct {
	uint32_t hash;
	uint8_t label[];           /*!< Wire label: length byte, lowercase name. */
} k8s_nsent_t;

/*! \brief A pod entry (one per pod IP). */
typedef struct {
	uint32_t hash;             /*!< Of the address. */
	k8s_ip_t ip;
	bool host_network;
	uint8_t ns[];              /*!< Namespace as a wire label. */
} k8s_podent_t;

/*! \brief A prefix of PTR-owning addresses (reverse-zone empty non-terminals). */
typedef struct {
	uint32_t hash;
	uint8_t family;
	uint8_t bits;              /*!< 8, 16, 24 (IPv4); 4 to 64 by 4 (IPv6). */
	uint8_t bytes[8];          /*!< Masked prefix. */
	uint32_t count;            /*!< Addresses under it (written by the writer only). */
} k8s_prefix_t;

/*!
 * \brief Where this cluster runs, for federation names: its node's zone and region.
 *
 * Published whole and immutable; a change publishes a new one.
 */
typedef struct {
	uint16_t size;             /*!< Bytes of labels. */
	uint8_t labels[];          /*!< "<zone><region>" as lowercase wire labels, no root label. */
} k8s_topology_t;

/*! \brief Readiness bits: a zone answers once its resources completed a first full LIST. */
enum {
	K8S_READY_CLUSTER = 1 << 0,
	K8S_READY_CLUSTERSET = 1 << 1,
};

typedef struct {
	k8s_rcuhash_t svcs;        /*!< (zone, ns, name) -> k8s_svc_t. */
	k8s_rcuhash_t ptrs;        /*!< Address -> its k8s_addr_t in a block, or the set of them (one slot per address). */
	k8s_rcuhash_t nss;         /*!< Name -> k8s_nsent_t. */
	k8s_rcuhash_t pods;        /*!< Address -> k8s_podent_t (several per address). */
	k8s_rcuhash_t prefixes;    /*!< Prefix -> k8s_prefix_t. */
	k8s_topology_t *topology;  /*!< Federation topology from the nodes, or NULL. */
	uint32_t ready;            /*!< K8S_READY_* bits, set once, never cleared. */
	k8s_retire_t retire;       /*!< Writer: unpublished memory awaiting a grace period. */
	size_t svc_count[K8S_ZONE_COUNT]; /*!< Writer: published blocks. */
	size_t record_count;       /*!< Writer: address records published (service IPs and endpoints). */
	size_t capped_count;       /*!< Writer: records and ports the published blocks left out at the caps. */
	size_t bytes;              /*!< Writer: bytes of published blocks. */
	size_t pod_count;          /*!< Writer: pod entries published. */
	size_t ns_count;           /*!< Writer: namespaces published. */
} k8s_table_t;

/* Readers: call inside an RCU read-side section; results stay valid until it ends.
 * Names are given as wire labels (length byte first), lowercase, as they
 * appear in a lowercased query name. */

/*! \brief A service block by its owner labels "<svc><ns>" (e.g. "\\x03web\\x04shop"), or NULL. */
const k8s_svc_t *k8s_table_svc(const k8s_table_t *t, k8s_zone_t zone,
                               const uint8_t *owner, size_t owner_len);

/*! \brief True if the namespace (one wire label) exists. */
bool k8s_table_ns(const k8s_table_t *t, const uint8_t *label);

/*!
 * \brief Address records owning an IP, for PTR: cluster-zone records first.
 *
 * \return How many were found (may exceed \a max; only \a max are stored).
 */
size_t k8s_table_ptr(const k8s_table_t *t, const k8s_ip_t *ip, const k8s_addr_t **out, size_t max);

/*! \brief True if a live pod with this IP exists in the namespace (a wire label). */
bool k8s_table_pod(const k8s_table_t *t, const k8s_ip_t *ip, const uint8_t *ns);

/*! \brief The pod entry of a client address, if exactly one non-host-network pod has it (autopath). */
const k8s_podent_t *k8s_table_pod_by_ip(const k8s_table_t *t, const k8s_ip_t *ip);

/*! \brief True if some PTR-owning address starts with the first \a bits bits of \a ip. */
bool k8s_table_prefix(const k8s_table_t *t, const k8s_ip_t *ip, unsigned bits);

/*! \brief The federation topology read from the nodes, or NULL while none is known. */
static inline const k8s_topology_t *k8s_table_topology(const k8s_table_t *t)
{
	return rcu_dereference(t->topology);
}

/*!
 * \brief Readiness bits (K8S_READY_*).
 *
 * Acquire: pairs with k8s_table_set_ready()'s release, so a reader that sees a
 * zone ready also sees every record published before (a plain load on x86).
 */
static inline uint32_t k8s_table_ready(const k8s_table_t *t)
{
	return __atomic_load_n(&t->ready, __ATOMIC_ACQUIRE);
}

/*!
 * \brief The namespace (a wire label) of the pods with this address, for client-address
 * autopath; NULL if none, if one is host-network, or if they are in several namespaces.
 */
const uint8_t *k8s_table_pod_ns(const k8s_table_t *t, const k8s_ip_t *ip);

/* Writer: only the watcher thread. */

/*! \brief Initialises an empty table. \retval KNOT_EOK, KNOT_ENOMEM */
int k8s_table_init(k8s_table_t *t);

/*! \brief Frees everything at once; only when no reader can exist. */
void k8s_table_deinit(k8s_table_t *t);

/*!
 * \brief Publishes a service block, replacing the one with the same key.
 *
 * The PTR index and reverse prefixes follow in the same commit; the old block
 * is retired.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the old block stays published, \a svc is freed)
 */
int k8s_table_put_svc(k8s_table_t *t, k8s_svc_t *svc);

/*!
 * \brief Unpublishes and retires a service block; no-op if absent.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the block stays published)
 */
int k8s_table_del_svc(k8s_table_t *t, k8s_zone_t zone, const char *ns, const char *name);

/*! \brief Writes the owner labels "<svc><ns>" of a service; returns their size, 0 if a name is no label. */
size_t k8s_svc_owner(const char *ns, const char *name, uint8_t out[128]);

/*! \brief Adds or removes a namespace. \retval KNOT_EOK, KNOT_ENOMEM */
int k8s_table_set_ns(k8s_table_t *t, const char *name, bool present);

/*!
 * \brief Replaces the entries of one pod: \a old_pod's addresses go, \a new_pod's come (either may be NULL).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
int k8s_table_set_pod(k8s_table_t *t, const k8s_pod_t *old_pod, const k8s_pod_t *new_pod);

/*! \brief Publishes a topology (taking it; NULL: none), retiring the previous one. */
void k8s_table_set_topology(k8s_table_t *t, k8s_topology_t *topology);

/*! \brief Marks zones ready (bits are never cleared), after what was published so far. */
void k8s_table_set_ready(k8s_table_t *t, uint32_t bits);

/*! \brief Ends a commit: hands retired memory to RCU for freeing after a grace period. */
void k8s_table_commit(k8s_table_t *t);
