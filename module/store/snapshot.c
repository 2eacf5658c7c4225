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
 * The payload: a head, then each object framed by its source and length. Each
 * object's form, its writer and its checking reader are its kind's (module/kinds/,
 * form.h).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "kinds/form.h"
#include "store/snapfile.h"
#include "store/snapshot.h"

#define HEAD_LEN 8         // u32 sources, u32 ready.
#define ENTRY_HEAD_LEN 5   // u8 source, u32 length.

/* --- the payload -------------------------------------------------------------------- */

uint64_t k8s_snapshot_fingerprint(uint64_t held)
{
	uint64_t h = held;
	// A build with another resource table numbers its sources otherwise.
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		const char *name = k8s_resource_name(src);
		h = k8s_fnv64(name, strlen(name) + 1, h);
	}
	// A kind's form revision, stepped when its form changes (module/kinds/kind_*.c).
	return k8s_object_forms_hash(h);
}

int k8s_snapshot_take(const k8s_store_t *store, uint32_t sources, k8s_snapshot_objects_t *out)
{
	memset(out, 0, sizeof(*out));
	out->sources = sources;
	const k8s_store_stats_t *stats = k8s_store_stats(store);
	size_t count = 0;
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		count += (sources & (1u << src)) ? stats->objects[src] : 0;
	}
	out->objects = malloc((count > 0 ? count : 1) * sizeof(*out->objects));
	if (out->objects == NULL) {
		return KNOT_ENOMEM;
	}
	size_t n = 0;
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		size_t pos = 0;
		const k8s_object_t *obj;
		while ((sources & (1u << src)) && n < count &&
		       (obj = k8s_store_next(store, src, &pos)) != NULL) {
			out->objects[n++] = obj;
		}
		out->end[src] = n;
	}
	return KNOT_EOK;
}

void k8s_snapshot_objects_free(k8s_snapshot_objects_t *objs)
{
	free(objs->objects);
	memset(objs, 0, sizeof(*objs));
}

int k8s_snapshot_encode(const k8s_snapshot_objects_t *objs, uint32_t ready,
                        k8s_buf_t *out, uint64_t counts[K8S_SRC_COUNT])
{
	uint32_t sources = objs->sources;
	unsigned char head[HEAD_LEN];
	k8s_snap_put_le(head, sources, 4);
	k8s_snap_put_le(head + 4, ready, 4);
	k8s_form_writer_t w = { .buf = out, .ret = k8s_buf_append(out, head, sizeof(head), K8S_SNAP_MAX) };
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		counts[src] = 0;
		if (!(sources & (1u << src))) {
			continue;
		}
		for (size_t i = (src > 0) ? objs->end[src - 1] : 0; w.ret == KNOT_EOK && i < objs->end[src];
		     i++) {
			const k8s_object_t *obj = objs->objects[i];
			// Source and length, then the object's string bytes: both filled in after it.
			unsigned char entry[ENTRY_HEAD_LEN + 4] = { (unsigned char)src };
			size_t at = out->len;
			w.ret = k8s_buf_append(out, entry, sizeof(entry), K8S_SNAP_MAX);
			w.unfit = false;
			w.strings = 0;
			k8s_object_form_write(&w, obj);
			if (w.ret == KNOT_EOK) {
				size_t len = out->len - at - ENTRY_HEAD_LEN;
				if (len > K8S_SNAP_ENTRY_MAX || w.unfit) {
					// Larger than any reader takes: kept out, the LIST brings it.
					out->len = at;
					continue;
				}
				k8s_snap_put_le((unsigned char *)out->data + at + 1, len, 4);
				k8s_snap_put_le((unsigned char *)out->data + at + ENTRY_HEAD_LEN, w.strings, 4);
				counts[src]++;
			}
		}
	}
	return w.ret;
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *why, size_t why_len, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	vsnprintf(why, why_len, fmt, args);
	va_end(args);
	return KNOT_EMALF;
}

void k8s_snapshot_sizes(const k8s_snapshot_t *snap, size_t *svcs, size_t *addrs)
{
	*svcs = 0;
	*addrs = 0;
	for (size_t i = 0; i < snap->count; i++) {
		const k8s_object_t *obj = snap->objects[i];
		if (obj == NULL) {
			continue;
		}
		switch (obj->kind) {
		case K8S_SERVICE:
			*svcs += 1;
			*addrs += ((const k8s_service_t *)obj)->ip_count;
			break;
		case K8S_SERVICEIMPORT:
			*svcs += 1;
			*addrs += ((const k8s_serviceimport_t *)obj)->ip_count;
			break;
		case K8S_ENDPOINTSLICE:
			*addrs += ((const k8s_slice_t *)obj)->endpoint_count;
			break;
		default:
			break;
		}
	}
}

void k8s_snapshot_load(k8s_snapshot_t *snap, k8s_store_t *store)
{
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		if (!(snap->sources & (1u << src))) {
			continue;
		}
		k8s_store_list_begin(store, src);
		for (size_t i = 0; i < snap->count; i++) {
			if (snap->source_of[i] == src) {
				k8s_store_upsert(store, src, snap->objects[i]);
				snap->objects[i] = NULL;
			}
		}
		k8s_store_list_end(store, src);
	}
}

