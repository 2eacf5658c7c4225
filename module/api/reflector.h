/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief LIST then WATCH of one API collection, as client-go's reflector does it.
 *
 * A reflector lists its collection with client-go's resourceVersion rules (first
 * at "0", served from the API server's watch cache; later at the last version
 * seen, unpaged so that the cache serves it too; at "" in pages of page_limit, a
 * consistent read, once that version is gone), then watches from the list's
 * resourceVersion with bookmarks, resumes a watch that ends from the last
 * resourceVersion seen, relists on 410 Gone (reconciling by list_begin /
 * list_end), and backs off with jitter (0.8 s doubling to 30 s, Retry-After
 * honoured) on errors. It never blocks: its transfers run on the watcher's
 * curl multi handle, and the watcher calls tick() and done().
 * Objects go to a sink as they are decoded; malformed, oversize or unexpected
 * ones are logged (rate-limited) and skipped. An oversize one is named to the
 * sink from the head of its text, so that what is held of it is neither lost
 * at a relist nor kept after its deletion.
 */

#pragma once

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/apiclient.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "kinds/objects.h"

/*!
 * \brief Largest object read, in bytes of JSON (a watch line may add 128 for its envelope).
 *
 * The API server refuses request bodies over 3 MiB (and etcd objects over 1.5 MiB):
 * anything larger is not a real object. Larger ones are skipped, counted as
 * api-errors[too-large] and logged.
 */
#define K8S_OBJECT_MAX (3 * 1024 * 1024)

/*! \brief Receives what a reflector reads; every object's ownership passes to the sink. */
typedef struct {
	/*! An object exists: LIST item, ADDED or MODIFIED. */
	void (*upsert)(void *ctx, unsigned source, k8s_object_t *obj);
	/*! An object is gone (DELETED, with its last state). */
	void (*remove)(void *ctx, unsigned source, k8s_object_t *obj);
	/*!
	 * A full LIST starts: what this source holds and is not upserted before list_end is gone.
	 * It may come again before list_end when the LIST starts over (a page failed, a continue
	 * token expired): only upserts after the latest list_begin count. An optional resource
	 * found absent gets list_begin and list_end with nothing between.
	 */
	void (*list_begin)(void *ctx, unsigned source);
	/*! The full LIST completed (all pages). */
	void (*list_end)(void *ctx, unsigned source);
	/*!
	 * An object too large to read (K8S_OBJECT_MAX, K8S_JSON_VALUES_MAX, K8S_JSON_OBJECTS_MAX),
	 * named by the head of its text: the version held stays (a LIST item, ADDED, MODIFIED;
	 * list_end must not drop it), or goes (\a deleted: a DELETED event). \a ns is "" for
	 * cluster-scoped kinds.
	 */
	void (*too_large)(void *ctx, unsigned source, const char *ns, const char *name,
	                  bool deleted);
} k8s_sink_t;

/*! \brief Classes of API errors, for stats. */
typedef enum {
	K8S_APIERR_NETWORK = 0,  /*!< Connect, DNS, reset, cut stream. */
	K8S_APIERR_TLS,          /*!< Handshake or verification. */
	K8S_APIERR_TIMEOUT,      /*!< Stall or total timeout. */
	K8S_APIERR_UNAUTHORIZED, /*!< 401. */
	K8S_APIERR_FORBIDDEN,    /*!< 403. */
	K8S_APIERR_NOTFOUND,     /*!< 404. */
	K8S_APIERR_GONE,         /*!< 410 (HTTP or ERROR event). */
	K8S_APIERR_THROTTLED,    /*!< 429. */
	K8S_APIERR_SERVER,       /*!< 5xx. */
	K8S_APIERR_HTTP,         /*!< Other HTTP status. */
	K8S_APIERR_DECODE,       /*!< Malformed body, line or object. */
	K8S_APIERR_TOO_LARGE,    /*!< An object skipped for its size or JSON value count. */
	K8S_APIERR_COUNT
} k8s_apierr_t;

/*! \brief Lowercase name of an error class ("network", "gone", ...). */
const char *k8s_apierr_name(k8s_apierr_t err);

/*! \brief The class of a transfer libcurl ended without a (complete) answer (apierr.c). */
k8s_apierr_t k8s_apierr_of_curl(CURLcode result);

