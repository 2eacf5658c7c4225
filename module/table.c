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
#include "qname.h"
#include "table.h"


static size_t ip_len(uint8_t family)
{
	return (family == AF_INET) ? 4 : 16;
}

/*! \brief Hash of an address: its length tells the family. */
static uint32_t hash_ip(uint8_t family, const uint8_t *bytes)
{
	return k8s_hash(bytes, ip_len(family));
}

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

/*!
 * \brief The records owning one address, when more than one does.
 *
 * The PTR index has one slot per address, however many records share it: the
 * record itself, or one of these tagged with PTR_SET. Published immutable; a
 * change publishes a new one and retires the old.
 */
typedef struct {
	uint32_t hash;
	uint32_t count;
	const k8s_addr_t *owners[];  /*!< Cluster-zone records first. */
} ptrset_t;

/*! \brief Tag of a ptrset_t in a slot (records and sets are at least 4-byte aligned). */
#define PTR_SET ((uintptr_t)2)

static bool ptr_is_set(const void *elem)
{
	return (uintptr_t)elem & PTR_SET;
}

static const ptrset_t *ptr_set(const void *elem)
{
	return (const ptrset_t *)((uintptr_t)elem & ~PTR_SET);
}

static uint32_t ptr_hash(const void *elem)
{
	if (ptr_is_set(elem)) {
		return ptr_set(elem)->hash;
	}
	const k8s_addr_t *addr = elem;
	return hash_ip(addr->family, addr->bytes);
}

static uint32_t prefix_hash(uint8_t family, uint8_t bits, const uint8_t *bytes)
{
	uint8_t key[10] = { family, bits };
	memcpy(key + 2, bytes, 8);
	return k8s_hash(key, sizeof(key));
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

size_t k8s_table_ptr(const k8s_table_t *t, const k8s_ip_t *ip, const k8s_addr_t **out, size_t max)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->ptrs, hash_ip(ip->family, ip->bytes));
	const void *elem;
	while ((elem = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (!ptr_is_set(elem)) {
			if (addr_ip_equal(elem, ip)) {
				if (max > 0) {
					out[0] = elem;
				}
				return 1;
			}
			continue;
		}
		// Several records: stored with the cluster-zone ones first, which claim the address.
		const ptrset_t *set = ptr_set(elem);
		if (addr_ip_equal(set->owners[0], ip)) {
			size_t n = (set->count < max) ? set->count : max;
			memcpy(out, set->owners, n * sizeof(*out));
			return set->count;
		}
	}
	return 0;
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
		if (podent_has_ip(pod, ip, hash) && k8s_label_equal(pod->ns, ns)) {
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
	    k8s_rcuhash_init(&t->ptrs, ptr_hash) != KNOT_EOK ||
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
	if (t->ptrs.arr != NULL) {
		size_t pos = 0;
		void *elem;
		while ((elem = k8s_rcuhash_walk(&t->ptrs, &pos)) != NULL) {
			if (ptr_is_set(elem)) {
				free((void *)ptr_set(elem));
			}
		}
	}
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

static bool same_ip(const k8s_addr_t *a, const k8s_addr_t *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, 16) == 0;
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

/*! \brief The PTR index slot of an address (a record or a tagged set), or NULL. */
static void *ptr_find(const k8s_table_t *t, const k8s_addr_t *addr, uint32_t hash)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->ptrs, hash);
	void *elem;
	while ((elem = k8s_rcuhash_iter_next(&it)) != NULL) {
		const k8s_addr_t *first = ptr_is_set(elem) ? ptr_set(elem)->owners[0] : elem;
		if (same_ip(first, addr)) {
			return elem;
		}
	}
	return NULL;
}

/*! \brief One address's change of the PTR index. */
typedef struct {
	uint32_t hash;
	void *old;                /*!< Its slot now (a record or a tagged set), or NULL. */
	void *new;                /*!< Its slot after, or NULL. */
	const k8s_addr_t *addr;   /*!< A record of the address, for the prefix counts. */
	long delta;               /*!< Records of the address gained or (negative) lost. */
} ptr_op_t;

typedef struct {
	ptr_op_t *ops;
	size_t count;
	size_t inserts;           /*!< Addresses new to the index. */
} ptr_plan_t;

static void ptr_plan_free(ptr_plan_t *plan)
{
	for (size_t i = 0; i < plan->count; i++) {
		if (plan->ops[i].new != NULL && ptr_is_set(plan->ops[i].new)) {
			free((void *)ptr_set(plan->ops[i].new));
		}
	}
	free(plan->ops);
	memset(plan, 0, sizeof(*plan));
}

