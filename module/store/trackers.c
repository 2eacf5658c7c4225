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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/dname.h>
#include <libknot/errcode.h>
#include <libknot/error.h>

#include "store/resources.h"
#include "store/trackers.h"

/* Cluster id. */

int k8s_clusterid_init(k8s_clusterid_t *c, const char *conf)
{
	memset(c, 0, sizeof(*c));
	if (conf != NULL) {
		c->conf = strdup(conf);
		if (c->conf == NULL) {
			return KNOT_ENOMEM;
		}
		snprintf(c->id, sizeof(c->id), "%s", conf);
	}
	return KNOT_EOK;
}

void k8s_clusterid_deinit(k8s_clusterid_t *c)
{
	free(c->conf);
	c->conf = NULL;
}

bool k8s_clusterid_update(k8s_clusterid_t *c, const k8s_log_t *log,
                          const k8s_object_t *old, const k8s_object_t *obj)
{
	const k8s_object_t *any = (obj != NULL) ? obj : old;
	if (c->conf != NULL || any == NULL || strcmp(any->name, K8S_CLUSTER_ID_PROPERTY) != 0) {
		return false;
	}
	const char *value = (obj != NULL) ? ((const k8s_clusterproperty_t *)obj)->value : NULL;
	// Cluster ids are DNS labels, compared with the lowercased ids of imports and slices.
	char id[sizeof(c->id)];
	size_t len = 0;
	for (; value != NULL && value[len] != '\0' && len + 1 < sizeof(id); len++) {
		id[len] = (value[len] >= 'A' && value[len] <= 'Z') ? value[len] - 'A' + 'a' : value[len];
	}
	id[len] = '\0';
	if (strcmp(id, c->id) == 0) {
		return false;
	}
	k8s_logf(log, LOG_INFO, "cluster id is '%s'", id);
	memcpy(c->id, id, len + 1);
	return true;
}

/* Programming latency. */

void k8s_latency_note(k8s_latency_t *l, int64_t trigger_ns)
{
	if (trigger_ns <= 0) {
		return;
	}
	// Full or out of memory: only a statistic is lost.
	(void)k8s_buf_append(&l->triggers, &trigger_ns, sizeof(trigger_ns),
	                     K8S_LATENCY_NOTES_MAX * sizeof(trigger_ns));
}

static unsigned latency_bucket(int64_t ns)
{
	int64_t ms = (ns + 999999) / 1000000;
	unsigned bucket = 0;
	for (int64_t limit = 1; bucket < K8S_LATENCY_BUCKETS - 1 && ms > limit; limit *= 2) {
		bucket++;
	}
	return bucket;
}

void k8s_latency_commit(k8s_latency_t *l, int64_t now_ns, uint64_t buckets[K8S_LATENCY_BUCKETS],
                        uint64_t *sum_us)
{
	size_t count = l->triggers.len / sizeof(int64_t);
	for (size_t i = 0; i < count; i++) {
		int64_t trigger_ns;
		memcpy(&trigger_ns, l->triggers.data + i * sizeof(trigger_ns), sizeof(trigger_ns));
		int64_t latency = now_ns - trigger_ns;
		latency = (latency > 0) ? latency : 0;
		buckets[latency_bucket(latency)]++;
		*sum_us += (uint64_t)latency / 1000;
	}
	// A burst's memory is given back; a usual round's is kept.
	k8s_buf_reset(&l->triggers, 4096 * sizeof(int64_t));
}

void k8s_latency_deinit(k8s_latency_t *l)
{
	k8s_buf_free(&l->triggers);
}
