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

#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/rcuhash.h"

#define MIN_CAPACITY 16

static k8s_rcuhash_arr_t *arr_new(size_t capacity)
{
	k8s_rcuhash_arr_t *arr = k8s_bulk_calloc(sizeof(*arr) + capacity * sizeof(void *));
	if (arr != NULL) {
		arr->mask = capacity - 1;
	}
	return arr;
}

/*!
 * \brief Capacity keeping the load (live elements) at most a half after a rebuild, a
 * quarter if the table is sparse.
 */
static size_t capacity_for(size_t live, bool sparse)
{
	size_t capacity = MIN_CAPACITY;
	while (capacity < (sparse ? 4 : 2) * (live + 1)) {
		capacity *= 2;
	}
	return capacity;
}

int k8s_rcuhash_init(k8s_rcuhash_t *h, k8s_rcuhash_fn hash)
{
	memset(h, 0, sizeof(*h));
	h->hash = hash;
	h->arr = arr_new(MIN_CAPACITY);
	return (h->arr != NULL) ? KNOT_EOK : KNOT_ENOMEM;
}

void k8s_rcuhash_clear(k8s_rcuhash_t *h)
{
	memset(h->arr->slots, 0, (h->arr->mask + 1) * sizeof(void *));
	h->used = 0;
	h->live = 0;
}

void k8s_rcuhash_deinit(k8s_rcuhash_t *h)
{
	k8s_bulk_free(h->arr);
	h->arr = NULL;
	h->used = 0;
	h->live = 0;
}

static void arr_put(k8s_rcuhash_arr_t *arr, uint32_t hash, void *elem)
{
	size_t pos = hash & arr->mask;
	while (arr->slots[pos] != NULL) {
		pos = (pos + 1) & arr->mask;
	}
	arr->slots[pos] = elem;
}

/*! \brief Builds a new array without tombstones and publishes it. */
static int rebuild(k8s_rcuhash_t *h, size_t live, k8s_retire_t *retire)
{
	k8s_rcuhash_arr_t *arr = arr_new(capacity_for(live, h->sparse));
	if (arr == NULL) {
		return KNOT_ENOMEM;
	}

	k8s_rcuhash_arr_t *old = h->arr;
	for (size_t i = 0; i <= old->mask; i++) {
		void *elem = old->slots[i];
		if (elem != NULL && elem != K8S_RCUHASH_TOMB) {
			arr_put(arr, h->hash(elem), elem);
		}
	}

	rcu_assign_pointer(h->arr, arr);
	h->used = h->live;
	k8s_retire(retire, old);
	return KNOT_EOK;
}

int k8s_rcuhash_reserve(k8s_rcuhash_t *h, size_t extra, k8s_retire_t *retire)
{
	// Keep at least a quarter of the slots empty so that every probe ends soon (a half
	// if sparse: a miss then ends in 2.5 probes on average, not 8.5).
	size_t capacity = h->arr->mask + 1;
	if (4 * (h->used + extra) > (h->sparse ? 2 : 3) * capacity) {
		return rebuild(h, h->live + extra, retire);
	}
	return KNOT_EOK;
}

int k8s_rcuhash_insert(k8s_rcuhash_t *h, uint32_t hash, void *elem, k8s_retire_t *retire)
{
	int ret = k8s_rcuhash_reserve(h, 1, retire);
	if (ret != KNOT_EOK) {
		return ret;
	}

	k8s_rcuhash_arr_t *arr = h->arr;
	size_t pos = hash & arr->mask;
	while (arr->slots[pos] != NULL && arr->slots[pos] != K8S_RCUHASH_TOMB) {
		pos = (pos + 1) & arr->mask;
	}
	if (arr->slots[pos] == NULL) {
		h->used++;
	}
	rcu_assign_pointer(arr->slots[pos], elem);
	h->live++;
	return KNOT_EOK;
}

static void **find_slot(const k8s_rcuhash_t *h, uint32_t hash, const void *elem)
{
	k8s_rcuhash_arr_t *arr = h->arr;
	size_t pos = hash & arr->mask;
	while (arr->slots[pos] != NULL) {
		if (arr->slots[pos] == elem) {
			return &arr->slots[pos];
		}
		pos = (pos + 1) & arr->mask;
	}
	return NULL;
}

bool k8s_rcuhash_replace(k8s_rcuhash_t *h, uint32_t hash, const void *elem_old, void *elem_new)
{
	void **slot = find_slot(h, hash, elem_old);
	if (slot == NULL) {
		return false;
	}
	rcu_assign_pointer(*slot, elem_new);
	return true;
}

bool k8s_rcuhash_remove(k8s_rcuhash_t *h, uint32_t hash, const void *elem)
{
	void **slot = find_slot(h, hash, elem);
	if (slot == NULL) {
		return false;
	}
	rcu_assign_pointer(*slot, K8S_RCUHASH_TOMB);
	h->live--;
	return true;
}

void *k8s_rcuhash_walk(const k8s_rcuhash_t *h, size_t *pos)
{
	const k8s_rcuhash_arr_t *arr = h->arr;
	while (*pos <= arr->mask) {
		void *elem = arr->slots[(*pos)++];
		if (elem != NULL && elem != K8S_RCUHASH_TOMB) {
			return elem;
		}
	}
	return NULL;
}
