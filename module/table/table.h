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
 * The table holds one immutable block per service (k8s_block_t, block.h) with
 * everything its names answer, indexes from names to blocks and from IP
 * addresses to the records that own them (PTR), the namespaces, and the pods.
 * The watcher thread is the only writer: it builds a changed service's block
 * aside and swaps it in with one pointer store; what it replaces is freed after
 * an RCU grace period. Workers read without locks inside knotd's RCU read-side
 * section and see each service either wholly before or wholly after a change.
 * No function here calls knotd.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/rdataset.h>

#include "table/block.h"
#include "kinds/objects.h"
#include "lib/rcuhash.h"
#include "lib/retire.h"

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
	K8S_READY_PTR = 1 << 2,    /*!< The PTR index holds every published block (reverse zones). */
};

/*! \brief What the table holds, for logs and counters. */
typedef struct {
	size_t svc_count[K8S_ZONE_COUNT]; /*!< Published blocks. */
	size_t record_count;       /*!< Address records published (service IPs and endpoints). */
	size_t capped_count;       /*!< Records and ports the published blocks left out at the caps. */
	size_t bytes;              /*!< Bytes of published blocks. */
	size_t pod_count;          /*!< Pod entries published. */
	size_t ns_count;           /*!< Namespaces published. */
} k8s_table_stats_t;

typedef struct {
	k8s_rcuhash_t svcs;        /*!< (zone, ns, name) -> k8s_block_t. */
	k8s_rcuhash_t ptrs;        /*!< Address -> its k8s_addr_t in a block, or the set of them (one slot per address). */
	k8s_rcuhash_t nss;         /*!< Name -> k8s_nsent_t. */
	k8s_rcuhash_t pods;        /*!< Address -> k8s_podent_t (several per address). */
	k8s_rcuhash_t prefixes;    /*!< Prefix -> k8s_prefix_t. */
	k8s_topology_t *topology;  /*!< Federation topology from the nodes, or NULL. */
	uint32_t ready;            /*!< K8S_READY_* bits, set once, never cleared. */
	uint64_t pod_gen;          /*!< Changes after every change of pods (unique across tables). */
	bool ptr_deferred;         /*!< Writer: blocks go without the PTR index until k8s_table_index_ptrs(). */
	k8s_retire_t retire;       /*!< Writer: unpublished memory awaiting a grace period. */
	k8s_table_stats_t stats;   /*!< Writer: read with k8s_table_stats(). */
} k8s_table_t;

/* Readers: call inside an RCU read-side section; results stay valid until it ends.
 * Names are given as wire labels (length byte first), lowercase, as they
 * appear in a lowercased query name. */

/*! \brief A service block by its owner labels "<svc><ns>" (e.g. "\\x03web\\x04shop"), or NULL. */
const k8s_block_t *k8s_table_block(const k8s_table_t *t, k8s_zone_t zone,
                               const uint8_t *owner, size_t owner_len);

/*!
 * \brief k8s_table_block() of a service whose namespace \a ns (its owner's last label)
 * exists, else NULL: the answer path's two lookups in one call.
 */
const k8s_block_t *k8s_table_ns_block(const k8s_table_t *t, k8s_zone_t zone,
                                     const uint8_t *owner, size_t owner_len, const uint8_t *ns);

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
int k8s_table_put_block(k8s_table_t *t, k8s_block_t *svc);

/*!
 * \brief Unpublishes and retires a service block; no-op if absent.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the block stays published)
 */
int k8s_table_del_block(k8s_table_t *t, k8s_zone_t zone, const char *ns, const char *name);

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

/*!
 * \brief Makes room for \a svcs more blocks and \a addrs more PTR addresses at once.
 *
 * For a bulk load (the warm restart's snapshot): the hash tables grow once to their
 * size instead of doubling their way there. Estimates are fine; nothing is published.
 */
int k8s_table_reserve(k8s_table_t *t, size_t svcs, size_t addrs);

/*!
 * \brief Publishes blocks without indexing them for PTR until k8s_table_index_ptrs().
 *
 * For the warm restart and the first sync: forward names answer sooner, reverse zones
 * wait (K8S_READY_PTR), the index is built once into a table sized for it. Only on an
 * empty table.
 */
void k8s_table_defer_ptr(k8s_table_t *t);

/*!
 * \brief Indexes every published block for PTR after k8s_table_defer_ptr(), then sets
 * K8S_READY_PTR; does nothing otherwise.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the partial index is dropped: call again later)
 */
int k8s_table_index_ptrs(k8s_table_t *t);

/*! \brief Ends a commit: hands retired memory to RCU for freeing after a grace period. */
void k8s_table_commit(k8s_table_t *t);

/*! \brief What the table holds (writer thread only: the figures change with each commit). */
k8s_table_stats_t k8s_table_stats(const k8s_table_t *t);
