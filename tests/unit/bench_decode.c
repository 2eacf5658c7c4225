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
 * Decoding throughput of a LIST body: a generated EndpointSliceList of
 * controller-shaped slices (with managedFields, as the API sends them) is
 * split in 16 KiB pieces, as libcurl delivers them, and every item decoded.
 *
 *   make tests/unit/bench_decode && tests/unit/bench_decode [slices [endpoints]]
 */

#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <libknot/errcode.h>

#include "api/jsonsplit.h"
#include "kinds/objects.h"

#define PIECE 16384

typedef struct {
	char *data;
	size_t len;
	size_t cap;
} text_t;

static void put(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text_t *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < t->cap - t->len) {
			t->len += n;
			return;
		}
		t->cap = t->cap * 2 + 4096;
		t->data = realloc(t->data, t->cap);
		if (t->data == NULL) {
			abort();
		}
	}
}

static void slice_json(text_t *t, unsigned i, unsigned endpoints)
{
	put(t, "{\"metadata\":{\"name\":\"svc-%u-x7k2p\",\"generateName\":\"svc-%u-\",\"namespace\":\"ns-%u\","
	       "\"uid\":\"3b0c6f1e-9a1d-4c0e-8d0f-%012u\",\"resourceVersion\":\"%u\",\"generation\":3,"
	       "\"creationTimestamp\":\"2026-01-10T09:05:01Z\",\"labels\":{\"app\":\"svc-%u\","
	       "\"endpointslice.kubernetes.io/managed-by\":\"endpointslice-controller.k8s.io\","
	       "\"kubernetes.io/service-name\":\"svc-%u\"},\"annotations\":{"
	       "\"endpoints.kubernetes.io/last-change-trigger-time\":\"2026-01-10T09:06:12Z\"},"
	       "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"name\":\"svc-%u\","
	       "\"uid\":\"9f1e0000-0000-0000-0000-%012u\",\"controller\":true,\"blockOwnerDeletion\":true}],"
	       "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
	       "\"apiVersion\":\"discovery.k8s.io/v1\",\"time\":\"2026-01-10T09:06:12Z\",\"fieldsType\":\"FieldsV1\","
	       "\"fieldsV1\":{\"f:addressType\":{},\"f:endpoints\":{},\"f:metadata\":{\"f:annotations\":{\".\":{},"
	       "\"f:endpoints.kubernetes.io/last-change-trigger-time\":{}},\"f:generateName\":{},\"f:labels\":{"
	       "\".\":{},\"f:app\":{},\"f:endpointslice.kubernetes.io/managed-by\":{},"
	       "\"f:kubernetes.io/service-name\":{}},\"f:ownerReferences\":{\".\":{},"
	       "\"k:{\\\"uid\\\":\\\"9f1e\\\"}\":{}}},\"f:ports\":{}}}]},\"addressType\":\"IPv4\",\"endpoints\":[",
	    i, i, i % 100, i, 100000 + i, i, i, i, i);
	for (unsigned e = 0; e < endpoints; e++) {
		unsigned n = i * endpoints + e;
		put(t, "%s{\"addresses\":[\"10.%u.%u.%u\"],\"conditions\":{\"ready\":true,\"serving\":true,"
		       "\"terminating\":false},\"nodeName\":\"node-%u\",\"targetRef\":{\"kind\":\"Pod\","
		       "\"namespace\":\"ns-%u\",\"name\":\"svc-%u-7d9f8c6b5-%05u\",\"uid\":\"5c1d0000-0000-0000-0000-%012u\"},"
		       "\"zone\":\"zone-%c\"}",
		    (e > 0) ? "," : "", (n >> 16) & 255, (n >> 8) & 255, n & 255, n % 5000, i % 100, i, e, n,
		    'a' + (int)(n % 3));
	}
	put(t, "],\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":8080},"
	       "{\"name\":\"metrics\",\"protocol\":\"TCP\",\"port\":9090}]}");
}

typedef struct {
	size_t objects;
	size_t endpoints;
	size_t failed;
	k8s_object_t **kept;
	k8s_jtape_t tape;     /*!< Reused from item to item, as a reflector's. */
} sink_t;

static int decode_item(void *ctx, const char *text, size_t len)
{
	sink_t *sink = ctx;
	k8s_object_t *obj = NULL;
	if (k8s_object_decode_tape(&sink->tape, K8S_ENDPOINTSLICE, text, len, &obj, NULL, 0) != KNOT_EOK) {
		sink->failed++;
		return 0;
	}
	sink->endpoints += ((k8s_slice_t *)obj)->endpoint_count;
	sink->kept[sink->objects++] = obj;
	return 0;
}

