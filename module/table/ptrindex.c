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

#include "table/ptrindex.h"

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

uint32_t k8s_ptrindex_hash(const void *elem)
{
	if (ptr_is_set(elem)) {
		return ptr_set(elem)->hash;
	}
	const k8s_addr_t *addr = elem;
	return k8s_table_ip_hash(addr->family, addr->bytes);
}

static uint32_t prefix_hash(uint8_t family, uint8_t bits, const uint8_t *bytes)
{
	uint8_t key[10] = { family, bits };
	memcpy(key + 2, bytes, 8);
	return k8s_hash(key, sizeof(key));
}

static bool addr_ip_equal(const k8s_addr_t *addr, const k8s_ip_t *ip)
{
	return addr->family == ip->family &&
	       memcmp(addr->bytes, ip->bytes, k8s_ip_len(ip->family)) == 0;
}


/* Readers. */

size_t k8s_table_ptr(const k8s_table_t *t, const k8s_ip_t *ip, const k8s_addr_t **out, size_t max)
{
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &t->ptrs, k8s_table_ip_hash(ip->family, ip->bytes));
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
static const k8s_addr_t **sorted_addrs(const k8s_block_t *svc)
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
static void ptr_merge(const k8s_addr_t *const *owners, size_t count, const k8s_block_t *old,
                      const k8s_addr_t *const *news, size_t news_count, const k8s_addr_t **out)
{
	bool cluster = news_count > 0 && k8s_addr_svc(news[0])->zone == K8S_ZONE_CLUSTER;
	size_t n = 0, next = 0;
	for (size_t i = 0; i < count; i++) {
		const k8s_block_t *svc = k8s_addr_svc(owners[i]);
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
static int ptr_plan_addr(const k8s_table_t *t, ptr_plan_t *plan, const k8s_block_t *old,
                         const k8s_addr_t *const *olds, size_t olds_count,
                         const k8s_addr_t *const *news, size_t news_count)
{
	const k8s_addr_t *addr = (news_count > 0) ? news[0] : olds[0];
	ptr_op_t *op = &plan->ops[plan->count];
	*op = (ptr_op_t){
		.hash = k8s_table_ip_hash(addr->family, addr->bytes),
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
static int ptr_plan(const k8s_table_t *t, ptr_plan_t *plan, const k8s_block_t *old,
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

int k8s_ptrindex_update(k8s_table_t *t, const k8s_block_t *old, const k8s_block_t *svc)
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

void k8s_ptrindex_free(k8s_table_t *t)
{
	size_t pos = 0;
	void *elem;
	while (t->ptrs.arr != NULL && (elem = k8s_rcuhash_walk(&t->ptrs, &pos)) != NULL) {
		if (ptr_is_set(elem)) {
			free((void *)ptr_set(elem));
		}
	}
	pos = 0;
	while (t->prefixes.arr != NULL && (elem = k8s_rcuhash_walk(&t->prefixes, &pos)) != NULL) {
		free(elem);
	}
}
