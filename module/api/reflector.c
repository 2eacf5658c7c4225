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


#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libknot/errcode.h>
#include <libknot/error.h>

#include "api/backoff.h"
#include "lib/buf.h"
#include "api/events.h"
#include "api/jsonsplit.h"
#include "api/reflector.h"
#include "api/reflector_priv.h"

/*! A uniformly random number in [0, 1) (xorshift64*; jitter needs no better). */
static double rng_unit(k8s_reflector_t *r)
{
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return (double)((r->rng * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53);
}

/*! The next probe, jittered so that the reflectors do not probe in step. */
static void probe_schedule(k8s_reflector_t *r, uint64_t now)
{
	r->probe_ms = now + PROBE_INTERVAL_MS + (uint64_t)(rng_unit(r) * PROBE_INTERVAL_MS / 2);
}

/*! Schedules the next transfer. */
static void schedule(k8s_reflector_t *r, op_t op, uint64_t due_ms)
{
	r->next_op = op;
	r->due_ms = due_ms;
	r->probing = false;
	r->token_wait = false;
}

/*! Forgets a list in progress: the next LIST is a first page again. */
static void list_reset(k8s_reflector_t *r)
{
	free(r->cont);
	r->cont = NULL;
	r->unpaged = false;
}

/*!
 * A failed transfer: counts it, logs it, and retries after a backoff.
 *
 * \param relist  Start over with a full LIST (else the same page or watch again).
 */
static void fail(k8s_reflector_t *r, uint64_t now, k8s_apierr_t err, bool relist,
                 long retry_after_s, const char *reason)
{
	r->stats.errors[err]++;
	if (retry_after_s > RETRY_AFTER_MAX_S) {
		retry_after_s = RETRY_AFTER_MAX_S;
	}
	// The server said when to come back (429, 503): that, not a delay grown by earlier faults.
	uint64_t delay = (retry_after_s > 0) ?
	                 k8s_backoff_retry_after((uint64_t)retry_after_s * 1000, rng_unit(r)) :
	                 k8s_backoff_next(&r->backoff, now, rng_unit(r));

	op_t next = r->op;
	if (relist) {
		list_reset(r);
		next = OP_LIST;
	}
	schedule(r, next, now + delay);
	// No answer at all: a cheap probe notices the server's return long before the backoff ends.
	// Not after an answer (5xx, 429, ...): the server is up and asked to be left alone.
	if ((err == K8S_APIERR_NETWORK || err == K8S_APIERR_TIMEOUT) && retry_after_s == 0 &&
	    delay > PROBE_INTERVAL_MS) {
		r->probing = true;
		probe_schedule(r, now);
	}
	// A token refused: the kubelet may write the new one any moment, so watch the file.
	if (err == K8S_APIERR_UNAUTHORIZED && delay > PROBE_INTERVAL_MS) {
		r->token_wait = true;
		probe_schedule(r, now);
	}

	const char *what = (next == r->op) ? "retrying" : "relisting";
	k8s_logf(r->log, LOG_WARNING, "%s %s failed, %s in %.1f s (%s)",
	         op_name(r->op), r->name, what, delay / 1000.0, reason);
}

/*!
 * The resourceVersion of a LIST's first page, as client-go's relistResourceVersion():
 * "0" at first (served from the watch cache), then the last one seen (a list at least that
 * new, from the cache too), "" (a consistent read) when the server no longer has that one.
 */
static const char *list_rv(const k8s_reflector_t *r)
{
	if (r->rv_unavailable) {
		return "";
	}
	return (r->rv[0] == '\0') ? "0" : r->rv;
}

/*!
 * Whether a LIST's first page asks for a limit, as client-go's reflector sets its pager:
 * not at a version other than "0" (a limit there is an exact read from etcd, the cache
 * serves only unlimited ones), unless the server paged a list at "0" (it has no cache).
 * At "0" the cache ignores the limit, so asking costs nothing.
 */
static bool list_paged(const k8s_reflector_t *r)
{
	const char *rv = list_rv(r);
	return !r->unpaged && (r->paginated || rv[0] == '\0' || strcmp(rv, "0") == 0);
}

/*! Builds the query of the next transfer into \a q (NUL-terminated). */
static int query_make(k8s_reflector_t *r, op_t op, long watch_timeout_s, k8s_buf_t *q)
{
	char limit[32], timeout[32];
	snprintf(limit, sizeof(limit), "%u", r->page_limit);
	snprintf(timeout, sizeof(timeout), "%ld", watch_timeout_s);
	// A continued LIST names no version (the token holds it), as client-go's pager; a
	// watch-list names the last one seen, none at first or when the server lost it.
	const char *at = (op == OP_WATCH) ? r->rv : (r->cont != NULL) ? "" :
	                 (op == OP_WLIST) ? (r->rv_unavailable ? "" : r->rv) : list_rv(r);
	char *rv = k8s_api_escape(at);
	char *cont = (r->cont != NULL) ? k8s_api_escape(r->cont) : NULL;
	if (rv == NULL || (r->cont != NULL && cont == NULL)) {
		free(rv);
		free(cont);
		return KNOT_ENOMEM;
	}

	// Values are escaped already; keys and values alternate, NULL values are skipped.
	const char *params[16];
	size_t n = 0;
	if (op == OP_WATCH) {
		params[n++] = "watch";               params[n++] = "1";
		params[n++] = "resourceVersion";     params[n++] = rv;
		params[n++] = "allowWatchBookmarks"; params[n++] = "true";
		params[n++] = "timeoutSeconds";      params[n++] = timeout;
	} else if (op == OP_WLIST) {
		// client-go's watchList(): the state as ADDED events, a bookmark at its end.
		params[n++] = "watch";                params[n++] = "1";
		params[n++] = "sendInitialEvents";    params[n++] = "true";
		params[n++] = "allowWatchBookmarks";  params[n++] = "true";
		params[n++] = "resourceVersionMatch"; params[n++] = "NotOlderThan";
		params[n++] = "resourceVersion";      params[n++] = (rv[0] != '\0') ? rv : NULL;
		params[n++] = "timeoutSeconds";       params[n++] = timeout;
	} else {
		params[n++] = "resourceVersion";     params[n++] = (rv[0] != '\0') ? rv : NULL;
		params[n++] = "limit";               params[n++] = (cont != NULL || list_paged(r)) ?
		                                                   limit : NULL;
		params[n++] = "continue";            params[n++] = cont;
	}
	params[n++] = "labelSelector";               params[n++] = r->label_selector;
	params[n++] = "fieldSelector";               params[n++] = r->field_selector;

	const char *path = r->paths[r->path_idx];
	int ret = k8s_buf_append(q, path, strlen(path), QUERY_MAX);
	char sep = '?';
	for (size_t i = 0; ret == KNOT_EOK && i < n; i += 2) {
		if (params[i + 1] == NULL) {
			continue;
		}
		ret = k8s_buf_append(q, &sep, 1, QUERY_MAX);
		if (ret == KNOT_EOK) {
			ret = k8s_buf_append(q, params[i], strlen(params[i]), QUERY_MAX);
		}
		if (ret == KNOT_EOK) {
			ret = k8s_buf_append(q, "=", 1, QUERY_MAX);
		}
		if (ret == KNOT_EOK) {
			ret = k8s_buf_append(q, params[i + 1], strlen(params[i + 1]), QUERY_MAX);
		}
		sep = '&';
	}
	if (ret == KNOT_EOK) {
		ret = k8s_buf_append(q, "", 1, QUERY_MAX);
	}
	free(rv);
	free(cont);
	return ret;
}

/*! Ends the transfer's own state: handle out of the multi, headers wiped, splitters freed. */
static void transfer_end(k8s_reflector_t *r)
{
	if (r->active) {
		curl_multi_remove_handle(r->multi, r->easy);
		r->active = false;
	}
	k8s_api_headers_free(r->headers);
	r->headers = NULL;
	r->stats.connected = false;
	r->initial = false;
	if (op_streams(r->op)) {
		k8s_linesplit_deinit(&r->lines);
	} else if (r->op == OP_LIST) {
		k8s_listsplit_deinit(&r->list);
	}
	k8s_buf_reset(&r->errbody, 0);
}

/*! Starts the transfer \a op: the scheduled one, or a probe. */
static int transfer_start(k8s_reflector_t *r, op_t op, uint64_t now)
{
	if (op == OP_LIST && r->cont == NULL && r->watch_list && !r->stats.watch_lists_refused) {
		op = OP_WLIST;
	}
	long watch_timeout_s = WATCH_TIMEOUT_MIN_S + (long)(rng_unit(r) * WATCH_TIMEOUT_SPAN_S);
	k8s_buf_t query = { 0 };
	int ret = (op == OP_PROBE) ?
	          k8s_buf_append(&query, PROBE_PATH, sizeof(PROBE_PATH), QUERY_MAX) :
	          query_make(r, op, watch_timeout_s, &query);
	if (ret != KNOT_EOK) {
		k8s_buf_free(&query);
		return ret;
	}

	k8s_api_refresh_token(r->api, false, now);
	r->token_gen = r->api->token_gen;
	curl_easy_reset(r->easy);
	long timeout_s = op_streams(op) ? watch_timeout_s + WATCH_TIMEOUT_MARGIN_S : LIST_TIMEOUT_S;
	long stall_s = r->stall_s;
	if (op == OP_PROBE) {
		timeout_s = PROBE_TIMEOUT_S;
		stall_s = PROBE_TIMEOUT_S;
	}
	ret = k8s_api_prepare(r->api, r->easy, query.data, &r->headers, stall_s, timeout_s);
	k8s_buf_free(&query);
	if (ret != KNOT_EOK) {
		return ret;
	}
	CURLcode rc = curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(r->easy, CURLOPT_HEADERFUNCTION, k8s_reflector_on_header);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, r);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, k8s_reflector_on_body);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	}
	if (rc == CURLE_OK && op_streams(op)) {
		// kube-apiserver (1.37) gzips a watch-list's events as gzip members one after
		// another, and libcurl's decoder fails the transfer at the second: streams plain.
		rc = curl_easy_setopt(r->easy, CURLOPT_ACCEPT_ENCODING, NULL);
	}
	if (rc != CURLE_OK) {
		k8s_api_headers_free(r->headers);
		r->headers = NULL;
		return KNOT_ENOMEM;
	}

	r->op = op;
	r->started_ms = now;
	r->body = BODY_NONE;
	r->abort = ABORT_NONE;
	r->retry_after_s = 0;
	r->errbuf[0] = '\0';
	r->stream_events = 0;
	memset(&r->ev_status, 0, sizeof(r->ev_status));
	if (op_streams(op)) {
		k8s_linesplit_init(&r->lines, r->max_object + EVENT_ENVELOPE_MAX);
		r->lines.on_skip = k8s_reflector_on_skip;
		r->lines.skip_ctx = r;
	} else if (op == OP_LIST) {
		k8s_listsplit_init(&r->list, r->max_object);
		r->list.on_skip = k8s_reflector_on_skip;
		r->list.skip_ctx = r;
	}
	r->active = true;
	if (curl_multi_add_handle(r->multi, r->easy) != CURLM_OK) {
		r->active = false; // Not in the multi handle: transfer_end() must not remove it.
		transfer_end(r);
		return KNOT_ENOMEM;
	}

	if (op == OP_WATCH) {
		r->stats.watch_restarts += r->watched ? 1 : 0;
		r->watched = true;
		k8s_logf(r->log, LOG_DEBUG, "watch %s started from resource version %s",
		         r->name, r->rv);
	} else if (op == OP_LIST && r->cont == NULL) {
		r->stats.relists += r->listed ? 1 : 0;
	} else if (op == OP_WLIST) {
		// A list, and a watch started again too.
		r->stats.relists += r->listed ? 1 : 0;
		r->stats.watch_restarts += r->watched ? 1 : 0;
		k8s_logf(r->log, LOG_DEBUG, "watch-list %s started from resource version %s",
		         r->name, (r->rv_unavailable || r->rv[0] == '\0') ? "(latest)" : r->rv);
	}
	return KNOT_EOK;
}

