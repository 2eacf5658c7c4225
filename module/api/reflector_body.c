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
 * The reflector's body callbacks: what curl calls while a response arrives (its
 * headers, then its body in pieces), split into LIST items or WATCH lines, each
 * decoded and handed to the sink; an error body kept for the log line.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libknot/errcode.h>
#include <libknot/error.h>

#include "api/reflector_priv.h"

void k8s_reflector_skip_error(k8s_reflector_t *r, uint64_t now, k8s_apierr_t err,
                              const char *fmt, ...)
{
	r->stats.errors[err]++;
	if (r->decode_log_ms != 0 && now - r->decode_log_ms < DECODE_LOG_MS) {
		r->decode_suppressed++;
		return;
	}

	char msg[384];
	va_list args;
	va_start(args, fmt);
	vsnprintf(msg, sizeof(msg), fmt, args);
	va_end(args);
	if (r->decode_suppressed > 0) {
		k8s_logf(r->log, LOG_WARNING, "%s, %" PRIu64 " similar errors suppressed before",
		         msg, r->decode_suppressed);
	} else {
		k8s_logf(r->log, LOG_WARNING, "%s", msg);
	}
	r->decode_log_ms = now;
	r->decode_suppressed = 0;
}

/*! Moves the resume point to an event's resourceVersion. */
static void rv_advance(k8s_reflector_t *r, const char *rv)
{
	// The watch started at an explicit version, so every event's version is a safe resume point.
	if (rv[0] != '\0') {
		snprintf(r->rv, sizeof(r->rv), "%s", rv);
	}
}

/*!
 * An object too large to read (\a why): counted, logged, and named to the sink from
 * the \a head of its text, so that what is held of it is neither lost nor kept deleted.
 */
static void too_large(k8s_reflector_t *r, const char *head, size_t len, const char *why)
{
	bool event = op_streams(r->op);
	k8s_json_ident_t id;
	bool named = k8s_json_ident(head, len, event, &id) == KNOT_EOK;
	if (!k8s_kind_namespaced(r->kind)) {
		id.ns[0] = '\0';
	}
	k8s_reflector_skip_error(r, k8s_now_ms(), K8S_APIERR_TOO_LARGE, "%s %s object %s%s%s skipped (%s)",
	           op_name(r->op), r->name, id.ns, (id.ns[0] != '\0') ? "/" : "",
	           named ? id.name : "without name", why);
	if (!event) {
		if (named) {
			r->sink.too_large(r->sink_ctx, r->source, id.ns, id.name, false);
		}
		return;
	}
	// Like an event with an unusable object, it moved the collection on.
	rv_advance(r, id.rv);
	if (named && strcmp(id.type, "DELETED") == 0) {
		r->sink.too_large(r->sink_ctx, r->source, id.ns, id.name, true);
	} else if (named && (strcmp(id.type, "ADDED") == 0 || strcmp(id.type, "MODIFIED") == 0)) {
		r->sink.too_large(r->sink_ctx, r->source, id.ns, id.name, false);
	}
}

int k8s_reflector_on_skip(void *ctx, const char *text, size_t len)
{
	k8s_reflector_t *r = ctx;
	char why[64];
	snprintf(why, sizeof(why), "larger than %zu bytes", r->max_object);
	too_large(r, text, len, why);
	return KNOT_EOK;
}

/*!
 * A LIST item or watch event that did not decode (\a ret, \a err): one too large is
 * named from its head, any other counted and logged; both are skipped.
 */
static void undecoded(k8s_reflector_t *r, uint64_t now, int ret, const char *text, size_t len,
                      const char *err)
{
	if (ret == KNOT_ESPACE) {
		too_large(r, text, len, err);
		return;
	}
	k8s_reflector_skip_error(r, now, K8S_APIERR_DECODE, "%s %s %s skipped (%s)",
	                         op_name(r->op), r->name, op_streams(r->op) ? "event" : "item",
	                         err[0] != '\0' ? err : knot_strerror(ret));
}

/*! Takes a LIST item: decoded and handed to the sink, or logged and skipped. */
static int on_item(void *ctx, const char *text, size_t len)
{
	k8s_reflector_t *r = ctx;
	uint64_t started = k8s_now_ns(), now = started / 1000000;
	k8s_object_t *obj = NULL;
	char err[128] = "";
	int ret = k8s_object_decode_tape(&r->tape, r->kind, text, len, &obj, err, sizeof(err));
	r->stats.decode_ns += k8s_now_ns() - started;
	if (ret != KNOT_EOK) {
		undecoded(r, now, ret, text, len, err);
		return KNOT_EOK;
	}
	r->sink.upsert(r->sink_ctx, r->source, obj);
	r->list_objects++;
	r->stats.last_event_ms = now;
	return KNOT_EOK;
}

/*! A watch-list's initial events ended (its bookmark at \a now): the full list is in. */
static void initial_end(k8s_reflector_t *r, uint64_t now)
{
	// The stream goes on as the watch from the bookmark's version (on_line() moves to it).
	r->initial = false;
	r->op = OP_WATCH;
	r->watched = true;
	r->rv_unavailable = false;
	r->sink.list_end(r->sink_ctx, r->source);
	r->listed = true;
	r->stats.synced = true;
	r->stats.absent = false;
	r->stats.last_event_ms = now;
	if (!r->short_watch) {
		k8s_backoff_reset(&r->backoff);
	}
	k8s_logf(r->log, LOG_INFO, "list %s completed, %zu objects, resource version %s "
	         "(watch-list)", r->name, r->list_objects, r->rv);
}

