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
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "hash.h"
#include "table.h"


static size_t ip_len(uint8_t family)
{
	return (family == AF_INET) ? 4 : 16;
}

static uint32_t hash_ip(uint8_t family, const uint8_t *bytes)
{
	uint32_t h = k8s_hash_bytes(K8S_HASH_INIT, &family, 1);
	return k8s_hash_final(k8s_hash_bytes(h, bytes, ip_len(family)));
}

static uint32_t svc_hash(uint8_t zone, const uint8_t *owner, size_t owner_len)
{
	uint32_t h = k8s_hash_bytes(K8S_HASH_INIT, &zone, 1);
	return k8s_hash_final(k8s_hash_bytes(h, owner, owner_len));
}

static uint32_t label_hash(const uint8_t *label)
{
	return k8s_hash_final(k8s_hash_bytes(K8S_HASH_INIT, label, 1 + label[0]));
}

static uint32_t elem_hash(const void *elem)
{
	// Every element kind but address records starts with its hash.
	return *(const uint32_t *)elem;
}

static uint32_t addr_hash(const void *elem)
{
	const k8s_addr_t *addr = elem;
	return hash_ip(addr->family, addr->bytes);
}

static uint32_t prefix_hash(uint8_t family, uint8_t bits, const uint8_t *bytes)
{
	uint8_t key[10] = { family, bits };
	memcpy(key + 2, bytes, 8);
	return k8s_hash_final(k8s_hash_bytes(K8S_HASH_INIT, key, sizeof(key)));
}

/* Block helpers (readers and writer). */

static bool addr_ip_equal(const k8s_addr_t *addr, const k8s_ip_t *ip)
{
	return addr->family == ip->family &&
	       memcmp(addr->bytes, ip->bytes, ip_len(ip->family)) == 0;
}

/*! \brief Writes a byte in decimal without leading zeros; returns the digits written. */
static size_t put_decimal(uint8_t *out, uint8_t value)
{
	size_t n = 0;
	if (value >= 100) {
		out[n++] = '0' + value / 100;
	}
	if (value >= 10) {
		out[n++] = '0' + value / 10 % 10;
	}
	out[n++] = '0' + value % 10;
	return n;
}

