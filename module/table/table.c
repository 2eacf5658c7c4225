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

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/dnsname.h"
#include "lib/hash.h"
#include "table/ptrindex.h"

/*! \brief Hash of a service's owner; the zone is compared, not hashed (two blocks at most share it). */
static uint32_t svc_hash(uint8_t zone, const uint8_t *owner, size_t owner_len)
{
	(void)zone;
	return k8s_hash(owner, owner_len);
}

static uint32_t label_hash(const uint8_t *label)
{
	return k8s_hash(label, 1 + label[0]);
}

static uint32_t elem_hash(const void *elem)
{
	// Every element kind but address records starts with its hash.
	return *(const uint32_t *)elem;
}

/* Readers. */

/*
 * The finds are inlined into each reader: a call of their own saved and restored the
 * registers they use, about 15 instructions per lookup (callgrind), two per service.
 */
static inline __attribute__((always_inline))
const k8s_block_t *find_svc(const k8s_table_t *t, uint32_t hash, uint8_t zone,
                           const uint8_t *owner, size_t owner_len)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->svcs, hash);
	const k8s_block_t *svc;
	while ((svc = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (svc->hash == hash && svc->zone == zone && svc->owner_len == owner_len &&
		    k8s_bytes_equal(svc->owner, owner, owner_len)) {
			return svc;
		}
	}
	return NULL;
}

const k8s_block_t *k8s_table_block(const k8s_table_t *t, k8s_zone_t zone,
                               const uint8_t *owner, size_t owner_len)
{
	return find_svc(t, svc_hash(zone, owner, owner_len), zone, owner, owner_len);
}

static inline __attribute__((always_inline))
const k8s_nsent_t *find_ns(const k8s_table_t *t, const uint8_t *label, uint32_t hash)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->nss, hash);
	const k8s_nsent_t *ns;
	while ((ns = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (ns->hash == hash && k8s_label_equal(ns->label, label)) {
			return ns;
		}
	}
	return NULL;
}

bool k8s_table_ns(const k8s_table_t *t, const uint8_t *label)
{
	return find_ns(t, label, label_hash(label)) != NULL;
}

const k8s_block_t *k8s_table_ns_block(const k8s_table_t *t, k8s_zone_t zone,
                                     const uint8_t *owner, size_t owner_len, const uint8_t *ns)
{
	// The service first: a name that does not exist most often has none, and then the
	// namespace is not looked up.
	const k8s_block_t *svc = find_svc(t, svc_hash(zone, owner, owner_len), zone, owner, owner_len);
	if (svc == NULL || find_ns(t, ns, label_hash(ns)) == NULL) {
		return NULL;
	}
	return svc;
}

static bool podent_has_ip(const k8s_podent_t *pod, const k8s_ip_t *ip, uint32_t hash)
{
	if (pod->hash != hash || pod->ip.family != ip->family) {
		return false;
	}
	// Sizes the compiler knows: a compare or two instead of a memcmp() call.
	return (ip->family == AF_INET) ? memcmp(pod->ip.bytes, ip->bytes, 4) == 0
	                               : memcmp(pod->ip.bytes, ip->bytes, 16) == 0;
}

bool k8s_table_pod(const k8s_table_t *t, const k8s_ip_t *ip, const uint8_t *ns)
{
	uint32_t hash = k8s_table_ip_hash(ip->family, ip->bytes);
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->pods, hash);
	const k8s_podent_t *pod;
	while ((pod = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (podent_has_ip(pod, ip, hash) && k8s_label_equal(pod->ns, ns)) {
			return true;
		}
	}
	return false;
}

/* Writer. */

/*! \brief The last value of any table's pod_gen: one counter, so no two tables share one. */
static uint64_t pod_gen_last;

/*!
 * \brief A new pod generation for \a t, after its pods changed: readers' cached
 * answers of k8s_table_pod_ns() stop matching. Before the changes' grace period
 * (k8s_retire_commit()), so that no reader holds a retired entry past it.
 */
static void pod_gen_next(k8s_table_t *t)
{
	uint64_t gen = __atomic_add_fetch(&pod_gen_last, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pod_gen, gen, __ATOMIC_RELEASE);
}

