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
 * The JSON text around objects: watch events, and Status bodies (error responses and
 * ERROR events).
 */

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/events.h"
#include "lib/jsonscan.h"
#include "lib/jsonstrict.h"

/*! Copies message text: control bytes become spaces, a cut never splits a UTF-8 sequence. */
static void text_copy(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size) {
		len = size - 1;
		while (len > 0 && ((uint8_t)src[len] & 0xC0) == 0x80) {
			len--;
		}
	}
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)src[i];
		dst[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	while (len > 0 && dst[len - 1] == ' ') {
		len--;
	}
	dst[len] = '\0';
}

static int int_clamp(int64_t v)
{
	return (v < 0) ? 0 : (v > INT_MAX) ? INT_MAX : (int)v;
}

static void status_read(k8s_jv_t obj, k8s_status_t *st)
{
	st->code = int_clamp(jv_int(obj, "code", 0));
	st->retry_after = int_clamp(jv_int(jv_obj(obj, "details"), "retryAfterSeconds", 0));
	k8s_str_t reason = jv_str(obj, "reason");
	if (reason.ptr != NULL) {
		text_copy(st->reason, sizeof(st->reason), reason.ptr, reason.len);
	}
	// An embedded NUL only ends the message early.
	k8s_jv_t message = jv_get(obj, "message", K8S_JSTRING);
	if (message.t != NULL) {
		const k8s_jtok_t *tok = &message.t->toks[message.i];
		const char *s = (tok->escaped ? message.t->arena : message.t->text) + tok->off;
		const char *nul = memchr(s, '\0', tok->len);
		text_copy(st->message, sizeof(st->message), s, (nul != NULL) ? (size_t)(nul - s) : tok->len);
	}
}

int k8s_status_decode(const char *text, size_t len, k8s_status_t *st)
{
	memset(st, 0, sizeof(*st));
	if (text == NULL || len == 0) {
		return KNOT_EOK;
	}

	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	int ret = k8s_jtape_scan(&tape, text, len, NULL, 0);
	if (ret == KNOT_EOK) {
		k8s_jv_t root = k8s_jtape_root(&tape);
		if (jv_is(root, K8S_JOBJECT)) {
			status_read(root, st);
		}
	}
	k8s_jtape_deinit(&tape);
	if (ret == KNOT_EOK) {
		return KNOT_EOK;
	}

	// Plain text, e.g. "Too many requests, please try again later.\n".
	size_t start = 0;
	while (start < len && (text[start] == ' ' || text[start] == '\t' ||
	                       text[start] == '\r' || text[start] == '\n')) {
		start++;
	}
	size_t end = start;
	while (end < len && text[end] != '\n' && text[end] != '\r' && text[end] != '\0') {
		end++;
	}
	text_copy(st->message, sizeof(st->message), text + start, end - start);
	return KNOT_EOK;
}

static int event_type(k8s_str_t type, k8s_event_type_t *out)
{
	static const char *NAMES[] = {
		[K8S_EV_ADDED] = "ADDED",
		[K8S_EV_MODIFIED] = "MODIFIED",
		[K8S_EV_DELETED] = "DELETED",
		[K8S_EV_BOOKMARK] = "BOOKMARK",
		[K8S_EV_ERROR] = "ERROR",
	};
	for (size_t i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++) {
		if (str_is(type, NAMES[i])) {
			*out = (k8s_event_type_t)i;
			return KNOT_EOK;
		}
	}
	return KNOT_EINVAL;
}

bool k8s_rv_valid(const char *rv, size_t len)
{
	if (len >= K8S_RV_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if ((uint8_t)rv[i] <= 0x20 || (uint8_t)rv[i] >= 0x7f) {
			return false;
		}
	}
	return true;
}

static int rv_read(k8s_jv_t obj, char rv[K8S_RV_MAX])
{
	k8s_str_t s = jv_str(jv_obj(obj, "metadata"), "resourceVersion");
	if (s.ptr == NULL) {
		return KNOT_EOK;
	}
	if (!k8s_rv_valid(s.ptr, s.len)) {
		return KNOT_EINVAL;
	}
	memcpy(rv, s.ptr, s.len);
	rv[s.len] = '\0';
	return KNOT_EOK;
}

static int event_decode_tree(k8s_kind_t kind, k8s_jv_t root, k8s_event_t *ev,
                             char *err, size_t errlen)
{
	if (!jv_is(root, K8S_JOBJECT)) {
		set_err(err, errlen, "event is not a json object");
		return KNOT_EMALF;
	}
	if (event_type(jv_str(root, "type"), &ev->type) != KNOT_EOK) {
		set_err(err, errlen, "unknown event type");
		return KNOT_EINVAL;
	}
	k8s_jv_t obj = jv_obj(root, "object");
	if (obj.t == NULL) {
		set_err(err, errlen, "event without object");
		return KNOT_EINVAL;
	}
	if (rv_read(obj, ev->rv) != KNOT_EOK) {
		set_err(err, errlen, "invalid metadata.resourceVersion");
		return KNOT_EINVAL;
	}

	switch (ev->type) {
	case K8S_EV_BOOKMARK: {
		// A bookmark's other fields are zero values of the type: never read them.
		k8s_jv_t annotations = jv_obj(jv_obj(obj, "metadata"), "annotations");
		ev->initial_events_end =
			str_is(jv_str(annotations, "k8s.io/initial-events-end"), "true");
		return KNOT_EOK;
	}
	case K8S_EV_ERROR:
		status_read(obj, &ev->status);
		return KNOT_EOK;
	default:
		return k8s_object_decode_jv(kind, obj, &ev->obj, err, errlen);
	}
}

int k8s_event_decode(k8s_jtape_t *tape, k8s_kind_t kind, const char *text, size_t len,
                     k8s_event_t *ev, char *err, size_t errlen)
{
	if (ev == NULL) {
		return KNOT_EINVAL;
	}
	memset(ev, 0, sizeof(*ev));
	if ((unsigned)kind >= K8S_KIND_COUNT || text == NULL) {
		return KNOT_EINVAL;
	}
	int ret = k8s_jtape_scan(tape, text, len, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}
	ret = event_decode_tree(kind, k8s_jtape_root(tape), ev, err, errlen);
	if (ret != KNOT_EOK) {
		ev->obj = NULL;
	}
	return ret;
}