size_t k8s_addr_label(const k8s_svc_t *svc, const k8s_addr_t *addr, uint8_t out[64])
{
	if (addr->label != 0) {
		const uint8_t *label = svc->strings + addr->label;
		memcpy(out, label, 1 + label[0]);
		return 1 + label[0];
	}

	// No hostname: the dashed address, as CoreDNS derives it. IPv4 by hand:
	// inet_ntop() formats with sprintf(), which costs more than a whole PTR answer.
	if (addr->family == AF_INET) {
		size_t len = 0;
		for (int i = 0; i < 4; i++) {
			if (i > 0) {
				out[1 + len++] = '-';
			}
			len += put_decimal(out + 1 + len, addr->bytes[i]);
		}
		out[0] = len;
		return 1 + len;
	}
	char text[INET6_ADDRSTRLEN];
	if (inet_ntop(addr->family, addr->bytes, text, sizeof(text)) == NULL) {
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

const uint8_t *k8s_addr_cluster(const k8s_svc_t *svc, const k8s_addr_t *addr, size_t *size)
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

/*! \brief Orders labels as the block builder sorted them: by length, then bytes. */
static int label_cmp(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size)
{
	if (a_size != b_size) {
		return (a_size < b_size) ? -1 : 1;
	}
	return memcmp(a, b, a_size);
}

/*! \brief Compares an endpoint record's (cluster, label) to a key. */
static int endpoint_cmp(const k8s_svc_t *svc, const k8s_addr_t *addr,
                        const uint8_t *cluster, size_t cluster_size,
                        const uint8_t *label, size_t label_size)
{
	if (cluster != NULL) {
		size_t size;
		const uint8_t *own = k8s_addr_cluster(svc, addr, &size);
		int cmp = label_cmp(own, size, cluster, cluster_size);
		if (cmp != 0) {
			return cmp;
		}
	}
	uint8_t own[64];
	size_t size = k8s_addr_label(svc, addr, own);
	return label_cmp(own, size, label, label_size);
}

const k8s_addr_t *k8s_svc_endpoints(const k8s_svc_t *svc, const uint8_t *cluster,
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

bool k8s_svc_has_cluster(const k8s_svc_t *svc, const uint8_t *cluster, size_t cluster_size)
{
	for (uint32_t i = svc->sip_count; i < svc->addr_count; i++) {
		size_t size;
		const uint8_t *own = k8s_addr_cluster(svc, &svc->addrs[i], &size);
		if (own != NULL && label_cmp(own, size, cluster, cluster_size) == 0) {
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

/* Readers. */

static const k8s_svc_t *find_svc(const k8s_table_t *t, uint32_t hash, uint8_t zone,
                                 const uint8_t *owner, size_t owner_len)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->svcs, hash);
	const k8s_svc_t *svc;
	while ((svc = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (svc->hash == hash && svc->zone == zone && svc->owner_len == owner_len &&
		    memcmp(svc->owner, owner, owner_len) == 0) {
			return svc;
		}
	}
	return NULL;
}

const k8s_svc_t *k8s_table_svc(const k8s_table_t *t, k8s_zone_t zone,
                               const uint8_t *owner, size_t owner_len)
{
	return find_svc(t, svc_hash(zone, owner, owner_len), zone, owner, owner_len);
}

static const k8s_nsent_t *find_ns(const k8s_table_t *t, const uint8_t *label, uint32_t hash)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->nss, hash);
	const k8s_nsent_t *ns;
	while ((ns = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (ns->hash == hash && memcmp(ns->label, label, 1 + label[0]) == 0) {
			return ns;
		}
	}
	return NULL;
}

bool k8s_table_ns(const k8s_table_t *t, const uint8_t *label)
{
	return find_ns(t, label, label_hash(label)) != NULL;
}

size_t k8s_table_ptr(const k8s_table_t *t, const k8s_ip_t *ip, const k8s_addr_t **out, size_t max)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->ptrs, hash_ip(ip->family, ip->bytes));
	size_t found = 0;
	const k8s_addr_t *addr;
	while ((addr = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (addr_ip_equal(addr, ip)) {
			if (found < max) {
				out[found] = addr;
			}
			found++;
		}
	}

	// Cluster-zone records go first: they claim the address over clusterset ones.
	size_t stored = (found < max) ? found : max, cluster = 0;
	for (size_t i = 0; i < stored; i++) {
		if (k8s_addr_svc(out[i])->zone == K8S_ZONE_CLUSTER) {
			const k8s_addr_t *tmp = out[cluster];
			out[cluster++] = out[i];
			out[i] = tmp;
		}
	}
	return found;
}

static bool podent_has_ip(const k8s_podent_t *pod, const k8s_ip_t *ip, uint32_t hash)
{
	return pod->hash == hash && pod->ip.family == ip->family &&
	       memcmp(pod->ip.bytes, ip->bytes, ip_len(ip->family)) == 0;
}

bool k8s_table_pod(const k8s_table_t *t, const k8s_ip_t *ip, const uint8_t *ns)
{
	uint32_t hash = hash_ip(ip->family, ip->bytes);
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->pods, hash);
	const k8s_podent_t *pod;
	while ((pod = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (podent_has_ip(pod, ip, hash) && memcmp(pod->ns, ns, 1 + ns[0]) == 0) {
			return true;
		}
	}
	return false;
}

const k8s_podent_t *k8s_table_pod_by_ip(const k8s_table_t *t, const k8s_ip_t *ip)
{
	uint32_t hash = hash_ip(ip->family, ip->bytes);
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->pods, hash);
	const k8s_podent_t *pod, *match = NULL;
	while ((pod = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (!podent_has_ip(pod, ip, hash)) {
			continue;
		}
		// A node IP (host-network pods) says nothing about the client's namespace.
		if (pod->host_network || match != NULL) {
			return NULL;
		}
		match = pod;
	}
	return match;
}

static void prefix_mask(const uint8_t *bytes, unsigned bits, uint8_t out[8])
{
	memset(out, 0, 8);
	memcpy(out, bytes, bits / 8);
	if (bits % 8 != 0) {
		out[bits / 8] = bytes[bits / 8] & (uint8_t)(0xff << (8 - bits % 8));
	}
}

static k8s_prefix_t *find_prefix(const k8s_table_t *t, uint8_t family, unsigned bits,
                                 const uint8_t masked[8], uint32_t hash)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->prefixes, hash);
	k8s_prefix_t *prefix;
	while ((prefix = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (prefix->hash == hash && prefix->family == family && prefix->bits == bits &&
		    memcmp(prefix->bytes, masked, 8) == 0) {
			return prefix;
		}
	}
	return NULL;
}

/*! \brief Longest prefix tracked exactly; deeper IPv6 names are judged by their /64. */
static unsigned prefix_max_bits(uint8_t family)
{
	return (family == AF_INET) ? 24 : 64;
}

bool k8s_table_prefix(const k8s_table_t *t, const k8s_ip_t *ip, unsigned bits)
{
	unsigned max = prefix_max_bits(ip->family);
	if (bits > max) {
		bits = max;
	}
	if (bits == 0) {
		return true;
	}
	uint8_t masked[8];
	prefix_mask(ip->bytes, bits, masked);
	const k8s_prefix_t *prefix = find_prefix(t, ip->family, bits, masked,
	                                         prefix_hash(ip->family, bits, masked));
	return prefix != NULL && CMM_LOAD_SHARED(prefix->count) > 0;
}

/* Writer. */

int k8s_table_init(k8s_table_t *t)
{
	memset(t, 0, sizeof(*t));
	if (k8s_rcuhash_init(&t->svcs, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->ptrs, addr_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->nss, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->pods, elem_hash) != KNOT_EOK ||
	    k8s_rcuhash_init(&t->prefixes, elem_hash) != KNOT_EOK) {
		k8s_table_deinit(t);
		return KNOT_ENOMEM;
	}
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
		free(elem);
	}
}

void k8s_table_deinit(k8s_table_t *t)
{
	free_elems(&t->svcs);
	free_elems(&t->nss);
	free_elems(&t->pods);
	free_elems(&t->prefixes);
	k8s_rcuhash_deinit(&t->svcs);
	k8s_rcuhash_deinit(&t->ptrs);
	k8s_rcuhash_deinit(&t->nss);
	k8s_rcuhash_deinit(&t->pods);
	k8s_rcuhash_deinit(&t->prefixes);
	free(t->topology);
	k8s_retire_flush_now(&t->retire);
	memset(t, 0, sizeof(*t));
}

/*!
 * \brief Counts an address in or out of its reverse-zone prefixes.
 *
 * Best effort: without memory a prefix stays uncounted, which only turns a
 * reverse empty non-terminal's NODATA into NXDOMAIN.
 */
static int prefix_update(k8s_table_t *t, const k8s_addr_t *addr, int delta)
{
	unsigned step = (addr->family == AF_INET) ? 8 : 4;
	for (unsigned bits = step; bits <= prefix_max_bits(addr->family); bits += step) {
		uint8_t masked[8];
		prefix_mask(addr->bytes, bits, masked);
		uint32_t hash = prefix_hash(addr->family, bits, masked);
		k8s_prefix_t *prefix = find_prefix(t, addr->family, bits, masked, hash);
		if (prefix == NULL) {
			if (delta < 0) {
				continue;
			}
			prefix = calloc(1, sizeof(*prefix));
			if (prefix == NULL) {
				return KNOT_ENOMEM;
			}
			prefix->hash = hash;
			prefix->family = addr->family;
			prefix->bits = bits;
			memcpy(prefix->bytes, masked, 8);
			prefix->count = 1;
			if (k8s_rcuhash_insert(&t->prefixes, hash, prefix, &t->retire) != KNOT_EOK) {
				free(prefix);
				return KNOT_ENOMEM;
			}
			continue;
		}
		uint32_t count = prefix->count + delta;
		CMM_STORE_SHARED(prefix->count, count);
		if (count == 0) {
			k8s_rcuhash_remove(&t->prefixes, hash, prefix);
			k8s_retire(&t->retire, prefix);
		}
	}
	return KNOT_EOK;
}

/*! \brief Orders address records by address, for matching old and new records. */
static int addr_ip_cmp(const void *a, const void *b)
{
	const k8s_addr_t *x = *(const k8s_addr_t * const *)a;
	const k8s_addr_t *y = *(const k8s_addr_t * const *)b;
	if (x->family != y->family) {
		return (x->family < y->family) ? -1 : 1;
	}
	int cmp = memcmp(x->bytes, y->bytes, 16);
	if (cmp != 0) {
		return cmp;
	}
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/*! \brief The block's records sorted by address; NULL for none or without memory. */
static const k8s_addr_t **sorted_addrs(const k8s_svc_t *svc)
{
	if (svc == NULL || svc->addr_count == 0) {
		return NULL;
	}
	const k8s_addr_t **sorted = malloc(svc->addr_count * sizeof(*sorted));
	if (sorted == NULL) {
		return NULL;
	}
	for (uint32_t i = 0; i < svc->addr_count; i++) {
		sorted[i] = &svc->addrs[i];
	}
	qsort(sorted, svc->addr_count, sizeof(*sorted), addr_ip_cmp);
	return sorted;
}

/*!
 * \brief Moves the PTR references from the old block's records to the new one's.
 *
 * A record whose address stays is swapped in place (one pointer store), so a
 * PTR query never misses it or sees it twice; the others are added or removed.
 * Cannot fail: the caller reserved room for every insertion.
 */
static void update_ptrs(k8s_table_t *t, const k8s_addr_t **olds, uint32_t old_n,
                        const k8s_addr_t **news, uint32_t new_n)
{
	uint32_t i = 0, j = 0;
	while (i < old_n || j < new_n) {
		int cmp = (i == old_n) ? 1 : (j == new_n) ? -1 : addr_ip_cmp(&olds[i], &news[j]);
		if (cmp == 0) {
			k8s_rcuhash_replace(&t->ptrs, addr_hash(olds[i]), olds[i], (void *)news[j]);
			i++;
			j++;
		} else if (cmp < 0) {
			k8s_rcuhash_remove(&t->ptrs, addr_hash(olds[i]), olds[i]);
			(void)prefix_update(t, olds[i], -1);
			i++;
		} else {
			int ret = k8s_rcuhash_insert(&t->ptrs, addr_hash(news[j]), (void *)news[j],
			                             &t->retire);
			assert(ret == KNOT_EOK);
			(void)ret;
			(void)prefix_update(t, news[j], +1);
			j++;
		}
	}
}

/*! \brief Drops the PTR references of a block that goes away. */
static void remove_ptrs(k8s_table_t *t, const k8s_svc_t *old)
{
	for (uint32_t i = 0; i < old->addr_count; i++) {
		const k8s_addr_t *addr = &old->addrs[i];
		k8s_rcuhash_remove(&t->ptrs, addr_hash(addr), addr);
		(void)prefix_update(t, addr, -1);
	}
}

int k8s_table_put_svc(k8s_table_t *t, k8s_svc_t *svc)
{
	svc->hash = svc_hash(svc->zone, svc->owner, svc->owner_len);
	const k8s_svc_t *old = find_svc(t, svc->hash, svc->zone, svc->owner, svc->owner_len);
	uint32_t old_n = (old != NULL) ? old->addr_count : 0;

	// Everything that can fail happens before anything is published.
	const k8s_addr_t **olds = sorted_addrs(old);
	const k8s_addr_t **news = sorted_addrs(svc);
	if ((old_n > 0 && olds == NULL) || (svc->addr_count > 0 && news == NULL) ||
	    k8s_rcuhash_reserve(&t->ptrs, svc->addr_count, &t->retire) != KNOT_EOK ||
	    k8s_rcuhash_reserve(&t->svcs, 1, &t->retire) != KNOT_EOK) {
		free(olds);
		free(news);
		free(svc);
		return KNOT_ENOMEM;
	}

	// Records first: the block must be reachable by PTR as soon as by name.
	update_ptrs(t, olds, old_n, news, svc->addr_count);
	free(olds);
	free(news);

	if (old != NULL) {
		k8s_rcuhash_replace(&t->svcs, svc->hash, old, svc);
		t->record_count -= old->addr_count;
		t->capped_count -= old->capped;
		t->bytes -= old->size;
		k8s_retire(&t->retire, (void *)old);
	} else {
		int ret = k8s_rcuhash_insert(&t->svcs, svc->hash, svc, &t->retire);
		assert(ret == KNOT_EOK);
		(void)ret;
		t->svc_count[svc->zone]++;
	}
	t->record_count += svc->addr_count;
	t->capped_count += svc->capped;
	t->bytes += svc->size;
	return KNOT_EOK;
}

void k8s_table_del_svc(k8s_table_t *t, k8s_zone_t zone, const char *ns, const char *name)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(ns, name, owner);
	if (owner_len == 0) {
		return;
	}
	uint32_t hash = svc_hash(zone, owner, owner_len);
	const k8s_svc_t *old = find_svc(t, hash, zone, owner, owner_len);
	if (old == NULL) {
		return;
	}

	remove_ptrs(t, old);
	k8s_rcuhash_remove(&t->svcs, hash, old);
	t->svc_count[zone]--;
	t->record_count -= old->addr_count;
	t->capped_count -= old->capped;
	t->bytes -= old->size;
	k8s_retire(&t->retire, (void *)old);
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
			t->ns_count--;
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
	t->ns_count++;
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
		    memcmp(pod->ns, ns, 1 + ns[0]) == 0) {
			return pod;
		}
	}
	return NULL;
}

