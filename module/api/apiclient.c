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


#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libknot/errcode.h>
#include <libknot/error.h>

#include "api/apiclient.h"

/*! A token file over this size is not a token (JWTs are a few KiB). */
#define TOKEN_FILE_MAX (64 * 1024)

/*! TCP keepalive as client-go dials: dead peers are found without waiting for the kernel's hours. */
#define KEEPALIVE_IDLE_S 30
#define KEEPALIVE_INTVL_S 10
#define CONNECT_TIMEOUT_S 10

/*! Reads a token file; surrounding white space is dropped (client-go trims it too). */
static int token_read(const char *path, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return knot_map_errno();
	}

	char *buf = malloc(TOKEN_FILE_MAX + 1);
	if (buf == NULL) {
		close(fd);
		return KNOT_ENOMEM;
	}
	size_t len = 0;
	int ret = KNOT_EOK;
	while (len <= TOKEN_FILE_MAX) {
		ssize_t n = read(fd, buf + len, TOKEN_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0) {
			ret = knot_map_errno();
			break;
		} else if (n == 0) {
			break;
		}
		len += n;
	}
	close(fd);
	if (ret == KNOT_EOK && len > TOKEN_FILE_MAX) {
		ret = KNOT_ESPACE;
	}

	size_t start = 0;
	while (start < len && strchr(" \t\r\n", buf[start]) != NULL) {
		start++;
	}
	while (len > start && strchr(" \t\r\n", buf[len - 1]) != NULL) {
		len--;
	}
	if (ret == KNOT_EOK && len == start) {
		ret = KNOT_EFEWDATA;
	}
	if (ret == KNOT_EOK && !k8s_token_valid(buf + start, len - start)) {
		ret = KNOT_EMALF;
	}
	if (ret == KNOT_EOK && (*out = strndup(buf + start, len - start)) == NULL) {
		ret = KNOT_ENOMEM;
	}
	explicit_bzero(buf, TOKEN_FILE_MAX + 1);
	free(buf);
	return ret;
}

static const char *token_error(int ret)
{
	switch (ret) {
	case KNOT_ESPACE:   return "too large";
	case KNOT_EFEWDATA: return "empty";
	case KNOT_EMALF:    return "contains control characters";
	default:            return knot_strerror(ret); // No strerror(): it takes the locale lock.
	}
}

bool k8s_api_refresh_token(k8s_api_t *api, bool force, uint64_t now_ms)
{
	if (api->conf.token_file == NULL) {
		return false;
	}
	if (!force && now_ms - api->token_read_ms < K8S_TOKEN_REREAD_MS) {
		return false;
	}
	api->token_read_ms = now_ms;

	char *token = NULL;
	int ret = token_read(api->conf.token_file, &token);
	if (ret != KNOT_EOK) {
		// Read every second while a 401 waits: log the change, then once a minute.
		if (ret != api->token_err || now_ms - api->token_log_ms >= K8S_TOKEN_REREAD_MS) {
			k8s_logf(api->log, LOG_WARNING, "token file %s cannot be read, %s (%s)",
			         api->conf.token_file,
			         api->token != NULL ? "keeping the previous token" : "sending no token",
			         token_error(ret));
			api->token_log_ms = now_ms;
		}
		api->token_err = ret;
		return false;
	}
	api->token_err = KNOT_EOK;
	bool changed = api->token == NULL || strcmp(api->token, token) != 0;
	api->token_gen += changed ? 1 : 0;
	k8s_secret_free(api->token, api->token != NULL ? strlen(api->token) : 0);
	api->token = token;
	return changed;
}

/*!
 * Makes the URL base and, for a tls_server_name, the CONNECT_TO entry and Host header:
 * libcurl verifies the URL's host, so the URL names tls_server_name and the
 * connection goes to the real host and port.
 */