int k8s_table_init(k8s_table_t *t)
{
	memset(t, 0, sizeof(*t));
	pod_gen_next(t);
	if (k8s_rcuhash_init(&t->svcs, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->ptrs, k8s_ptrindex_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->nss, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->pods, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->prefixes, elem_hash) != KNOT_EOK) {
		k8s_table_deinit(t);
		return KNOT_ENOMEM;
	}
	// Most names that do not exist miss a service (and an autopath step a namespace): a
	// miss probes the whole run, so these two small tables are kept at most half full.
	t->svcs.sparse = true;
	t->nss.sparse = true;
	return KNOT_EOK;
}

static void free_elems(k8s_rcuhash_t *h)
{
	if (h->arr == NULL) {
		return;
	}
	size_t pos = 0;
	void *elem;
	while ((elem = k8s_rcuhash_walk(h, &pos)) != NULL) {
		k8s_bulk_free(elem);
	}
}

void k8s_table_deinit(k8s_table_t *t)
{
	free_elems(&t->svcs);
	free_elems(&t->nss);
	free_elems(&t->pods);
	k8s_ptrindex_free(t);
	k8s_rcuhash_deinit(&t->svcs);
	k8s_rcuhash_deinit(&t->ptrs);
	k8s_rcuhash_deinit(&t->nss);
	k8s_rcuhash_deinit(&t->pods);
	k8s_rcuhash_deinit(&t->prefixes);
	free(t->topology);
	k8s_retire_flush_now(&t->retire);
	memset(t, 0, sizeof(*t));
}

int k8s_table_reserve(k8s_table_t *t, size_t svcs, size_t addrs)
{
	int ret = k8s_rcuhash_reserve(&t->svcs, svcs, &t->retire);
	return (ret == KNOT_EOK) ? k8s_rcuhash_reserve(&t->ptrs, addrs, &t->retire) : ret;
}

int k8s_table_put_block(k8s_table_t *t, k8s_block_t *svc)
{
	svc->hash = svc_hash(svc->zone, svc->owner, svc->owner_len);
	const k8s_block_t *old = find_svc(t, svc->hash, svc->zone, svc->owner, svc->owner_len);

	// Everything that can fail happens before anything is published; records
	// first: the block must be reachable by PTR as soon as by name.
	if (k8s_rcuhash_reserve(&t->svcs, 1, &t->retire) != KNOT_EOK ||
	    (!t->ptr_deferred && k8s_ptrindex_update(t, old, svc) != KNOT_EOK)) {
		k8s_bulk_free(svc);
		return KNOT_ENOMEM;
	}

	if (old != NULL) {
		k8s_rcuhash_replace(&t->svcs, svc->hash, old, svc);
		t->stats.record_count -= old->addr_count;
		t->stats.capped_count -= old->capped;
		t->stats.bytes -= old->size;
		k8s_retire(&t->retire, (void *)old);
	} else {
		int ret = k8s_rcuhash_insert(&t->svcs, svc->hash, svc, &t->retire);
		assert(ret == KNOT_EOK);
		(void)ret;
		t->stats.svc_count[svc->zone]++;
	}
	t->stats.record_count += svc->addr_count;
	t->stats.capped_count += svc->capped;
	t->stats.bytes += svc->size;
	return KNOT_EOK;
}

int k8s_table_del_block(k8s_table_t *t, k8s_zone_t zone, const char *ns, const char *name)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(ns, name, owner);
	if (owner_len == 0) {
		return KNOT_EOK;
	}
	uint32_t hash = svc_hash(zone, owner, owner_len);
	const k8s_block_t *old = find_svc(t, hash, zone, owner, owner_len);
	if (old == NULL) {
		return KNOT_EOK;
	}

	if (!t->ptr_deferred && k8s_ptrindex_update(t, old, NULL) != KNOT_EOK) {
		return KNOT_ENOMEM;
	}
	k8s_rcuhash_remove(&t->svcs, hash, old);
	t->stats.svc_count[zone]--;
	t->stats.record_count -= old->addr_count;
	t->stats.capped_count -= old->capped;
	t->stats.bytes -= old->size;
	k8s_retire(&t->retire, (void *)old);
	return KNOT_EOK;
}

static size_t ns_label(const char *ns, uint8_t out[64])
{
	size_t len = strlen(ns);
	if (len == 0 || len > 63) {
		return 0;
	}
	out[0] = len;
	memcpy(out + 1, ns, len);
	return 1 + len;
}