/*!
 * \brief Writes the owners of an address after a block's change: \a old's records give way to \a news.
 *
 * A record of the old block is replaced in place by one of the new block, the
 * remaining new ones go to the end of their zone's part (cluster zone first).
 */
static void ptr_merge(const k8s_addr_t *const *owners, size_t count, const k8s_svc_t *old,
                      const k8s_addr_t *const *news, size_t news_count, const k8s_addr_t **out)
{
	bool cluster = news_count > 0 && k8s_addr_svc(news[0])->zone == K8S_ZONE_CLUSTER;
	size_t n = 0, next = 0;
	for (size_t i = 0; i < count; i++) {
		const k8s_svc_t *svc = k8s_addr_svc(owners[i]);
		if (svc == old) {
			if (next < news_count) {
				out[n++] = news[next++];
			}
			continue;
		}
		if (cluster && svc->zone != K8S_ZONE_CLUSTER) {
			while (next < news_count) {
				out[n++] = news[next++];
			}
		}
		out[n++] = owners[i];
	}
	while (next < news_count) {
		out[n++] = news[next++];
	}
}

/*!
 * \brief Plans the PTR index change of one address: what its slot holds after.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
static int ptr_plan_addr(const k8s_table_t *t, ptr_plan_t *plan, const k8s_svc_t *old,
                         const k8s_addr_t *const *olds, size_t olds_count,
                         const k8s_addr_t *const *news, size_t news_count)
{
	const k8s_addr_t *addr = (news_count > 0) ? news[0] : olds[0];
	ptr_op_t *op = &plan->ops[plan->count];
	*op = (ptr_op_t){
		.hash = hash_ip(addr->family, addr->bytes),
		.addr = addr,
		.delta = (long)news_count - (long)olds_count,
	};
	op->old = ptr_find(t, addr, op->hash);

	const k8s_addr_t *single = op->old;
	const k8s_addr_t *const *owners = NULL;
	size_t count = 0;
	if (op->old != NULL && ptr_is_set(op->old)) {
		owners = ptr_set(op->old)->owners;
		count = ptr_set(op->old)->count;
	} else if (op->old != NULL) {
		owners = &single;
		count = 1;
	}
	size_t total = news_count;
	for (size_t i = 0; i < count; i++) {
		total += (k8s_addr_svc(owners[i]) != old);
	}

	if (total == 1) {
		const k8s_addr_t *only;
		ptr_merge(owners, count, old, news, news_count, &only);
		op->new = (void *)only;
	} else if (total > 1) {
		if (total > UINT32_MAX) {
			return KNOT_ENOMEM;
		}
		ptrset_t *set = malloc(sizeof(*set) + total * sizeof(set->owners[0]));
		if (set == NULL) {
			return KNOT_ENOMEM;
		}
		set->hash = op->hash;
		set->count = total;
		ptr_merge(owners, count, old, news, news_count, set->owners);
		op->new = (void *)((uintptr_t)set | PTR_SET);
	}
	plan->inserts += (op->old == NULL);
	plan->count++;
	return KNOT_EOK;
}

/*!
 * \brief Plans the PTR index changes of a block replacing another (either may be absent).
 *
 * Every allocation happens here, before anything is published.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (\a plan freed)
 */
static int ptr_plan(const k8s_table_t *t, ptr_plan_t *plan, const k8s_svc_t *old,
                    const k8s_addr_t **olds, size_t old_n, const k8s_addr_t **news, size_t new_n)
{
	memset(plan, 0, sizeof(*plan));
	if (old_n + new_n == 0) {
		return KNOT_EOK;
	}
	plan->ops = malloc((old_n + new_n) * sizeof(*plan->ops));
	if (plan->ops == NULL) {
		return KNOT_ENOMEM;
	}
	size_t i = 0, j = 0;
	while (i < old_n || j < new_n) {
		// The next address in order, and the records of both blocks that have it.
		const k8s_addr_t *addr = (i == old_n) ? news[j] : (j == new_n) ? olds[i] :
		                         (addr_ip_cmp(&olds[i], &news[j]) <= 0) ? olds[i] : news[j];
		size_t i_end = i, j_end = j;
		while (i_end < old_n && same_ip(olds[i_end], addr)) {
			i_end++;
		}
		while (j_end < new_n && same_ip(news[j_end], addr)) {
			j_end++;
		}
		// No offset on a NULL array (a block without addresses): undefined behaviour.
		const k8s_addr_t **old_run = (i_end > i) ? olds + i : NULL;
		const k8s_addr_t **new_run = (j_end > j) ? news + j : NULL;
		if (ptr_plan_addr(t, plan, old, old_run, i_end - i, new_run, j_end - j) != KNOT_EOK) {
			ptr_plan_free(plan);
			return KNOT_ENOMEM;
		}
		i = i_end;
		j = j_end;
	}
	return KNOT_EOK;
}