/*! A probe ended: any HTTP answer means the server is back, so the backoff ends now. */
static void probe_done(k8s_reflector_t *r, long code, uint64_t now)
{
	if (code == 0) {
		probe_schedule(r, now);
		return;
	}
	// Resumes what failed (a watch from the last resourceVersion); only a 410 relists.
	k8s_logf(r->log, LOG_INFO, "%s: API server reachable again, %s now instead of in %.1f s",
	         r->name, (r->next_op == OP_WATCH) ? "resuming the watch" : "listing",
	         (r->due_ms > now) ? (r->due_ms - now) / 1000.0 : 0.0);
	schedule(r, r->next_op, now);
}

/*! The last LIST page arrived, or one more is to be fetched. */
static void list_page_done(k8s_reflector_t *r, uint64_t now)
{
	if (!r->list.done || r->list.rv[0] == '\0') {
		fail(r, now, K8S_APIERR_DECODE, true, 0, "incomplete list body");
		return;
	}
	r->stats.last_event_ms = now;
	if (r->cont == NULL && r->list.cont != NULL && strcmp(list_rv(r), "0") == 0) {
		r->paginated = true;
	}
	if (r->list.cont != NULL && !r->unpaged) {
		char *cont = strdup(r->list.cont);
		if (cont == NULL) {
			fail(r, now, K8S_APIERR_DECODE, true, 0, "out of memory");
			return;
		}
		free(r->cont);
		r->cont = cont;
		schedule(r, OP_LIST, now);
		return;
	}

	memcpy(r->rv, r->list.rv, sizeof(r->rv));
	r->rv[sizeof(r->rv) - 1] = '\0';
	r->rv_unavailable = false;
	list_reset(r);
	r->sink.list_end(r->sink_ctx, r->source);
	r->listed = true;
	r->stats.synced = true;
	r->stats.absent = false;
	// Not after a very short watch: its relists would repeat every second, a load on the server.
	if (!r->short_watch) {
		k8s_backoff_reset(&r->backoff);
	}
	k8s_logf(r->log, LOG_INFO, "list %s completed, %zu objects, resource version %s",
	         r->name, r->list_objects, r->rv);
	schedule(r, OP_WATCH, now);
}

