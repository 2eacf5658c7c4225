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

/*
 * The kept names' due jobs waiting for a flight (keeper_priv.h), on the forwarder's
 * thread: a queue per tenant, a list per class in it, the tenants taken in turns. So a
 * tenant that floods names (each one held a whole timeout by a dead target) queues its
 * own jobs behind each other, never the others' behind its own: another tenant's name
 * asked for the first time starts at its turn, at the next flight that ends or at once
 * within its part of the flights (share.h). A name asked for the first time goes before
 * a refresh, a refresh before a retry after a failure.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/keeper_priv.h"

typedef char tenant_key_t[17];

static const char *tenant_key(k8s_tenant_t tenant, tenant_key_t buf)
{
	snprintf(buf, sizeof(tenant_key_t), "%016" PRIx64, tenant);
	return buf;
}

void turns_init(turns_t *turns)
{
	memset(&turns->queues, 0, sizeof(turns->queues));  // An empty map.
	CDS_INIT_LIST_HEAD(&turns->ring);
	turns->count = 0;
}

void turns_deinit(turns_t *turns)
{
	size_t pos = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(&turns->queues, &pos)) != NULL) {
		free(slot->value);
	}
	k8s_map_clear(&turns->queues);
	CDS_INIT_LIST_HEAD(&turns->ring);
	turns->count = 0;
}

/*! \brief A queue with no job left goes: tenants come and go with their names. */
static void queue_drop_empty(turns_t *turns, turn_queue_t *q)
{
	if (q->count > 0) {
		return;
	}
	tenant_key_t key;
	k8s_map_del(&turns->queues, tenant_key(q->tenant, key));
	cds_list_del(&q->ring_node);
	free(q);
}

bool turns_push(turns_t *turns, job_t *job)
{
	if (job->queue != NULL) {
		return true;
	}
	tenant_key_t key;
	k8s_tenant_t tenant = job->target->tenant;
	turn_queue_t *q = k8s_map_get(&turns->queues, tenant_key(tenant, key));
	if (q == NULL) {
		q = calloc(1, sizeof(*q));
		if (q == NULL || k8s_map_set(&turns->queues, key, q) != KNOT_EOK) {
			free(q);
			return false;
		}
		q->tenant = tenant;
		for (int c = 0; c < TURN_CLASSES; c++) {
			CDS_INIT_LIST_HEAD(&q->jobs[c]);
		}
		cds_list_add_tail(&q->ring_node, &turns->ring);
	}
	cds_list_add_tail(&job->turn_node, &q->jobs[job->turn]);
	job->queue = q;
	q->count++;
	turns->count++;
	return true;
}

void turns_remove(turns_t *turns, job_t *job)
{
	turn_queue_t *q = job->queue;
	if (q == NULL) {
		return;
	}
	cds_list_del(&job->turn_node);
	job->queue = NULL;
	q->count--;
	turns->count--;
	queue_drop_empty(turns, q);
}

void turns_run(turns_t *turns, bool (*admit)(void *ctx, job_t *job),
               void (*start)(void *ctx, job_t *job), void *ctx)
{
	for (int c = 0; c < TURN_CLASSES && turns->count > 0; c++) {
		bool started = true;
		while (started && turns->count > 0) {
			// One turn: each tenant's first job of the class, if it gets a flight.
			started = false;
			struct cds_list_head *last = turns->ring.prev;
			for (bool more = true; more && !cds_list_empty(&turns->ring); ) {
				turn_queue_t *q = cds_list_first_entry(&turns->ring, turn_queue_t,
				                                       ring_node);
				more = (&q->ring_node != last);
				cds_list_del(&q->ring_node);
				cds_list_add_tail(&q->ring_node, &turns->ring);
				if (cds_list_empty(&q->jobs[c])) {
					continue;
				}
				job_t *job = cds_list_first_entry(&q->jobs[c], job_t, turn_node);
				if (!admit(ctx, job)) {
					continue;
				}
				turns_remove(turns, job);  // May free q: it is not read again.
				start(ctx, job);
				started = true;
			}
		}
	}
}