/*!
 * \brief Publishes a planned PTR index change, each address's slot with one pointer store.
 *
 * A PTR query sees an address's records either all before or all after the
 * change: never a record missing that stays, never one twice. Cannot fail:
 * the caller reserved room for the insertions.
 */
static void ptr_apply(k8s_table_t *t, ptr_plan_t *plan)
{
	for (size_t i = 0; i < plan->count; i++) {
		ptr_op_t *op = &plan->ops[i];
		if (op->old == NULL) {
			int ret = k8s_rcuhash_insert(&t->ptrs, op->hash, op->new, &t->retire);
			assert(ret == KNOT_EOK);
			(void)ret;
		} else if (op->new == NULL) {
			k8s_rcuhash_remove(&t->ptrs, op->hash, op->old);
		} else {
			k8s_rcuhash_replace(&t->ptrs, op->hash, op->old, op->new);
		}
		if (op->old != NULL && ptr_is_set(op->old)) {
			k8s_retire(&t->retire, (void *)ptr_set(op->old));
		}
		for (long d = op->delta; d != 0; d += (d > 0) ? -1 : 1) {
			(void)prefix_update(t, op->addr, (d > 0) ? +1 : -1);
		}
	}
	free(plan->ops);
	memset(plan, 0, sizeof(*plan));
}

/*!
 * \brief Plans and publishes the PTR index change of a block replacing another.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (nothing changed)
 */
static int update_ptrs(k8s_table_t *t, const k8s_svc_t *old, const k8s_svc_t *svc)
{
	const k8s_addr_t **olds = sorted_addrs(old);
	const k8s_addr_t **news = sorted_addrs(svc);
	uint32_t old_n = (old != NULL) ? old->addr_count : 0;
	uint32_t new_n = (svc != NULL) ? svc->addr_count : 0;
	ptr_plan_t plan;
	int ret = KNOT_ENOMEM;
	if ((old_n == 0 || olds != NULL) && (new_n == 0 || news != NULL) &&
	    ptr_plan(t, &plan, old, olds, old_n, news, new_n) == KNOT_EOK) {
		ret = k8s_rcuhash_reserve(&t->ptrs, plan.inserts, &t->retire);
		if (ret == KNOT_EOK) {
			ptr_apply(t, &plan);
		} else {
			ptr_plan_free(&plan);
		}
	}
	free(olds);
	free(news);
	return ret;
}

int k8s_table_put_svc(k8s_table_t *t, k8s_svc_t *svc)
{
	svc->hash = svc_hash(svc->zone, svc->owner, svc->owner_len);
	const k8s_svc_t *old = find_svc(t, svc->hash, svc->zone, svc->owner, svc->owner_len);

	// Everything that can fail happens before anything is published; records
	// first: the block must be reachable by PTR as soon as by name.
	if (k8s_rcuhash_reserve(&t->svcs, 1, &t->retire) != KNOT_EOK ||
	    update_ptrs(t, old, svc) != KNOT_EOK) {
		free(svc);
		return KNOT_ENOMEM;
	}

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

int k8s_table_del_svc(k8s_table_t *t, k8s_zone_t zone, const char *ns, const char *name)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(ns, name, owner);
	if (owner_len == 0) {
		return KNOT_EOK;
	}
	uint32_t hash = svc_hash(zone, owner, owner_len);
	const k8s_svc_t *old = find_svc(t, hash, zone, owner, owner_len);
	if (old == NULL) {
		return KNOT_EOK;
	}

	if (update_ptrs(t, old, NULL) != KNOT_EOK) {
		return KNOT_ENOMEM;
	}
	k8s_rcuhash_remove(&t->svcs, hash, old);
	t->svc_count[zone]--;
	t->record_count -= old->addr_count;
	t->capped_count -= old->capped;
	t->bytes -= old->size;
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
		    k8s_label_equal(pod->ns, ns)) {
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

const uint8_t *k8s_table_pod_ns(const k8s_table_t *t, const k8s_ip_t *ip)
{
	uint32_t hash = hash_ip(ip->family, ip->bytes);
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
	// Release: the records published before are visible to whoever sees the bits.
	__atomic_store_n(&t->ready, t->ready | bits, __ATOMIC_RELEASE);
}

void k8s_table_commit(k8s_table_t *t)
{
	k8s_retire_commit(&t->retire);
}