/*! A watch stream ended: at its timeout, cut by the server or the network, or stalled. */
static void watch_ended(k8s_reflector_t *r, uint64_t now, k8s_apierr_t err, const char *reason)
{
	size_t partial = k8s_linesplit_pending(&r->lines);
	if (r->initial) {
		// Its list never completed: another one, as after a LIST cut short.
		fail(r, now, (reason != NULL) ? err : K8S_APIERR_NETWORK, true, 0,
		     (reason != NULL) ? reason : "watch-list ended before its initial events did");
		return;
	}
	if (r->stream_events == 0 && now - r->started_ms < SHORT_WATCH_MS) {
		r->short_watch = true;
		fail(r, now, K8S_APIERR_NETWORK, true, 0,
		     (reason != NULL) ? reason : "watch ended at once without events");
		return;
	}

	r->short_watch = false;
	if (now - r->started_ms >= WATCH_HEALTHY_MS) {
		k8s_backoff_reset(&r->backoff); // It lived: the next fault starts small again.
	}
	if (reason == NULL && partial > 0) {
		err = K8S_APIERR_NETWORK;
		reason = "stream cut inside an event";
	}
	if (reason != NULL) {
		r->stats.errors[err]++;
		k8s_logf(r->log, LOG_INFO, "watch %s interrupted, resuming from resource "
		         "version %s (%s%s)", r->name, r->rv, reason,
		         (partial > 0) ? ", incomplete event discarded" : "");
	} else {
		k8s_logf(r->log, LOG_DEBUG, "watch %s ended, resuming from resource version %s",
		         r->name, r->rv);
	}
	schedule(r, OP_WATCH, now);
}