static int url_setup(k8s_api_t *api)
{
	if (api->conf.tls_server_name == NULL) {
		api->url_base = k8s_url_dup(api->conf.server);
		return (api->url_base != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}

	CURLU *u = curl_url();
	if (u == NULL) {
		return KNOT_ENOMEM;
	}
	char *host = NULL, *port = NULL, *given_port = NULL, *url = NULL, *connect = NULL;
	int ret = KNOT_EINVAL;
	if (curl_url_set(u, CURLUPART_URL, api->conf.server, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		goto done;
	}
	bool has_port = curl_url_get(u, CURLUPART_PORT, &given_port, 0) == CURLUE_OK;

	const char *name = api->conf.tls_server_name;
	char bracketed[300];
	if (strchr(name, ':') != NULL && name[0] != '[') {
		snprintf(bracketed, sizeof(bracketed), "[%s]", name);
		name = bracketed;
	}
	if (curl_url_set(u, CURLUPART_HOST, name, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
		goto done;
	}

	ret = KNOT_ENOMEM;
	if (asprintf(&connect, "%s:%s:%s:%s", name, port, host, port) < 0) {
		connect = NULL;
		goto done;
	}
	if ((api->connect_to = curl_slist_append(NULL, connect)) == NULL) {
		goto done;
	}
	// The Host header is the server's, as client-go sends it with a TLS ServerName.
	int len = has_port ? asprintf(&api->host_header, "Host: %s:%s", host, port)
	                   : asprintf(&api->host_header, "Host: %s", host);
	if (len < 0) {
		api->host_header = NULL;
		goto done;
	}
	if ((api->url_base = k8s_url_dup(url)) == NULL) {
		goto done;
	}
	ret = KNOT_EOK;
done:
	free(connect);
	curl_free(url);
	curl_free(given_port);
	curl_free(port);
	curl_free(host);
	curl_url_cleanup(u);
	return ret;
}

int k8s_api_init(k8s_api_t *api, k8s_apiconf_t *conf, const k8s_log_t *log)
{
	memset(api, 0, sizeof(*api));
	api->conf = *conf;
	memset(conf, 0, sizeof(*conf));
	api->log = log;

	int ret = url_setup(api);
	if (ret != KNOT_EOK) {
		k8s_api_deinit(api);
		return ret;
	}
	if (api->conf.token != NULL && !k8s_token_valid(api->conf.token, strlen(api->conf.token))) {
		k8s_logf(log, LOG_ERR, "static token refused (contains control characters)");
		k8s_api_deinit(api);
		return KNOT_EINVAL;
	}
	if (api->conf.insecure) {
		k8s_logf(log, LOG_WARNING, "the API server's certificate is not verified "
		         "(insecure-skip-tls-verify), anyone on the path can impersonate it");
	}
	if (api->conf.token != NULL) {
		api->token = strdup(api->conf.token);
		if (api->token == NULL) {
			k8s_api_deinit(api);
			return KNOT_ENOMEM;
		}
	}
	// A token file's content wins over a static token (client-go's BearerTokenFile rule).
	// Read time 0: the first request reads it again, which costs one open().
	k8s_api_refresh_token(api, true, 0);
	return KNOT_EOK;
}

void k8s_api_deinit(k8s_api_t *api)
{
	k8s_secret_free(api->token, api->token != NULL ? strlen(api->token) : 0);
	k8s_apiconf_free(&api->conf);
	free(api->url_base);
	free(api->host_header);
	curl_slist_free_all(api->connect_to);
	memset(api, 0, sizeof(*api));
}

void k8s_api_headers_free(struct curl_slist *headers)
{
	for (struct curl_slist *h = headers; h != NULL; h = h->next) {
		explicit_bzero(h->data, strlen(h->data));
	}
	curl_slist_free_all(headers);
}

/*! Appends a header; on failure the list is freed and NULL returned. */
static struct curl_slist *header_add(struct curl_slist *list, const char *header)
{
	struct curl_slist *out = curl_slist_append(list, header);
	if (out == NULL) {
		k8s_api_headers_free(list);
	}
	return out;
}

static struct curl_slist *headers_make(const k8s_api_t *api)
{
	struct curl_slist *list = header_add(NULL, "Accept: application/json");
	if (list != NULL && api->host_header != NULL) {
		list = header_add(list, api->host_header);
	}
	if (list != NULL && api->token != NULL) {
		size_t len = strlen(api->token) + sizeof("Authorization: Bearer ");
		char *auth = malloc(len);
		if (auth == NULL) {
			k8s_api_headers_free(list);
			return NULL;
		}
		snprintf(auth, len, "Authorization: Bearer %s", api->token);
		list = header_add(list, auth);
		explicit_bzero(auth, len);
		free(auth);
	}
	return list;
}

/*! Sets the TLS options: verification, trust anchors and client certificate. */
static CURLcode tls_setup(const k8s_api_t *api, CURL *easy)
{
	const k8s_apiconf_t *c = &api->conf;
	CURLcode rc = CURLE_OK;
	// The blobs live in api->conf, which outlives every transfer: no copies of a key lie around.
	struct curl_blob ca = { c->ca.data, c->ca.len, CURL_BLOB_NOCOPY };
	struct curl_blob cert = { c->cert.data, c->cert.len, CURL_BLOB_NOCOPY };
	struct curl_blob key = { c->key.data, c->key.len, CURL_BLOB_NOCOPY };

	if (c->insecure) {
		rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
		if (rc == CURLE_OK) {
			rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
		}
	} else {
		rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
		if (rc == CURLE_OK) {
			rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
		}
		if (rc == CURLE_OK && c->ca.data != NULL) {
			rc = curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &ca);
		} else if (rc == CURLE_OK && c->ca_file != NULL) {
			rc = curl_easy_setopt(easy, CURLOPT_CAINFO, c->ca_file);
		}
	}

	if (rc == CURLE_OK && c->cert.data != NULL) {
		rc = curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &cert);
	} else if (rc == CURLE_OK && c->cert_file != NULL) {
		rc = curl_easy_setopt(easy, CURLOPT_SSLCERT, c->cert_file);
	}
	if (rc == CURLE_OK && c->key.data != NULL) {
		rc = curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &key);
	} else if (rc == CURLE_OK && c->key_file != NULL) {
		rc = curl_easy_setopt(easy, CURLOPT_SSLKEY, c->key_file);
	}
	if (rc == CURLE_OK && (c->cert.data != NULL || c->cert_file != NULL)) {
		rc = curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
		if (rc == CURLE_OK) {
			rc = curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
		}
	}
	return rc;
}