int k8s_table_set_ns(k8s_table_t *t, const char *name, bool present)
{
	uint8_t label[64];
	size_t size = ns_label(name, label);
	if (size == 0) {
		return KNOT_EINVAL;
	}
	uint32_t hash = label_hash(label);
	const k8s_nsent_t *old = find_ns(t, label, hash);

	if (!present) {
		if (old != NULL) {
			k8s_rcuhash_remove(&t->nss, hash, old);
			k8s_retire(&t->retire, (void *)old);
			t->stats.ns_count--;
		}
		return KNOT_EOK;
	}
	if (old != NULL) {
		return KNOT_EOK;
	}

	k8s_nsent_t *ns = malloc(sizeof(*ns) + size);
	if (ns == NULL) {
		return KNOT_ENOMEM;
	}
	ns->hash = hash;
	memcpy(ns->label, label, size);
	int ret = k8s_rcuhash_insert(&t->nss, hash, ns, &t->retire);
	if (ret != KNOT_EOK) {
		free(ns);
		return ret;
	}
	t->stats.ns_count++;
	return KNOT_EOK;
}

static k8s_podent_t *find_podent(const k8s_table_t *t, const k8s_ip_t *ip, const uint8_t *ns,
                                 bool host_network, uint32_t hash)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->pods, hash);
	k8s_podent_t *pod;
	while ((pod = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (podent_has_ip(pod, ip, hash) && pod->host_network == host_network &&
		    k8s_label_equal(pod->ns, ns)) {
			return pod;
		}
	}
	return NULL;
}

static int set_pod(k8s_table_t *t, const k8s_pod_t *old_pod, const k8s_pod_t *new_pod)
{
	// New entries first, so that a pod whose IP stays never disappears for a reader.
	if (new_pod != NULL && new_pod->live) {
		uint8_t ns[64];
		size_t ns_size = ns_label(new_pod->meta.ns, ns);
		for (uint8_t i = 0; ns_size > 0 && i < new_pod->ip_count; i++) {
			k8s_podent_t *pod = malloc(sizeof(*pod) + ns_size);
			if (pod == NULL) {
				return KNOT_ENOMEM;
			}
			pod->hash = k8s_table_ip_hash(new_pod->ips[i].family, new_pod->ips[i].bytes);
			pod->ip = new_pod->ips[i];
			pod->host_network = new_pod->host_network;
			memcpy(pod->ns, ns, ns_size);
			if (k8s_rcuhash_insert(&t->pods, pod->hash, pod, &t->retire) != KNOT_EOK) {
				free(pod);
				return KNOT_ENOMEM;
			}
			t->stats.pod_count++;
		}
	}

	if (old_pod != NULL && old_pod->live) {
		uint8_t ns[64];
		size_t ns_size = ns_label(old_pod->meta.ns, ns);
		for (uint8_t i = 0; ns_size > 0 && i < old_pod->ip_count; i++) {
			const k8s_ip_t *ip = &old_pod->ips[i];
			uint32_t hash = k8s_table_ip_hash(ip->family, ip->bytes);
			k8s_podent_t *pod = find_podent(t, ip, ns, old_pod->host_network, hash);
			if (pod != NULL) {
				k8s_rcuhash_remove(&t->pods, hash, pod);
				k8s_retire(&t->retire, pod);
				t->stats.pod_count--;
			}
		}
	}
	return KNOT_EOK;
}

int k8s_table_set_pod(k8s_table_t *t, const k8s_pod_t *old_pod, const k8s_pod_t *new_pod)
{
	int ret = set_pod(t, old_pod, new_pod);
	pod_gen_next(t);  // Also after a failure: some entries may have changed.
	return ret;
}

/*!
 * \brief This thread's last k8s_table_pod_ns() answer.
 *
 * A pod's resolver sends its search list's names one after another, and with
 * client-address autopath every NXDOMAIN of <name>.<ns>.svc asks the pod index for
 * the client's address: a probe of the whole run of the address's hash (it looks
 * for a second pod with the address), 90 to 200 instructions (callgrind, by the
 * hash key). The answer holds while the table's pod generation does; \a ns points
 * into an entry that a change of pods retires after a grace period, and the change
 * bumps the generation before that period starts.
 */