/*! The resource is not served on the current path. */
static void not_found(k8s_reflector_t *r, uint64_t now, const char *reason)
{
	list_reset(r);
	if (r->path_idx == 0 && r->paths[1] != NULL) {
		// An older API version may still be served (e.g. ServiceImport v1alpha1).
		r->path_idx = 1;
		schedule(r, OP_LIST, now);
		return;
	}
	r->path_idx = 0;
	bool was_absent = r->stats.absent;
	r->stats.absent = true;
	if (!r->optional) {
		fail(r, now, K8S_APIERR_NOTFOUND, true, 0, reason);
		return;
	}

	r->stats.errors[K8S_APIERR_NOTFOUND]++;
	if (!was_absent) {
		k8s_logf(r->log, LOG_NOTICE, "%s not served by the API server, treated as "
		         "empty, checking again every %u s (%s)", r->name, r->absent_retry_s, reason);
		// An empty list: whatever this source held is gone.
		r->sink.list_begin(r->sink_ctx, r->source);
		r->sink.list_end(r->sink_ctx, r->source);
	}
	r->stats.synced = true;
	schedule(r, OP_LIST, now + (uint64_t)r->absent_retry_s * 1000);
}

/*! Not permitted (a 403) where that is a setting, not a fault: the readers fall back. */
static void forbidden(k8s_reflector_t *r, uint64_t now, const char *reason)
{
	list_reset(r);
	r->stats.errors[K8S_APIERR_FORBIDDEN]++;
	if (!r->stats.absent) {
		k8s_logf(r->log, LOG_NOTICE, "%s not permitted, not read, asking again every %u s "
		         "(%s)", r->name, r->absent_retry_s, reason);
	}
	// Absent, not synced: what it held stays, and nothing new is known.
	r->stats.absent = true;
	schedule(r, OP_LIST, now + (uint64_t)r->absent_retry_s * 1000);
}

