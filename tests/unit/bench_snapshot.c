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
 * The warm restart's phases, without knotd: a store of generated services (each with one
 * EndpointSlice, shaped as bench/warm_restart's simulator generates them) is written as a
 * snapshot, then read back into a new store and published, timed phase by phase (CPU
 * time of the process: the write's flush to disk is not in it): three rounds in this
 * process, whose memory is warm, then one in a fresh process as knotd's start is, whose
 * every page is touched for the first time (page faults counted: all, then per phase). The
 * loads run in a bulk session (bulk.h), as the watcher's warm start does.
 *
 * The snapshot goes in a directory of its own under /tmp (its key made there, removed after).
 *
 *   make tests/unit/bench_snapshot && tests/unit/bench_snapshot [services [endpoints]]
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libknot/errcode.h>
#include <libknot/error.h>
#include <urcu/urcu-memb.h>

#include "lib/bulk.h"
#include "lib/hash.h"
#include "store/snapshot.h"

/*! CPU time: the machine is shared, wall time says little. */
static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static long page_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/*! Reads the snapshot at \a path into a new store and table as the watcher does; prints the phases. */
static int load(const char *path)
{
	k8s_snapdir_t dir;
	char why[256] = "";
	if (k8s_snapdir_open(&dir, path, why, sizeof(why)) != KNOT_EOK) {
		fprintf(stderr, "the snapshots' directory %s: %s\n", path, why);
		return KNOT_ERROR;
	}
	k8s_table_t table;
	k8s_store_conf_t conf = { 0 };
	if (k8s_table_init(&table) != KNOT_EOK) {
		return KNOT_ENOMEM;
	}
	k8s_store_t *store = k8s_store_new(&table, &conf, NULL);
	k8s_snapshot_t snap;
	long faults = page_faults();
	struct timespec t0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	k8s_bulk_begin();  // As the watcher's warm start.
	int ret = k8s_snapshot_read(&dir, "snapshot", 1, time(NULL), 0, &snap, why, sizeof(why));
	double read = ms_since(&t0);
	long f_read = page_faults();
	size_t svcs = 0, addrs = 0;
	k8s_snapshot_sizes(&snap, &svcs, &addrs);
	k8s_table_reserve(&table, svcs, addrs);
	k8s_snapshot_load(&snap, store);
	double stored = ms_since(&t0) - read;
	long f_store = page_faults();
	k8s_store_commit(store, 0);
	k8s_bulk_end();
	double total = ms_since(&t0);
	long f_end = page_faults();
	printf("read: %zu objects in %.1f ms (%s%s), stored in %.1f ms, published in %.1f ms, "
	       "total %.1f ms, %ld page faults (%ld, %ld, %ld)\n", snap.count, read, knot_strerror(ret),
	       why, stored, total - read - stored, total, f_end - faults, f_read - faults,
	       f_store - f_read, f_end - f_store);
	k8s_snapshot_free(&snap);
	k8s_snapdir_close(&dir);
	k8s_store_free(store);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	if (k8s_bulk_chunks() != 0) {
		fprintf(stderr, "%zu chunks still mapped after everything was freed\n", k8s_bulk_chunks());
		return KNOT_ERROR;
	}
	return ret;
}

static void upsert(k8s_store_t *store, unsigned src, k8s_kind_t kind, const char *json)
{
	k8s_object_t *obj = NULL;
	char err[256];
	if (k8s_object_decode(kind, json, strlen(json), &obj, err, sizeof(err)) != KNOT_EOK) {
		fprintf(stderr, "cannot decode (%s): %s\n", err, json);
		exit(1);
	}
	k8s_store_upsert(store, src, obj);
}

static void fill(k8s_store_t *store, unsigned services, unsigned endpoints)
{
	static char json[1 << 20];
	unsigned per_ns = (services + 99) / 100;
	for (unsigned n = 0; n < 100; n++) {
		snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"gen-%04u\"}}", n);
		upsert(store, K8S_SRC_NAMESPACES, K8S_NAMESPACE, json);
	}
	for (unsigned s = 0; s < services; s++) {
		unsigned ns = s / per_ns;
		bool headless = s % 10 == 0;
		int len = snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"svc-%06u\",\"namespace\":"
		                   "\"gen-%04u\"},\"spec\":{\"clusterIP\":\"%s%u.%u\",\"ports\":[{\"name\":"
		                   "\"http\",\"port\":80},{\"name\":\"dns\",\"port\":53,\"protocol\":\"UDP\"}]}}",
		                   s, ns, headless ? "None" : "10.100.", headless ? 0 : s / 256, s % 256);
		if (headless) {
			snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"svc-%06u\",\"namespace\":"
			         "\"gen-%04u\"},\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"name\":"
			         "\"http\",\"port\":80}]}}", s, ns);
		}
		upsert(store, K8S_SRC_SERVICES, K8S_SERVICE, json);
		len = snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"svc-%06u-x\",\"namespace\":"
		               "\"gen-%04u\",\"labels\":{\"kubernetes.io/service-name\":\"svc-%06u\"}},"
		               "\"addressType\":\"IPv4\",\"endpoints\":[", s, ns, s);
		for (unsigned e = 0; e < endpoints; e++) {
			unsigned ip = s * endpoints + e;
			len += snprintf(json + len, sizeof(json) - len, "%s{\"addresses\":[\"10.%u.%u.%u\"],"
			                "\"hostname\":\"svc-%06u-%03u\",\"targetRef\":{\"kind\":\"Pod\","
			                "\"name\":\"svc-%06u-%03u\"}}", e > 0 ? "," : "",
			                128 + (ip >> 16), (ip >> 8) & 255, ip & 255, s, e, s, e);
		}
		snprintf(json + len, sizeof(json) - len, "],\"ports\":[{\"name\":\"http\",\"port\":8080}]}");
		upsert(store, K8S_SRC_SLICES, K8S_ENDPOINTSLICE, json);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--load") == 0) {
		urcu_memb_register_thread();
		printf("fresh process: ");
		int ret = load(argv[2]);
		urcu_memb_unregister_thread();
		return (ret == KNOT_EOK) ? 0 : 1;
	}
	unsigned services = (argc > 1) ? (unsigned)atoi(argv[1]) : 10000;
	unsigned endpoints = (argc > 2) ? (unsigned)atoi(argv[2]) : 10;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/bench_snapshot.%d", (int)getpid());
	uint32_t sources = (1u << K8S_SRC_NAMESPACES) | (1u << K8S_SRC_SERVICES) | (1u << K8S_SRC_SLICES);

	urcu_memb_register_thread();
	k8s_table_t table;
	k8s_store_conf_t conf = { 0 };
	if (k8s_table_init(&table) != KNOT_EOK) {
		return 1;
	}
	k8s_store_t *store = k8s_store_new(&table, &conf, NULL);
	fill(store, services, endpoints);
	k8s_store_commit(store, 0);

	struct timespec t0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	k8s_buf_t payload = { 0 };
	uint64_t counts[K8S_SRC_COUNT];
	k8s_snapshot_objects_t objs;
	k8s_snapshot_take(store, sources, &objs);
	printf("take: %zu objects in %.1f ms\n", objs.end[K8S_SRC_COUNT - 1], ms_since(&t0));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	k8s_snapshot_encode(&objs, K8S_READY_CLUSTER, &payload, counts);
	printf("encode: %zu bytes in %.1f ms\n", payload.len, ms_since(&t0));
	k8s_buf_free(&payload);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	size_t objects = 0;
	k8s_snapdir_t dir;
	char why[256] = "";
	int ret = k8s_snapdir_open(&dir, path, why, sizeof(why));
	if (ret == KNOT_EOK) {
		ret = k8s_snapshot_write(&dir, "snapshot", 1, time(NULL), &objs, K8S_READY_CLUSTER,
		                         &objects);
		k8s_snapdir_close(&dir);
	}
	k8s_snapshot_objects_free(&objs);
	printf("encode and write (flushed): %zu objects in %.1f ms (%s)\n", objects, ms_since(&t0), knot_strerror(ret));
	k8s_store_free(store);
	urcu_memb_barrier();
	k8s_table_deinit(&table);

	// A new key, as a restarted knotd draws: the file is in the order of the writer's hash
	// tables, and inserting in the same key's order would cluster the reader's probes.
	k8s_hash_key[0] = (k8s_hash_key[0] * 0x9e3779b97f4a7c15ULL) | 1;
	k8s_hash_key[1] = (k8s_hash_key[1] * 0xbf58476d1ce4e5b9ULL) | 1;
	for (int round = 0; round < 3; round++) {
		load(path);
	}
	// A fresh process, as knotd's start: none of its memory has been touched yet.
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "'%s' --load %s", argv[0], path);
	fflush(stdout);
	if (system(cmd) != 0) {
		fprintf(stderr, "the fresh process failed\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	(void)!system(cmd);
	urcu_memb_unregister_thread();
	return 0;
}