static __thread struct {
	const k8s_table_t *t;
	uint64_t gen;
	k8s_ip_t ip;
	const uint8_t *ns;
} last_pod __attribute__((tls_model("initial-exec")));

static const uint8_t *pod_ns(const k8s_table_t *t, const k8s_ip_t *ip);

/*!
 * \brief The lookup when the last answer does not hold: not inline, so that the usual
 * answer saves no registers (callgrind: 13 instructions per call).
 */
static __attribute__((noinline))
const uint8_t *pod_ns_remember(const k8s_table_t *t, uint64_t gen, const k8s_ip_t *ip)
{
	const uint8_t *ns = pod_ns(t, ip);
	last_pod.t = t;
	last_pod.gen = gen;
	last_pod.ip = *ip;
	last_pod.ns = ns;
	return ns;
}

const uint8_t *k8s_table_pod_ns(const k8s_table_t *t, const k8s_ip_t *ip)
{
	uint64_t gen = __atomic_load_n(&t->pod_gen, __ATOMIC_ACQUIRE);
	// The whole address, unused bytes too (zero from client_ip()): a compare of constant size.
	if (last_pod.t == t && last_pod.gen == gen && memcmp(&last_pod.ip, ip, sizeof(*ip)) == 0) {
		return last_pod.ns;
	}
	return pod_ns_remember(t, gen, ip);
}

static const uint8_t *pod_ns(const k8s_table_t *t, const k8s_ip_t *ip)
{
	uint32_t hash = k8s_table_ip_hash(ip->family, ip->bytes);
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->pods, hash);
	const k8s_podent_t *pod;
	const uint8_t *ns = NULL;
	while ((pod = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (!podent_has_ip(pod, ip, hash)) {
			continue;
		}
		// A node's address (host-network pods) or one shared across namespaces names no namespace.
		if (pod->host_network || (ns != NULL && !k8s_label_equal(ns, pod->ns))) {
			return NULL;
		}
		ns = pod->ns;
	}
	return ns;
}

void k8s_table_set_topology(k8s_table_t *t, k8s_topology_t *topology)
{
	k8s_topology_t *old = t->topology;
	rcu_assign_pointer(t->topology, topology);
	if (old != NULL) {
		k8s_retire(&t->retire, old);
	}
}

void k8s_table_set_ready(k8s_table_t *t, uint32_t bits)
{
	// The PTR index is always current but after k8s_table_defer_ptr().
	bits |= t->ptr_deferred ? 0 : K8S_READY_PTR;
	// Release: the records published before are visible to whoever sees the bits.
	__atomic_store_n(&t->ready, t->ready | bits, __ATOMIC_RELEASE);
}

void k8s_table_defer_ptr(k8s_table_t *t)
{
	assert(t->stats.svc_count[K8S_ZONE_CLUSTER] + t->stats.svc_count[K8S_ZONE_CLUSTERSET] == 0);
	t->ptr_deferred = true;
}

int k8s_table_index_ptrs(k8s_table_t *t)
{
	if (!t->ptr_deferred) {
		return KNOT_EOK;
	}
	// Sized for every address at once: a table grown as it fills rehashes it all each time.
	if (k8s_rcuhash_reserve(&t->ptrs, t->stats.record_count, &t->retire) != KNOT_EOK) {
		return KNOT_ENOMEM;
	}
	size_t pos = 0;
	const k8s_block_t *svc;
	while ((svc = k8s_rcuhash_walk(&t->svcs, &pos)) != NULL) {
		if (k8s_ptrindex_update(t, NULL, svc) != KNOT_EOK) {
			// No reader looks at the index (K8S_READY_PTR is unset): start over next time.
			k8s_ptrindex_free(t);
			k8s_rcuhash_clear(&t->ptrs);
			k8s_rcuhash_clear(&t->prefixes);
			return KNOT_ENOMEM;
		}
	}
	t->ptr_deferred = false;
	k8s_table_set_ready(t, 0);
	return KNOT_EOK;
}

void k8s_table_commit(k8s_table_t *t)
{
	k8s_retire_commit(&t->retire);
}

k8s_table_stats_t k8s_table_stats(const k8s_table_t *t)
{
	return t->stats;
}