/*! Too new a resourceVersion (504 or ERROR 504): only a fresh list helps. */
static bool rv_too_large(const k8s_status_t *st)
{
	return strcasestr(st->message, "too large resource version") != NULL;
}

/*! An API error, as an HTTP status or a watch ERROR event. */
static void api_error(k8s_reflector_t *r, uint64_t now, int code, const k8s_status_t *st,
                      long retry_after_s)
{
	// "HTTP 410 Expired" from a Status, "HTTP 429, Too many requests..." from a text body.
	char reason[320];
	if (st->reason[0] != '\0') {
		snprintf(reason, sizeof(reason), "HTTP %d %s", code, st->reason);
	} else if (st->message[0] != '\0') {
		snprintf(reason, sizeof(reason), "HTTP %d, %s", code, st->message);
	} else {
		snprintf(reason, sizeof(reason), "HTTP %d", code);
	}
	if (st->retry_after > retry_after_s) {
		retry_after_s = st->retry_after;
	}

	if (code == 401) {
		// Also when another reflector read the new token after this request was sent.
		if (k8s_api_refresh_token(r->api, true, now) || r->api->token_gen != r->token_gen) {
			// A rotated token: retry at once; an unchanged one would only get 401 again.
			r->stats.errors[K8S_APIERR_UNAUTHORIZED]++;
			k8s_logf(r->log, LOG_INFO, "%s %s unauthorized, retrying with the "
			         "re-read token (%s)", op_name(r->op), r->name, reason);
			schedule(r, r->op, now);
			return;
		}
		fail(r, now, K8S_APIERR_UNAUTHORIZED, false, retry_after_s, reason);
	} else if (code == 403 && r->forbidden_absent) {
		forbidden(r, now, reason);
	} else if (code == 403) {
		fail(r, now, K8S_APIERR_FORBIDDEN, true, retry_after_s, reason);
	} else if (code == 404) {
		not_found(r, now, reason);
	} else if (code == 410 && r->op == OP_LIST && r->cont != NULL) {
		// The continue token expired: one list without paging, as client-go's pager falls back.
		r->stats.errors[K8S_APIERR_GONE]++;
		k8s_logf(r->log, LOG_INFO, "list %s restarted without paging (%s)", r->name, reason);
		list_reset(r);
		r->unpaged = true;
		schedule(r, OP_LIST, now);
	} else if (r->op == OP_WLIST && (code == 400 || code == 422)) {
		// Not served here (a server before 1.27, or its WatchList gate off): LISTs from now on.
		r->stats.watch_lists_refused = true;
		k8s_logf(r->log, LOG_INFO, "%s: the API server refuses watch-lists, listing instead (%s)",
		         r->name, reason);
		list_reset(r);
		schedule(r, OP_LIST, now);
	} else if ((r->op == OP_LIST || r->op == OP_WLIST) && !r->rv_unavailable &&
	           (code == 410 || (code == 504 && rv_too_large(st)))) {
		// The version listed at is gone or not there yet: at once at "", as client-go.
		r->stats.errors[(code == 410) ? K8S_APIERR_GONE : K8S_APIERR_SERVER]++;
		k8s_logf(r->log, LOG_INFO, "list %s at resource version %s restarted as a "
		         "consistent read (%s)", r->name, list_rv(r), reason);
		list_reset(r);
		r->rv_unavailable = true;
		schedule(r, OP_LIST, now);
	} else if (code == 410) {
		fail(r, now, K8S_APIERR_GONE, true, retry_after_s, reason);
	} else if (code == 429) {
		fail(r, now, K8S_APIERR_THROTTLED, false, retry_after_s, reason);
	} else if (code >= 500 && code <= 599) {
		fail(r, now, K8S_APIERR_SERVER, code == 504 && rv_too_large(st), retry_after_s, reason);
	} else {
		// E.g. 400 for a resourceVersion the server cannot parse: the relist names none.
		r->rv_unavailable = true;
		fail(r, now, K8S_APIERR_HTTP, true, retry_after_s, reason);
	}
}