/*! Sets the options that keep a transfer from hanging and the process from waiting on it. */
static CURLcode limits_setup(CURL *easy, long stall_s, long timeout_s)
{
	CURLcode rc = curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075700
	// Cleanup must not wait for a resolver thread stuck on a dead DNS server.
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L);
	}
#endif
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, (long)KEEPALIVE_IDLE_S);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, (long)KEEPALIVE_INTVL_S);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
	}
	if (rc == CURLE_OK && stall_s > 0) {
		rc = curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
		if (rc == CURLE_OK) {
			rc = curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, stall_s);
		}
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_TIMEOUT, timeout_s);
	}
	return rc;
}

int k8s_api_prepare(k8s_api_t *api, CURL *easy, const char *path_query,
                    struct curl_slist **headers, long stall_s, long timeout_s)
{
	*headers = NULL;
	char *url = NULL;
	if (asprintf(&url, "%s%s", api->url_base, path_query) < 0) {
		return KNOT_ENOMEM;
	}
	struct curl_slist *list = headers_make(api);
	if (list == NULL) {
		free(url);
		return KNOT_ENOMEM;
	}

	// Only the server's own scheme, and no redirects: the token goes nowhere else.
	bool https = strncasecmp(api->url_base, "https:", 6) == 0;
	CURLcode rc = curl_easy_setopt(easy, CURLOPT_URL, url);
	if (rc == CURLE_OK) {
#if LIBCURL_VERSION_NUM >= 0x075500
		rc = curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, https ? "https" : "http");
#else
		rc = curl_easy_setopt(easy, CURLOPT_PROTOCOLS, https ? CURLPROTO_HTTPS : CURLPROTO_HTTP);
#endif
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
	}
	if (rc == CURLE_OK) {
		// Our own agent: the API server pretty-prints bodies for agents named curl.
		rc = curl_easy_setopt(easy, CURLOPT_USERAGENT, K8S_USER_AGENT);
	}
	if (rc == CURLE_OK) {
		rc = curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
	}
	// No CURLOPT_PIPEWAIT: libcurl 8 parks a waiting transfer until the awaited connection
	// multiplexes or a transfer on it ends, and a watch on an HTTP/1.1 connection never
	// ends: a second watcher's streams (a reload) stalled until their timeout (Debian 13's
	// libcurl 8.14). An HTTP/2 connection, once up, is still shared by later transfers.
	if (rc == CURLE_OK && api->connect_to != NULL) {
		rc = curl_easy_setopt(easy, CURLOPT_CONNECT_TO, api->connect_to);
	}
	if (rc == CURLE_OK) {
		rc = tls_setup(api, easy);
	}
	if (rc == CURLE_OK) {
		rc = limits_setup(easy, stall_s, timeout_s);
	}
	free(url);

	if (rc != CURLE_OK) {
		k8s_api_headers_free(list);
		return KNOT_ENOMEM;
	}
	*headers = list;
	return KNOT_EOK;
}

char *k8s_api_escape(const char *in)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(in);
	char *out = malloc(3 * len + 1), *o = out;
	if (out == NULL) {
		return NULL;
	}
	for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
		// RFC 3986 unreserved characters stay; everything else is %XX.
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL) {
			*o++ = *p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0x0f];
		}
	}
	*o = '\0';
	return out;
}
