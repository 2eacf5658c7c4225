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
 * The warm restart's snapshot payload (module/store/snapshot.c), as a hostile file would hold
 * it: the objects it gives go into a store and its table as at a warm start (table
 * invariants checked, check.h), and what the store then holds, written again, reads
 * back whole with the same digests: a snapshot the module writes is always readable.
 *
 * The objects are decoded and loaded in a bulk session (bulk.h), as at a warm start,
 * so ASan watches its chunks too (their unused bytes are poisoned).
 *
 * Input: one byte per source (the objects the file's header announces), then the payload.
 */

#include <stddef.h>
#include <stdint.h>

#include "lib/bulk.h"
#include "check.h"
#include "store/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < K8S_SRC_COUNT) {
		return 0;
	}
	uint64_t counts[K8S_SRC_COUNT];
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		counts[src] = data[src];
	}
	k8s_snapshot_t snap;
	char why[256];
	// In a bulk session, as at a warm start: under ASan its chunks are poisoned between blocks.
	k8s_bulk_begin();
	if (k8s_snapshot_decode((const char *)data + K8S_SRC_COUNT, size - K8S_SRC_COUNT, counts,
	                        &snap, why, sizeof(why)) != KNOT_EOK) {
		k8s_bulk_end();
		CHECK(snap.count == 0 && snap.objects == NULL);
		CHECK(k8s_bulk_chunks() == 0);
		return 0;
	}

	k8s_table_t table;
	CHECK(k8s_table_init(&table) == KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *store = k8s_store_new(&table, &conf, NULL);
	CHECK(store != NULL);
	size_t svcs = 0, addrs = 0;
	k8s_snapshot_sizes(&snap, &svcs, &addrs);
	CHECK(k8s_table_reserve(&table, svcs, addrs) == KNOT_EOK);
	k8s_snapshot_load(&snap, store);
	k8s_snapshot_free(&snap);
	k8s_store_commit(store, 0);
	k8s_bulk_end();
	check_table(&table);

	k8s_buf_t again = { 0 };
	uint64_t written[K8S_SRC_COUNT];
	uint32_t all = (1u << K8S_SRC_COUNT) - 1;
	k8s_snapshot_objects_t objs;
	CHECK(k8s_snapshot_take(store, all, &objs) == KNOT_EOK);
	CHECK(k8s_snapshot_encode(&objs, 0, &again, written) == KNOT_EOK);
	k8s_snapshot_objects_free(&objs);
	int ret = k8s_snapshot_decode(again.data, again.len, written, &snap, why, sizeof(why));
	if (ret != KNOT_EOK) {
		fprintf(stderr, "a written snapshot does not read back: %s\n", why);
		abort();
	}
	const k8s_store_stats_t *stats = k8s_store_stats(store);
	size_t held = 0;
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		held += stats->objects[src];
	}
	CHECK(snap.count == held);
	for (size_t i = 0; i < snap.count; i++) {
		const k8s_object_t *obj = snap.objects[i];
		const k8s_object_t *orig = k8s_store_get(store, snap.source_of[i], obj->ns, obj->name);
		// Computed from the fields on both sides: a snapshot's objects are read without one.
		CHECK(orig != NULL && k8s_object_digest(orig) == k8s_object_digest(obj));
	}
	k8s_snapshot_free(&snap);
	k8s_buf_free(&again);

	k8s_store_free(store);
	k8s_table_commit(&table);
	k8s_table_deinit(&table);
	CHECK(k8s_bulk_chunks() == 0);  // Every block of the session freed.
	return 0;
}