void k8s_reflector_done(k8s_reflector_t *r, CURLcode result, uint64_t now_ms)
{
	if (r == NULL || !r->active) {
		return;
	}
	long code = 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	// The delay grew while nothing answered; the first answer after that (a probe's, or a
	// restarted server's 410 or 429) is a new fault, which starts small again.
	if (code == 0) {
		r->unanswered = true;
	} else if (r->unanswered) {
		r->unanswered = false;
		k8s_backoff_reset(&r->backoff);
	}
	if (r->op == OP_PROBE) {
		probe_done(r, code, now_ms);
		transfer_end(r);
		return;
	}
	if (r->body == BODY_NONE && code != 0) {
		k8s_reflector_body_decide(r); // A response without a body (e.g. a bare 401 or an empty 200).
	}
	char reason[CURL_ERROR_SIZE + 32];
	snprintf(reason, sizeof(reason), "%s",
	         r->errbuf[0] != '\0' ? r->errbuf : curl_easy_strerror(result));

	if (r->abort == ABORT_WL_IGNORED) {
		k8s_logf(r->log, LOG_INFO, "%s: the API server does not end a watch-list's initial "
		         "events, listing instead", r->name);
		list_reset(r);
		schedule(r, OP_LIST, now_ms);
	} else if (r->abort == ABORT_ERROR_EVENT) {
		api_error(r, now_ms, r->ev_status.code, &r->ev_status, 0);
	} else if (r->abort == ABORT_BAD_LIST) {
		fail(r, now_ms, K8S_APIERR_DECODE, true, 0, "malformed list body");
	} else if (r->body == BODY_ERROR && code != 0) {
		k8s_status_t st;
		k8s_status_decode(r->errbody.data, r->errbody.len, &st);
		if (code == 200) {
			snprintf(st.reason, sizeof(st.reason), "unexpected content type");
		}
		api_error(r, now_ms, (int)code, &st, r->retry_after_s);
	} else if (r->body == BODY_WATCH) {
		watch_ended(r, now_ms, k8s_apierr_of_curl(result),
		            (result == CURLE_OK) ? NULL : reason);
	} else if (result != CURLE_OK) {
		// No answer, or a LIST body cut: the same page (or watch) again after a while.
		fail(r, now_ms, k8s_apierr_of_curl(result), false, 0, reason);
	} else {
		list_page_done(r, now_ms);
	}

	if (r->decode_suppressed > 0 && now_ms - r->decode_log_ms >= DECODE_LOG_MS) {
		k8s_logf(r->log, LOG_WARNING, "%s: %" PRIu64 " more objects skipped (decode errors "
		         "or too large)",
		         r->name, r->decode_suppressed);
		r->decode_log_ms = now_ms;
		r->decode_suppressed = 0;
	}
	transfer_end(r);
}

long k8s_reflector_tick(k8s_reflector_t *r, uint64_t now_ms)
{
	if (r->active) {
		return -1;
	}
	if (now_ms < r->due_ms && r->token_wait) {
		if (now_ms >= r->probe_ms) {
			if (k8s_api_refresh_token(r->api, true, now_ms) ||
			    r->api->token_gen != r->token_gen) {
				k8s_logf(r->log, LOG_INFO, "%s: token file changed, %s now instead of "
				         "in %.1f s", r->name, (r->next_op == OP_WATCH) ?
				         "resuming the watch" : "listing", (r->due_ms - now_ms) / 1000.0);
				schedule(r, r->next_op, now_ms);
				return k8s_reflector_tick(r, now_ms);
			}
			probe_schedule(r, now_ms);
		}
		uint64_t next = (r->probe_ms < r->due_ms) ? r->probe_ms : r->due_ms;
		return (long)(next - now_ms);
	}
	if (now_ms < r->due_ms && r->probing) {
		if (now_ms >= r->probe_ms) {
			if (transfer_start(r, OP_PROBE, now_ms) == KNOT_EOK) {
				return -1;
			}
			r->probing = false; // Out of memory: the backoff alone, then.
			return (long)(r->due_ms - now_ms);
		}
		uint64_t next = (r->probe_ms < r->due_ms) ? r->probe_ms : r->due_ms;
		return (long)(next - now_ms);
	}
	if (now_ms < r->due_ms) {
		return (long)(r->due_ms - now_ms);
	}
	int ret = transfer_start(r, r->next_op, now_ms);
	if (ret != KNOT_EOK) {
		r->op = r->next_op; // fail() retries r->op.
		fail(r, now_ms, K8S_APIERR_NETWORK, false, 0, knot_strerror(ret));
		return (long)(r->due_ms - now_ms);
	}
	return -1;
}