static int count_item(void *ctx, const char *text, size_t len)
{
	(*(size_t *)ctx)++;
	return 0;
}

/*! The tape alone: the floor of the decoder built on it. */
static int scan_item(void *ctx, const char *text, size_t len)
{
	sink_t *sink = ctx;
	if (k8s_jtape_scan(&sink->tape, text, len, NULL, 0) != KNOT_EOK) {
		return KNOT_EMALF;
	}
	sink->objects++;
	return 0;
}

/*! json-c alone, for comparison: the floor of the decoder built on it before the tape. */
static int parse_item(void *ctx, const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(128);
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	json_tokener_free(tok);
	if (root == NULL) {
		return KNOT_EMALF;
	}
	json_object_put(root);
	(*(size_t *)ctx)++;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int split(const text_t *body, k8s_split_cb cb, void *ctx)
{
	k8s_listsplit_t s;
	k8s_listsplit_init(&s, 16 << 20);
	int ret = KNOT_EOK;
	for (size_t off = 0; off < body->len && ret == KNOT_EOK; off += PIECE) {
		size_t n = (body->len - off < PIECE) ? body->len - off : PIECE;
		ret = k8s_listsplit_feed(&s, body->data + off, n, cb, ctx);
	}
	if (ret == KNOT_EOK && !s.done) {
		ret = KNOT_EMALF;
	}
	k8s_listsplit_deinit(&s);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned slices = (argc > 1) ? (unsigned)atoi(argv[1]) : 1000;
	unsigned endpoints = (argc > 2) ? (unsigned)atoi(argv[2]) : 100;

	text_t body = { 0 };
	put(&body, "{\"kind\":\"EndpointSliceList\",\"apiVersion\":\"discovery.k8s.io/v1\","
	           "\"metadata\":{\"resourceVersion\":\"48230\"},\"items\":[");
	for (unsigned i = 0; i < slices; i++) {
		if (i > 0) {
			put(&body, ",");
		}
		slice_json(&body, i, endpoints);
	}
	put(&body, "]}");
	double mb = body.len / 1e6;

	size_t items = 0;
	double t0 = now_s();
	if (split(&body, count_item, &items) != KNOT_EOK || items != slices) {
		fprintf(stderr, "split failed\n");
		return 1;
	}
	double t_split = now_s() - t0;

	items = 0;
	t0 = now_s();
	if (split(&body, parse_item, &items) != KNOT_EOK || items != slices) {
		fprintf(stderr, "parse failed\n");
		return 1;
	}
	double t_parse = now_s() - t0;

	sink_t sink = { .kept = calloc(slices, sizeof(k8s_object_t *)) };
	k8s_jtape_init(&sink.tape);
	t0 = now_s();
	if (split(&body, scan_item, &sink) != KNOT_EOK || sink.objects != slices) {
		fprintf(stderr, "scan failed\n");
		return 1;
	}
	double t_scan = now_s() - t0;
	sink.objects = 0;
	struct mallinfo2 before = mallinfo2();
	t0 = now_s();
	if (split(&body, decode_item, &sink) != KNOT_EOK || sink.failed > 0) {
		fprintf(stderr, "decode failed (%zu items)\n", sink.failed);
		return 1;
	}
	double t_all = now_s() - t0;
	struct mallinfo2 after = mallinfo2();
	size_t kept_bytes = after.uordblks - before.uordblks;

	printf("body:     %u slices x %u endpoints, %.1f MB\n", slices, endpoints, mb);
	printf("split:    %.3f s, %.0f MB/s\n", t_split, mb / t_split);
	printf("json-c:   %.3f s, %.0f MB/s (split and json-c parse only)\n", t_parse, mb / t_parse);
	printf("tape:     %.3f s, %.0f MB/s (split and the tape's scan only)\n", t_scan, mb / t_scan);
	printf("decode:   %.3f s, %.0f MB/s, %.0f objects/s, %.0f endpoints/s (split included)\n",
	       t_all, mb / t_all, sink.objects / t_all, sink.endpoints / t_all);
	printf("memory:   %zu decoded objects hold %.1f MB, %.1f bytes per endpoint\n",
	       sink.objects, kept_bytes / 1e6, (double)kept_bytes / sink.endpoints);

	for (size_t i = 0; i < sink.objects; i++) {
		k8s_object_free(sink.kept[i]);
	}
	free(sink.kept);
	k8s_jtape_deinit(&sink.tape);
	free(body.data);
	return 0;
}
