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

#include <urcu/urcu-memb.h>

#include "lib/bulk.h"
#include "lib/retire.h"
#include "lib/tsan_rcu.h"

#ifdef __SANITIZE_THREAD__
char k8s_tsan_grace;
#endif

typedef struct {
	struct rcu_head head;
	size_t count;
	void *ptrs[];
} batch_t;

static void batch_free(struct rcu_head *head)
{
	k8s_tsan_grace_passed();
	batch_t *batch = caa_container_of(head, batch_t, head);
	for (size_t i = 0; i < batch->count; i++) {
		k8s_bulk_free(batch->ptrs[i]);
	}
	free(batch);
	k8s_tsan_callback_end();
}

void k8s_retire(k8s_retire_t *r, void *ptr)
{
	if (ptr == NULL) {
		return;
	}
	if (r->count == r->cap) {
		size_t cap = (r->cap > 0) ? 2 * r->cap : 64;
		void **ptrs = realloc(r->ptrs, cap * sizeof(void *));
		if (ptrs == NULL) {
			// No memory to defer: wait for the readers instead.
			urcu_memb_synchronize_rcu();
			k8s_bulk_free(ptr);
			return;
		}
		r->ptrs = ptrs;
		r->cap = cap;
	}
	r->ptrs[r->count++] = ptr;
}

void k8s_retire_commit(k8s_retire_t *r)
{
	if (r->count == 0) {
		return;
	}

	batch_t *batch = malloc(sizeof(*batch) + r->count * sizeof(void *));
	if (batch == NULL) {
		urcu_memb_synchronize_rcu();
		k8s_retire_flush_now(r);
		return;
	}
	batch->count = r->count;
	for (size_t i = 0; i < r->count; i++) {
		batch->ptrs[i] = r->ptrs[i];
	}
	r->count = 0;
	urcu_memb_call_rcu(&batch->head, batch_free);

	// A huge commit (initial sync) must not pin its list's memory.
	if (r->cap > 4096) {
		free(r->ptrs);
		r->ptrs = NULL;
		r->cap = 0;
	}
}

void k8s_retire_flush_now(k8s_retire_t *r)
{
	for (size_t i = 0; i < r->count; i++) {
		k8s_bulk_free(r->ptrs[i]);
	}
	free(r->ptrs);
	r->ptrs = NULL;
	r->count = 0;
	r->cap = 0;
}