void k8s_snapshot_free(k8s_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->count; i++) {
		k8s_object_free(snap->objects[i]);
	}
	free(snap->objects);
	free(snap->source_of);
	memset(snap, 0, sizeof(*snap));
}

/*! First pass: the framing only; counts the entries per source. */
static int frame_check(const unsigned char *data, size_t len, uint32_t sources,
                       const uint64_t counts[K8S_SRC_COUNT], size_t *total,
                       char *why, size_t why_len)
{
	uint64_t seen[K8S_SRC_COUNT] = { 0 };
	*total = 0;
	for (size_t off = HEAD_LEN; off < len; ) {
		if (len - off < ENTRY_HEAD_LEN) {
			return refuse(why, why_len, "truncated object");
		}
		unsigned src = data[off];
		uint64_t elen = k8s_snap_get_le(data + off + 1, 4);
		if (src >= K8S_SRC_COUNT || !(sources & (1u << src))) {
			return refuse(why, why_len, "object of an unknown source");
		}
		if (elen > K8S_SNAP_ENTRY_MAX || elen > len - off - ENTRY_HEAD_LEN) {
			return refuse(why, why_len, "object of %s longer than %s", k8s_resource_name(src),
			              (elen > K8S_SNAP_ENTRY_MAX) ? "allowed" : "the file");
		}
		off += ENTRY_HEAD_LEN + elen;
		seen[src]++;
		(*total)++;
	}
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		if (seen[src] != counts[src]) {
			return refuse(why, why_len, "count of %s differs from the header",
			              k8s_resource_name(src));
		}
	}
	return KNOT_EOK;
}

int k8s_snapshot_decode(const char *text, size_t len, const uint64_t counts[K8S_SRC_COUNT],
                        k8s_snapshot_t *snap, char *why, size_t why_len)
{
	const unsigned char *data = (const unsigned char *)text;
	memset(snap, 0, sizeof(*snap));
	if (len < HEAD_LEN) {
		return refuse(why, why_len, "truncated payload");
	}
	uint32_t sources = (uint32_t)k8s_snap_get_le(data, 4);
	if (sources >= (1u << K8S_SRC_COUNT)) {
		return refuse(why, why_len, "unknown sources");
	}
	size_t total = 0;
	int ret = frame_check(data, len, sources, counts, &total, why, why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	snap->sources = sources;
	snap->ready = (uint32_t)k8s_snap_get_le(data + 4, 4);
	if (total > 0) {
		snap->objects = calloc(total, sizeof(*snap->objects));
		snap->source_of = calloc(total, sizeof(*snap->source_of));
		if (snap->objects == NULL || snap->source_of == NULL) {
			k8s_snapshot_free(snap);
			return KNOT_ENOMEM;
		}
	}
	for (size_t off = HEAD_LEN; off < len; snap->count++) {
		unsigned src = data[off];
		size_t elen = k8s_snap_get_le(data + off + 1, 4);
		char err[256] = "";
		ret = k8s_object_form_read(k8s_resources[src].kind, text + off + ENTRY_HEAD_LEN, elen,
		                    &snap->objects[snap->count], err, sizeof(err));
		if (ret != KNOT_EOK) {
			k8s_snapshot_free(snap);
			if (ret == KNOT_ENOMEM) {
				return ret;
			}
			return refuse(why, why_len, "an object of %s does not decode (%s)",
			              k8s_resource_name(src), err);
		}
		snap->source_of[snap->count] = (uint8_t)src;
		off += ENTRY_HEAD_LEN + elen;
	}
	return KNOT_EOK;
}

/* --- the file ----------------------------------------------------------------------- */

int k8s_snapshot_write(const k8s_snapdir_t *dir, const char *name, uint64_t fingerprint,
                       int64_t now_s, const k8s_snapshot_objects_t *objs, uint32_t ready,
                       size_t *objects)
{
	k8s_snaphdr_t hdr = { .settings_hash = fingerprint, .created_s = now_s,
	                      .sources = K8S_SRC_COUNT };
	k8s_buf_t payload = { 0 };
	int ret = k8s_snapshot_encode(objs, ready, &payload, hdr.counts);
	if (ret == KNOT_EOK) {
		ret = k8s_snapfile_write(dir, name, &hdr, payload.data, payload.len);
	}
	*objects = 0;
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		*objects += hdr.counts[src];
	}
	k8s_buf_free(&payload);
	return ret;
}

int k8s_snapshot_read(const k8s_snapdir_t *dir, const char *name, uint64_t fingerprint,
                      int64_t now_s, int64_t max_age_s, k8s_snapshot_t *snap, char *why,
                      size_t why_len)
{
	memset(snap, 0, sizeof(*snap));
	k8s_snaphdr_t hdr;
	k8s_snapmap_t map;
	int ret = k8s_snapfile_read(dir, name, fingerprint, now_s, max_age_s, &hdr, &map, why,
	                            why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (hdr.sources != K8S_SRC_COUNT) {
		k8s_snapfile_unmap(&map);
		return refuse(why, why_len, "counts of another resource table");
	}
	ret = k8s_snapshot_decode(map.payload, map.len, hdr.counts, snap, why, why_len);
	k8s_snapfile_unmap(&map);
	snap->created_s = hdr.created_s;
	return ret;
}
