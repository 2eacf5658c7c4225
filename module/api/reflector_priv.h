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

/*!
 * \file
 *
 * \brief Private to the reflector's two files: its state, shared by the request steps
 * (reflector.c) and the body callbacks (reflector_body.c) that curl calls while a
 * response arrives.
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "api/backoff.h"
#include "lib/buf.h"
#include "api/events.h"
#include "api/jsonsplit.h"
#include "api/reflector.h"
#include "lib/jsonscan.h"

#define PAGE_LIMIT_DEFAULT   500
/*! A watch line is the object plus the {"type":...,"object":} envelope. */
#define EVENT_ENVELOPE_MAX   128
/*! Error bodies are read for the log line only. */
#define ERROR_BODY_MAX       (64 * 1024)
#define QUERY_MAX            (64 * 1024)
/*! client-go asks for watches of a random length in [5, 10) minutes. */
#define WATCH_TIMEOUT_MIN_S  300
#define WATCH_TIMEOUT_SPAN_S 300
/*! The watch's own total timeout: the server should end it first. */
#define WATCH_TIMEOUT_MARGIN_S 60
/*! The API server gives up on a LIST after 60 s; this only bounds a broken one. */
#define LIST_TIMEOUT_S       300
/*! A watch that ends this fast without an event is an error (client-go's VeryShortWatchError). */
#define SHORT_WATCH_MS       1000
#define DECODE_LOG_MS        (10 * 1000)
/*! A Retry-After beyond the whole wait it can get (K8S_BACKOFF_RETRY_AFTER_MAX_MS) is cut here. */
#define RETRY_AFTER_MAX_S    (K8S_BACKOFF_RETRY_AFTER_MAX_MS / 1000)
/*! While backing off from an unreachable server, it is probed this often (plus up to half again). */
#define PROBE_INTERVAL_MS    1000
/*! A probe is a GET of this: small, cheap, and served by every API server. */
#define PROBE_PATH           "/version"
#define PROBE_TIMEOUT_S      3
/*! A watch open this long counts as a success even without events (one cut at once does not). */
#define WATCH_HEALTHY_MS     5000

typedef enum {
	OP_LIST = 0,   // A LIST page: the first (cont NULL) or the next one.
	OP_WATCH,
	OP_PROBE,      // A GET /version while backing off: is the server reachable again?
	OP_WLIST,      // A watch-list: a WATCH whose initial events are the full list, then a WATCH.
} op_t;

typedef enum {
	BODY_NONE = 0, // Headers not seen yet.
	BODY_LIST,     // 200 application/json to a LIST.
	BODY_WATCH,    // 200 application/json to a WATCH.
	BODY_ERROR,    // Anything else: buffered for the log line.
} body_t;

/*! Why the reflector itself stopped a transfer. */
typedef enum {
	ABORT_NONE = 0,
	ABORT_ERROR_EVENT,  // A watch ERROR event (its Status is in ev_status).
	ABORT_BAD_LIST,     // The LIST body is not a JSON object with items.
	ABORT_WL_IGNORED,   // A watch-list's bookmark before the initial events' end: not served as one.
} abort_t;

struct k8s_reflector {
	// What to read, copied from the configuration.
	k8s_kind_t kind;
	unsigned source;
	char *paths[2];
	char *label_selector;       // Escaped.
	char *field_selector;       // Escaped.
	bool optional;
	bool forbidden_absent;
	unsigned page_limit;
	long stall_s;
	unsigned absent_retry_s;
	size_t max_object;
	bool watch_list;            // Full lists as watch-lists, unless the server refused one.
	char name[128];             // For log lines: kind, and the label selector if any.

	k8s_api_t *api;
	CURLM *multi;
	k8s_sink_t sink;
	void *sink_ctx;
	const k8s_log_t *log;

	CURL *easy;
	struct curl_slist *headers;
	bool active;                // The easy handle is in the multi handle.
	char errbuf[CURL_ERROR_SIZE];

	// What comes next.
	op_t next_op;
	uint64_t due_ms;
	bool probing;               // Backing off from an unreachable server: probe before due_ms.
	bool token_wait;            // Backing off after a 401: re-read the token file before due_ms.
	uint64_t probe_ms;          // When the next probe (or token file check) is due.
	bool unanswered;            // A transfer got no HTTP answer since the last one that did.
	bool short_watch;           // The last watch ended at once without events.
	unsigned path_idx;          // Index into paths: the one that answered last.

	// The transfer in progress.
	op_t op;
	uint64_t started_ms;
	body_t body;
	abort_t abort;
	long retry_after_s;         // Retry-After header, 0 if none.
	uint64_t token_gen;         // The API client's token generation this transfer was sent with.
	k8s_listsplit_t list;
	k8s_linesplit_t lines;
	k8s_buf_t errbody;
	k8s_jtape_t tape;           // Each item's or line's tokens, reused from one to the next.
	k8s_status_t ev_status;     // Status of an ERROR event.
	uint64_t stream_events;     // Lines decoded in this watch (bookmarks too).

	// The LIST in progress.
	char *cont;                 // Continue token of the next page, NULL for a first page.
	bool unpaged;               // Continue token expired: one list without limit.
	bool rv_unavailable;        // A LIST at rv got 410 or "too large": list at "" (consistent).
	bool paginated;             // A LIST at "0" came in pages: no watch cache, so keep paging.
	size_t list_objects;
	bool initial;               // A watch-list's initial events are arriving (the list in progress).
	bool listed;                // A LIST completed once.
	bool watched;               // A WATCH started once.

	char rv[K8S_RV_MAX];        // Last resourceVersion: from the list, then every event.
	k8s_backoff_t backoff;
	uint64_t rng;
	uint64_t decode_log_ms;
	uint64_t decode_suppressed;
	k8s_reflector_stats_t stats;
};

static inline const char *op_name(op_t op)
{
	switch (op) {
	case OP_WATCH: return "watch";
	case OP_PROBE: return "probe";
	case OP_WLIST: return "watch-list";
	default:       return "list";
	}
}

/*! \brief A WATCH's stream (a watch-list's too): its body is split into event lines. */
static inline bool op_streams(op_t op)
{
	return op == OP_WATCH || op == OP_WLIST;
}

/*! \brief Counts a skipped item or line and logs it, at most once per DECODE_LOG_MS. */
void k8s_reflector_skip_error(k8s_reflector_t *r, uint64_t now, k8s_apierr_t err,
                              const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*! \brief Once the response headers are in: a stream to split, or an error body to keep. */
void k8s_reflector_body_decide(k8s_reflector_t *r);

/*! \brief curl's header callback. */
size_t k8s_reflector_on_header(char *data, size_t size, size_t nmemb, void *ctx);

/*! \brief curl's body callback: a LIST split into items, a WATCH into lines, an error kept. */
size_t k8s_reflector_on_body(char *data, size_t size, size_t nmemb, void *ctx);

/*! \brief The splitters' callback for an item or line over max_object bytes. */
int k8s_reflector_on_skip(void *ctx, const char *text, size_t len);