/*! Copies a configuration string; \a escape makes it a query value. */
static bool str_copy(char **out, const char *in, bool escape)
{
	if (in == NULL || in[0] == '\0') {
		*out = NULL;
		return true;
	}
	*out = escape ? k8s_api_escape(in) : strdup(in);
	return *out != NULL;
}

k8s_reflector_t *k8s_reflector_new(const k8s_reflector_conf_t *conf, k8s_api_t *api,
                                   CURLM *multi, const k8s_sink_t *sink, void *sink_ctx,
                                   const k8s_log_t *log)
{
	if (conf->paths[0] == NULL) {
		return NULL;
	}
	k8s_reflector_t *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		return NULL;
	}
	r->kind = conf->kind;
	r->source = conf->source;
	r->optional = conf->optional;
	r->forbidden_absent = conf->forbidden_absent;
	r->page_limit = (conf->page_limit > 0) ? conf->page_limit : PAGE_LIMIT_DEFAULT;
	r->stall_s = (conf->stall_s > 0) ? conf->stall_s : K8S_STALL_S_DEFAULT;
	r->absent_retry_s = (conf->absent_retry_s > 0) ? conf->absent_retry_s : K8S_ABSENT_RETRY_S_DEFAULT;
	r->max_object = (conf->max_object > 0) ? conf->max_object : K8S_OBJECT_MAX;
	r->watch_list = conf->watch_list;
	k8s_jtape_init(&r->tape);
	r->api = api;
	r->multi = multi;
	r->sink = *sink;
	r->sink_ctx = sink_ctx;
	r->log = log;
	r->rng = (k8s_now_ms() * 0x9E3779B97F4A7C15ULL) ^ (uintptr_t)r ^ conf->source;
	r->rng |= 1; // xorshift must not start at zero.
	if (conf->label_selector != NULL && conf->label_selector[0] != '\0') {
		snprintf(r->name, sizeof(r->name), "%s (%s)", k8s_kind_name(conf->kind),
		         conf->label_selector);
	} else if (conf->forbidden_absent && conf->field_selector != NULL) {
		// One named object (a ConfigMap): the log says which.
		snprintf(r->name, sizeof(r->name), "%s (%s)", k8s_kind_name(conf->kind),
		         conf->field_selector);
	} else {
		snprintf(r->name, sizeof(r->name), "%s", k8s_kind_name(conf->kind));
	}

	if (!str_copy(&r->paths[0], conf->paths[0], false) ||
	    !str_copy(&r->paths[1], conf->paths[1], false) ||
	    !str_copy(&r->label_selector, conf->label_selector, true) ||
	    !str_copy(&r->field_selector, conf->field_selector, true) ||
	    (r->easy = curl_easy_init()) == NULL) {
		k8s_reflector_free(r);
		return NULL;
	}
	schedule(r, OP_LIST, 0);
	return r;
}

void k8s_reflector_free(k8s_reflector_t *r)
{
	if (r == NULL) {
		return;
	}
	if (r->active) {
		transfer_end(r);
	}
	if (r->easy != NULL) {
		curl_easy_cleanup(r->easy);
	}
	k8s_buf_free(&r->errbody);
	k8s_jtape_deinit(&r->tape);
	free(r->paths[0]);
	free(r->paths[1]);
	free(r->label_selector);
	free(r->field_selector);
	free(r->cont);
	free(r);
}

const k8s_reflector_stats_t *k8s_reflector_stats(const k8s_reflector_t *r)
{
	return &r->stats;
}