int k8s_table_set_pod(k8s_table_t *t, const k8s_pod_t *old_pod, const k8s_pod_t *new_pod)
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
			pod->hash = hash_ip(new_pod->ips[i].family, new_pod->ips[i].bytes);
			pod->ip = new_pod->ips[i];
			pod->host_network = new_pod->host_network;
			memcpy(pod->ns, ns, ns_size);
			if (k8s_rcuhash_insert(&t->pods, pod->hash, pod, &t->retire) != KNOT_EOK) {
				free(pod);
				return KNOT_ENOMEM;
			}
			t->pod_count++;
		}
	}

	if (old_pod != NULL && old_pod->live) {
		uint8_t ns[64];
		size_t ns_size = ns_label(old_pod->meta.ns, ns);
		for (uint8_t i = 0; ns_size > 0 && i < old_pod->ip_count; i++) {
			const k8s_ip_t *ip = &old_pod->ips[i];
			uint32_t hash = hash_ip(ip->family, ip->bytes);
			k8s_podent_t *pod = find_podent(t, ip, ns, old_pod->host_network, hash);
			if (pod != NULL) {
				k8s_rcuhash_remove(&t->pods, hash, pod);
				k8s_retire(&t->retire, pod);
				t->pod_count--;
			}
		}
	}
	return KNOT_EOK;
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
	CMM_STORE_SHARED(t->ready, t->ready | bits);
}

void k8s_table_commit(k8s_table_t *t)
{
	k8s_retire_commit(&t->retire);
}
