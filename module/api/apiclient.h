/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief HTTP requests to the API server: TLS, credentials, headers, timeouts.
 *
 * One k8s_api_t per watcher, used only by the watcher thread.
 */

#pragma once

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/kubeconfig.h"
#include "lib/log.h"

#define K8S_USER_AGENT "mod-k8s/" PACKAGE_VERSION " (knot-dns)"

/*! \brief How often a token file is re-read (client-go uses one minute). */
#define K8S_TOKEN_REREAD_MS (60 * 1000)

typedef struct {
	k8s_apiconf_t conf;       /*!< Owned. */
	char *token;              /*!< Current bearer token (from conf.token or conf.token_file). */
	uint64_t token_read_ms;   /*!< When token_file was last read (monotonic ms; 0 at init). */
	uint64_t token_gen;       /*!< Bumped whenever the token changes. */
	uint64_t token_log_ms;    /*!< Private: when an unreadable token file was last logged. */
	int token_err;            /*!< Private: why the last read of token_file failed, or KNOT_EOK. */
	const k8s_log_t *log;
	char *url_base;           /*!< Private: conf.server, with tls_server_name as host if set. */
	char *host_header;        /*!< Private: "Host: <server's host>" when tls_server_name is set. */
	struct curl_slist *connect_to; /*!< Private: tls_server_name's port to the server's host. */
} k8s_api_t;

/*!
 * \brief Takes over \a conf (its members are moved, \a conf is zeroed) and reads the token.
 *
 * Logs a warning when conf->insecure is set (once per client, never per request).
 * A token (static or read from the token file) with control characters is
 * refused: libcurl would send a CR LF in it as further headers.
 *
 * \retval KNOT_EOK     on success (a missing or refused token file is logged and retried later).
 * \retval KNOT_EINVAL  the static token contains control characters (logged, without the token).
 */
int k8s_api_init(k8s_api_t *api, k8s_apiconf_t *conf, const k8s_log_t *log);

/*! \brief Frees everything (the token memory is wiped). */
void k8s_api_deinit(k8s_api_t *api);

/*!
 * \brief Re-reads the token file if it is older than K8S_TOKEN_REREAD_MS, or at once when \a force.
 *
 * Called before each request, and with \a force after a 401 and then about every
 * second while a reflector waits after one. An unreadable file is logged when it
 * becomes unreadable (or for another reason), then at most once per K8S_TOKEN_REREAD_MS.
 *
 * \return True if the token changed (a rotated token; a 401 is worth retrying at once).
 */
bool k8s_api_refresh_token(k8s_api_t *api, bool force, uint64_t now_ms);

/*!
 * \brief Prepares an easy handle for a GET of \a path_query (e.g. "/api/v1/services?limit=500").
 *
 * Sets URL, TLS (verification on unless insecure), client certificate,
 * "Authorization: Bearer", "Accept: application/json", User-Agent, gzip,
 * TCP keepalive (30 s idle, 10 s interval), connect timeout, a low-speed
 * stall limit of \a stall_s seconds and a total timeout of \a timeout_s
 * seconds (0 = none), CURLOPT_NOSIGNAL and CURLOPT_QUICK_EXIT.
 * The caller sets the write/header callbacks and private pointer.
 *
 * A tls_server_name is verified by putting it in the URL and connecting to
 * the real server with CURLOPT_CONNECT_TO (libcurl has no option to verify
 * another name); the Host header still names the real server, as client-go does.
 *
 * \param headers  Out: header list to free with k8s_api_headers_free() after the transfer.
 *
 * \retval KNOT_EOK     on success.
 * \retval KNOT_ENOMEM  on failure.
 */
int k8s_api_prepare(k8s_api_t *api, CURL *easy, const char *path_query,
                    struct curl_slist **headers, long stall_s, long timeout_s);

/*! \brief Wipes (they hold the token) and frees headers made by k8s_api_prepare(). */
void k8s_api_headers_free(struct curl_slist *headers);

/*! \brief Percent-encodes \a in for a query parameter value into a new string. */
char *k8s_api_escape(const char *in);