/*!
 * \brief The defaults of options watch-stall-timeout and crd-retry-interval (seconds):
 * the option schema (k8s_conf.c) and a reflector given 0 both take them from here.
 */
#define K8S_STALL_S_DEFAULT         90
#define K8S_ABSENT_RETRY_S_DEFAULT  60

/*! \brief What a reflector is to read. Strings are copied. */
typedef struct {
	k8s_kind_t kind;
	unsigned source;            /*!< Identifies this reflector to the sink. */
	const char *paths[2];       /*!< Collection paths, tried in order on 404 (second may be NULL). */
	const char *label_selector; /*!< labelSelector, or NULL. */
	const char *field_selector; /*!< fieldSelector, or NULL. */
	bool optional;              /*!< A 404 means "not installed": synced as empty, retried later. */
	/*! A 403 means "not permitted" (no RBAC rule: the readers fall back): logged once,
	 *  the sink told nothing, not synced, listed again every absent_retry_s. */
	bool forbidden_absent;
	unsigned page_limit;        /*!< LIST page size; 0 means 500. */
	unsigned stall_s;           /*!< A transfer silent this long is cut (0: default). */
	unsigned absent_retry_s;    /*!< An absent optional resource is listed again this
	                                 often (0: default). */
	size_t max_object;          /*!< Larger objects are skipped; 0 means K8S_OBJECT_MAX. */
	bool watch_list;            /*!< Full lists as watch-lists (sendInitialEvents), LISTs where
	                                 the server refuses them. */
} k8s_reflector_conf_t;

/*! \brief Counters of one reflector, read by the watcher. */
typedef struct {
	uint64_t events;               /*!< Watch events applied. */
	uint64_t bookmarks;            /*!< BOOKMARKs received (each moves the resume point). */
	uint64_t relists;              /*!< Full LISTs after the first. */
	uint64_t watch_restarts;       /*!< Watches started after the first. */
	uint64_t errors[K8S_APIERR_COUNT];
	uint64_t last_event_ms;        /*!< Monotonic ms of the last event, bookmark or list page (0 = never). */
	uint64_t decode_ns;            /*!< Time spent decoding items and events (the watcher's phases). */
	bool synced;                   /*!< A full LIST completed once (or the resource is absent). */
	bool watch_lists_refused;      /*!< The server refused a watch-list: full lists are LISTs. */
	bool absent;                   /*!< Last answer was 404 on every path (or 403, forbidden_absent). */
	bool connected;                /*!< A watch is streaming right now. */
} k8s_reflector_stats_t;

typedef struct k8s_reflector k8s_reflector_t;

/*!
 * \brief Creates a reflector; it starts on the first tick.
 *
 * \param api     API client (outlives the reflector).
 * \param multi   The watcher's multi handle (outlives the reflector).
 */
k8s_reflector_t *k8s_reflector_new(const k8s_reflector_conf_t *conf, k8s_api_t *api,
                                   CURLM *multi, const k8s_sink_t *sink, void *sink_ctx,
                                   const k8s_log_t *log);

/*! \brief Stops any transfer (removing it from the multi handle) and frees. */
void k8s_reflector_free(k8s_reflector_t *r);

/*!
 * \brief Starts a transfer whose time has come (first list, retry after backoff, re-watch).
 *
 * Call it first right after k8s_reflector_new(), then when the delay it last
 * returned has passed, and right after each k8s_reflector_done(). The
 * transfer's easy handle is added to the multi handle here.
 *
 * \return Milliseconds until the reflector wants the next tick, or -1 while
 *         it waits for its transfer to finish.
 */
long k8s_reflector_tick(k8s_reflector_t *r, uint64_t now_ms);

/*!
 * \brief Handles the end of this reflector's transfer (its easy handle's CURLOPT_PRIVATE is \a r).
 *
 * Removes the easy handle from the multi handle: take the handle and result out
 * of the CURLMsg before calling (the message does not survive the removal).
 * Starts nothing; call k8s_reflector_tick() next.
 */
void k8s_reflector_done(k8s_reflector_t *r, CURLcode result, uint64_t now_ms);

/*! \brief The reflector's counters. */
const k8s_reflector_stats_t *k8s_reflector_stats(const k8s_reflector_t *r);