/*! Takes a watch line: applies the event, records its resourceVersion, or stops on ERROR. */
static int on_line(void *ctx, const char *text, size_t len)
{
	k8s_reflector_t *r = ctx;
	uint64_t started = k8s_now_ns(), now = started / 1000000;
	k8s_event_t ev;
	memset(&ev, 0, sizeof(ev)); // Its rv is read even when decoding fails.
	char err[128] = "";
	int ret = k8s_event_decode(&r->tape, r->kind, text, len, &ev, err, sizeof(err));
	r->stats.decode_ns += k8s_now_ns() - started;
	if (ret != KNOT_EOK) {
		undecoded(r, now, ret, text, len, err);
		// A well-formed event with an unusable object still moved the collection on (one
		// too large to parse has no version in ev: too_large() read it from its head).
		rv_advance(r, ev.rv);
		return KNOT_EOK;
	}

	r->stream_events++;
	r->stats.last_event_ms = now;
	// The watch delivers: whatever failed before is over (an ERROR event is a failure).
	if (ev.type != K8S_EV_ERROR) {
		k8s_backoff_reset(&r->backoff);
		r->short_watch = false;
	}
	switch (ev.type) {
	case K8S_EV_ADDED:
	case K8S_EV_MODIFIED:
		r->sink.upsert(r->sink_ctx, r->source, ev.obj);
		r->stats.events++;
		r->list_objects += r->initial;
		break;
	case K8S_EV_DELETED:
		r->sink.remove(r->sink_ctx, r->source, ev.obj);
		r->stats.events++;
		break;
	case K8S_EV_BOOKMARK:
		r->stats.bookmarks++;
		if (r->initial && !ev.initial_events_end) {
			// A server that ignored sendInitialEvents (before 1.27) bookmarks without the
			// end: what it sent is no list, so a LIST makes one.
			r->stats.watch_lists_refused = true;
			r->abort = ABORT_WL_IGNORED;
			return KNOT_ECONNABORTED;
		}
		if (r->initial) {
			rv_advance(r, ev.rv);
			initial_end(r, now);
		}
		break;
	case K8S_EV_ERROR:
		r->ev_status = ev.status;
		r->abort = ABORT_ERROR_EVENT;
		return KNOT_ECONNABORTED; // Ends the stream; done() acts on the Status.
	}
	rv_advance(r, ev.rv);
	return KNOT_EOK;
}

/*! True for application/json, with or without parameters. */
static bool is_json(const char *ctype)
{
	static const char json[] = "application/json";
	if (ctype == NULL || strncasecmp(ctype, json, sizeof(json) - 1) != 0) {
		return false;
	}
	char next = ctype[sizeof(json) - 1];
	return next == '\0' || next == ';' || next == ' ';
}

void k8s_reflector_body_decide(k8s_reflector_t *r)
{
	long code = 0;
	const char *ctype = NULL;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ctype);
	if (code != 200 || !is_json(ctype) || r->op == OP_PROBE) {
		r->body = BODY_ERROR;
		return;
	}

	if (op_streams(r->op)) {
		r->body = BODY_WATCH;
		r->stats.connected = true;
		if (r->op == OP_WLIST) {
			// Its initial events are a full list: what the sink holds and they do not name goes at their end.
			r->initial = true;
			r->list_objects = 0;
			r->sink.list_begin(r->sink_ctx, r->source);
		}
		return;
	}
	r->body = BODY_LIST;
	if (r->cont == NULL) {
		// A first page: what the sink holds and this list does not name goes at list_end.
		r->list_objects = 0;
		r->sink.list_begin(r->sink_ctx, r->source);
	}
}

size_t k8s_reflector_on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	k8s_reflector_t *r = ctx;
	size_t len = size * nmemb;
	static const char retry_after[] = "retry-after:";
	if (len > sizeof(retry_after) && strncasecmp(data, retry_after, sizeof(retry_after) - 1) == 0) {
		// Only the delay-seconds form, as client-go reads it.
		char value[24];
		size_t vlen = len - (sizeof(retry_after) - 1);
		vlen = (vlen < sizeof(value)) ? vlen : sizeof(value) - 1;
		memcpy(value, data + sizeof(retry_after) - 1, vlen);
		value[vlen] = '\0';
		char *end = NULL;
		long secs = strtol(value, &end, 10);
		if (end != value && secs > 0) {
			r->retry_after_s = secs;
		}
	} else if (r->body == BODY_NONE && (len <= 2 && (data[0] == '\r' || data[0] == '\n'))) {
		long code = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200) { // Not an interim 1xx response.
			k8s_reflector_body_decide(r);
		}
	}
	return len;
}

size_t k8s_reflector_on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	k8s_reflector_t *r = ctx;
	size_t len = size * nmemb;
	if (r->body == BODY_NONE) {
		k8s_reflector_body_decide(r);
	}

	int ret = KNOT_EOK;
	switch (r->body) {
	case BODY_LIST:
		ret = k8s_listsplit_feed(&r->list, data, len, on_item, r);
		if (ret != KNOT_EOK) {
			r->abort = ABORT_BAD_LIST;
			return 0;
		}
		break;
	case BODY_WATCH:
		ret = k8s_linesplit_feed(&r->lines, data, len, on_line, r);
		if (ret != KNOT_EOK) {
			return 0; // An ERROR event: end the transfer.
		}
		break;
	default:
		// Only the start of an error body is of use for the log line.
		if (r->errbody.len < ERROR_BODY_MAX) {
			size_t room = ERROR_BODY_MAX - r->errbody.len;
			(void)k8s_buf_append(&r->errbody, data, (len < room) ? len : room, ERROR_BODY_MAX);
		}
		break;
	}
	return len;
}
