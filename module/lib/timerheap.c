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

#include <stdbool.h>
#include <stdlib.h>

#include <libknot/errcode.h>

#include "lib/timerheap.h"

static bool heap_before(const k8s_timer_heap_t *h, size_t a, size_t b)
{
	return h->items[a]->due_ms < h->items[b]->due_ms;
}

static void heap_swap(k8s_timer_heap_t *h, size_t a, size_t b)
{
	k8s_timer_t *tmp = h->items[a];
	h->items[a] = h->items[b];
	h->items[b] = tmp;
	h->items[a]->pos = a;
	h->items[b]->pos = b;
}

static void heap_up(k8s_timer_heap_t *h, size_t pos)
{
	while (pos > 0 && heap_before(h, pos, (pos - 1) / 2)) {
		heap_swap(h, pos, (pos - 1) / 2);
		pos = (pos - 1) / 2;
	}
}

static void heap_down(k8s_timer_heap_t *h, size_t pos)
{
	for (;;) {
		size_t min = pos;
		size_t left = 2 * pos + 1, right = 2 * pos + 2;
		if (left < h->count && heap_before(h, left, min)) {
			min = left;
		}
		if (right < h->count && heap_before(h, right, min)) {
			min = right;
		}
		if (min == pos) {
			return;
		}
		heap_swap(h, pos, min);
		pos = min;
	}
}

int k8s_timer_heap_reserve(k8s_timer_heap_t *h, size_t cap)
{
	if (cap <= h->cap) {
		return KNOT_EOK;
	}
	cap = (cap < 2 * h->cap) ? 2 * h->cap : cap;
	k8s_timer_t **items = realloc(h->items, cap * sizeof(k8s_timer_t *));
	if (items == NULL) {
		return KNOT_ENOMEM;
	}
	h->items = items;
	h->cap = cap;
	return KNOT_EOK;
}

void k8s_timer_heap_push(k8s_timer_heap_t *h, k8s_timer_t *t, uint64_t due_ms)
{
	t->due_ms = due_ms;
	t->pos = h->count;
	h->items[h->count++] = t;
	heap_up(h, t->pos);
}

void k8s_timer_heap_remove(k8s_timer_heap_t *h, k8s_timer_t *t)
{
	size_t pos = t->pos;
	t->pos = K8S_TIMER_IDLE;
	h->count--;
	if (pos == h->count) {
		return;
	}
	h->items[pos] = h->items[h->count];
	h->items[pos]->pos = pos;
	heap_up(h, pos);
	heap_down(h, h->items[pos]->pos);
}

void k8s_timer_heap_deinit(k8s_timer_heap_t *h)
{
	free(h->items);
	h->items = NULL;
	h->count = h->cap = 0;
}
