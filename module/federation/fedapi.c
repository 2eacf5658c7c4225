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


#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <urcu/compiler.h>

#include "lib/clock.h"
#include "federation/fedapi.h"
#include "lib/mhdconns.h"
#include "lib/mhdthread.h"
#include "mod-k8s/mod-k8s.h"

#define PATH_PREFIX    MOD_K8S_FEDAPI_PATH
#define LOG_EVERY_MS   (60 * 1000)  /*!< One line of each kind about clients at most this often. */

struct k8s_fedapi {
	k8s_mhdthread_t mhd;
	k8s_fedfwd_t *fwd;
	k8s_log_t log;
	char *cert;
	char *key;
	size_t key_len;
	char *ca;
	k8s_mhdconns_t conns;        /*!< Open connections: capped until their handshake verifies. */
	uint64_t refused_logged_ms;
	uint64_t closed_logged_ms;
	uint64_t evicted_logged_ms;
};

/*! \brief One request: its verdict on the client and its body so far. */
typedef struct {
	bool verified;
	bool too_large;
	size_t len;
	char body[K8S_FEDSTUB_MAX_BODY + 1];
} request_t;

/*! \brief Reads a PEM file of at most K8S_FEDAPI_MAX_PEM bytes, NUL-terminated. */
static char *pem_read(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s (%s)", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	char *data = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > K8S_FEDAPI_MAX_PEM ||
	    (data = malloc(st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "cannot read %s (not a file, too large or no memory)", path);
		close(fd);
		return NULL;
	}
	size_t done = 0;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, data + done, st.st_size - done);
		if (n <= 0) {
			snprintf(err, errlen, "cannot read %s", path);
			close(fd);
			free(data);
			return NULL;
		}
		done += n;
	}
	close(fd);
	data[done] = '\0';
	if (len != NULL) {
		*len = done;
	}
	return data;
}

/*! \brief True if the TLS peer presented a certificate that the client CA verifies. */
static bool session_verified(gnutls_session_t session)
{
	unsigned count = 0;
	if (gnutls_certificate_get_peers(session, &count) == NULL || count == 0) {
		return false;
	}
	// Signed by the client CA, in its validity period, and (if it says) for client use.
	gnutls_typed_vdata_st purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
	};
	unsigned status = 0;
	return gnutls_certificate_verify_peers(session, &purpose, 1, &status) == GNUTLS_E_SUCCESS &&
	       status == 0;
}

static bool client_verified(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return info != NULL && info->tls_session != NULL && session_verified(info->tls_session);
}

/*! \brief True (and the time noted) if a line of its kind was not logged a minute before. */
static bool log_due(uint64_t *logged_ms)
{
	uint64_t now = k8s_now_ms();
	if (*logged_ms != 0 && now - *logged_ms < LOG_EVERY_MS) {
		return false;
	}
	*logged_ms = now;
	return true;
}

/*!
 * The handshake's own check (gnutls_session_set_verify_function): a client without a
 * certificate the client CA verifies fails the handshake, before any HTTP is read.
 */
static int handshake_verify(gnutls_session_t session)
{
	struct MHD_Connection *connection = gnutls_session_get_ptr(session);
	k8s_mhdconn_t *c = (connection != NULL) ? k8s_mhdconn_of(connection) : NULL;
	if (c == NULL) {
		return -1;
	}
	if (!session_verified(session)) {
		k8s_fedapi_t *api = caa_container_of(c->set, k8s_fedapi_t, conns);
		if (log_due(&api->refused_logged_ms)) {
			k8s_logf(&api->log, LOG_WARNING, "federations, refused a client at the TLS "
			         "handshake (no client certificate the client CA verifies)");
		}
		return -1;
	}
	k8s_mhdconn_uncap(c);
	return 0;
}

static void conn_started(k8s_fedapi_t *api, struct MHD_Connection *connection,
                         k8s_mhdconn_t *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t session = (info != NULL) ? info->tls_session : NULL;
	if (session == NULL) {
		// Cannot be checked: refused.
		k8s_mhdconn_close(c);
		return;
	}

	// The certificate is checked in the handshake itself, which fails without one (asked
	// for, not required, so that our check runs and says so in the log).
	gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
	gnutls_session_set_verify_function(session, handshake_verify);

	// Past the cap of handshakes in progress the oldest gives way: clients that cannot
	// complete one cannot keep the controller out, however many addresses they have.
	if (k8s_mhdconns_make_room(&api->conns) > 0 && log_due(&api->evicted_logged_ms)) {
		k8s_logf(&api->log, LOG_NOTICE, "federations, closed the oldest connection "
		         "in its TLS handshake (%u handshakes in progress)",
		         (unsigned)K8S_FEDAPI_MAX_UNVERIFIED);
	}
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **ctx,
                              enum MHD_ConnectionNotificationCode code)
{
	k8s_fedapi_t *api = cls;
	k8s_mhdconn_t *c = k8s_mhdconns_notify(&api->conns, connection, ctx, code);
	if (c != NULL) {
		conn_started(api, connection, c);
	}
}

/*!
 * Closes every connection whose request has not arrived whole (TLS handshake, headers
 * and body) within K8S_FEDAPI_REQUEST_MS of its accept or of the previous request's
 * end, however steadily it trickles; returns the ms until the next such deadline.
 * The serving thread's tick (k8s_mhdthread_tick_t).
 */
static int64_t conns_expire(void *arg, uint64_t now)
{
	k8s_fedapi_t *api = arg;
	size_t closed = 0;
	int64_t next = k8s_mhdconns_expire(&api->conns, now, &closed);
	if (closed > 0 && log_due(&api->closed_logged_ms)) {
		k8s_logf(&api->log, LOG_NOTICE, "federations, closed %zu connections (no whole "
		         "request within %u ms)", closed, (unsigned)K8S_FEDAPI_REQUEST_MS);
	}
	return next;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
	char text[512];
	va_list args;
	va_start(args, fmt);
	int len = vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	if (len < 0 || (size_t)len >= sizeof(text)) {
		len = snprintf(text, sizeof(text), "{}\n");
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, text,
	                                                            MHD_RESPMEM_MUST_COPY);
	if (resp == NULL) {
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	enum MHD_Result ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*! \brief A reason as a JSON string's contents: what our parsers write is plain, but be sure. */
static void json_safe(char *text)
{
	for (char *c = text; *c != '\0'; c++) {
		if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) {
			*c = '\'';
		}
	}
}

static enum MHD_Result program(k8s_fedapi_t *api, struct MHD_Connection *conn,
                               const char *method, const uint8_t *name, const request_t *req)
{
	char text[64];
	memcpy(text, name + 1, name[0]);
	text[name[0]] = '\0';

	if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0) {
		int ret = k8s_fedfwd_program(api->fwd, name, NULL);
		if (ret == KNOT_ENOENT) {
			return reply(conn, MHD_HTTP_NOT_FOUND,
			             "{\"error\": \"federation %s is not programmed\"}\n", text);
		} else if (ret != KNOT_EOK) {
			k8s_logf(&api->log, LOG_ERR, "federations, cannot delete %s (%s)", text,
			         knot_strerror(ret));
			return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			             "{\"error\": \"not deleted\"}\n");
		}
		k8s_logf(&api->log, LOG_NOTICE, "federations, deleted %s", text);
		return reply(conn, MHD_HTTP_OK, "{\"deleted\": \"%s\"}\n", text);
	}

	if (req->too_large) {
		return reply(conn, MHD_HTTP_CONTENT_TOO_LARGE,
		             "{\"error\": \"body larger than %d bytes\"}\n", K8S_FEDSTUB_MAX_BODY);
	}
	k8s_fedstub_t fed = { 0 };
	char err[160] = "";
	int ret = k8s_fedstub_body(req->body, req->len, &fed, err, sizeof(err));
	if (ret == KNOT_ENOMEM) {
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"error\": \"no memory\"}\n");
	} else if (ret != KNOT_EOK) {
		json_safe(err);
		return reply(conn, MHD_HTTP_BAD_REQUEST, "{\"error\": \"%s\"}\n", err);
	}
	ret = k8s_fedfwd_program(api->fwd, name, &fed);
	if (ret == KNOT_ELIMIT) {
		return reply(conn, MHD_HTTP_CONFLICT,
		             "{\"error\": \"%d federations programmed already\"}\n",
		             K8S_FEDSTUB_MAX_FEDS);
	} else if (ret != KNOT_EOK) {
		k8s_logf(&api->log, LOG_ERR, "federations, cannot program %s (%s)", text,
		         knot_strerror(ret));
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"error\": \"not programmed\"}\n");
	}
	char list[K8S_FEDSTUB_MAX_NS * 60] = "";
	size_t pos = 0;
	for (size_t i = 0; i < fed.count; i++) {
		char addr[64];
		k8s_sockaddr_text(&fed.ns[i], addr, sizeof(addr));
		pos += snprintf(list + pos, sizeof(list) - pos, "%s\"%s\"", i > 0 ? ", " : "", addr);
	}
	k8s_logf(&api->log, LOG_NOTICE, "federations, programmed %s (%zu nameservers)", text,
	         fed.count);
	return reply(conn, MHD_HTTP_OK, "{\"federation\": \"%s\", \"nameservers\": [%s]}\n",
	             text, list);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size, void **state)
{
	k8s_fedapi_t *api = cls;
	request_t *req = *state;
	if (req == NULL) {
		// The handshake verified the client; checked again before its body is read.
		req = calloc(1, sizeof(*req));
		if (req == NULL) {
			return MHD_NO;
		}
		req->verified = client_verified(conn);
		*state = req;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (req->verified && !req->too_large) {
			if (*upload_data_size > K8S_FEDSTUB_MAX_BODY - req->len) {
				req->too_large = true;
			} else {
				memcpy(req->body + req->len, upload_data, *upload_data_size);
				req->len += *upload_data_size;
			}
		}
		*upload_data_size = 0;
		return MHD_YES;
	}

	// The whole request is in: its answer is not bound by the request's deadline.
	k8s_mhdconn_t *c = k8s_mhdconn_of(conn);
	if (c != NULL) {
		c->answering = true;
	}
	if (!req->verified) {
		if (log_due(&api->refused_logged_ms)) {
			k8s_logf(&api->log, LOG_WARNING, "federations, refused a request "
			         "(no client certificate the client CA verifies)");
		}
		return reply(conn, MHD_HTTP_FORBIDDEN,
		             "{\"error\": \"a client certificate of the configured CA is required\"}\n");
	}
	bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	bool delete = strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;
	size_t prefix = strlen(PATH_PREFIX);
	if (strncmp(url, PATH_PREFIX, prefix) != 0) {
		return reply(conn, MHD_HTTP_NOT_FOUND, "{\"error\": \"no such path\"}\n");
	}
	if (!post && !delete) {
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		             "{\"error\": \"only POST and DELETE\"}\n");
	}
	uint8_t name[64];
	if (k8s_fedstub_name(url + prefix, strlen(url + prefix), name) != KNOT_EOK) {
		return reply(conn, MHD_HTTP_BAD_REQUEST,
		             "{\"error\": \"the federation's name is no lowercase DNS label\"}\n");
	}
	return program(api, conn, method, name, req);
}

static void completed(void *cls, struct MHD_Connection *conn, void **state,
                      enum MHD_RequestTerminationCode code)
{
	free(*state);
	*state = NULL;
	k8s_mhdconns_completed(conn);
}

static void mhd_log(void *cls, const char *fmt, va_list args)
{
	k8s_fedapi_t *api = cls;
	char text[256];
	vsnprintf(text, sizeof(text), fmt, args);
	size_t len = strlen(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '.')) {
		text[--len] = '\0';
	}
	k8s_logf(&api->log, LOG_DEBUG, "federations api, libmicrohttpd (%s)", text);
}

void k8s_fedapi_stop(k8s_fedapi_t *api)
{
	if (api == NULL) {
		return;
	}
	k8s_mhdthread_stop(&api->mhd);
	free(api->cert);
	if (api->key != NULL) {
		explicit_bzero(api->key, api->key_len);
		free(api->key);
	}
	free(api->ca);
	free(api);
}

k8s_fedapi_t *k8s_fedapi_start(const k8s_fedapi_conf_t *conf, k8s_fedfwd_t *fwd,
                               const k8s_log_t *log, char *err, size_t errlen)
{
	k8s_fedapi_t *api = calloc(1, sizeof(*api));
	if (api == NULL) {
		snprintf(err, errlen, "no memory");
		return NULL;
	}
	k8s_mhdconns_init(&api->conns, K8S_FEDAPI_MAX_UNVERIFIED, K8S_MHDCONNS_OLDEST,
	                  K8S_FEDAPI_REQUEST_MS);
	api->fwd = fwd;
	if (log != NULL) {
		api->log = *log;
	}
	api->cert = pem_read(conf->cert, NULL, err, errlen);
	api->key = (api->cert != NULL) ? pem_read(conf->key, &api->key_len, err, errlen) : NULL;
	api->ca = (api->key != NULL) ? pem_read(conf->client_ca, NULL, err, errlen) : NULL;
	if (api->ca == NULL) {
		k8s_fedapi_stop(api);
		return NULL;
	}
	// Driven by a thread of ours, which also enforces the requests' deadline (its tick).
	uint16_t port;
	struct sockaddr_storage listen;
	unsigned flags = k8s_mhdthread_flags(&conf->listen, &listen, &port) | MHD_USE_TLS |
	                 MHD_USE_ERROR_LOG;
	struct MHD_Daemon *daemon = MHD_start_daemon(flags, port, NULL, NULL, handle, api,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, api,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&listen,
		// A reload loads the zone's new module before the old one lets the port go.
		MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
		MHD_OPTION_HTTPS_MEM_CERT, api->cert,
		MHD_OPTION_HTTPS_MEM_KEY, api->key,
		MHD_OPTION_HTTPS_MEM_TRUST, api->ca,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)K8S_FEDAPI_MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)K8S_FEDAPI_MAX_PER_ADDRESS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)K8S_FEDAPI_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, api,
		MHD_OPTION_NOTIFY_COMPLETED, completed, api,
		MHD_OPTION_END);
	if (daemon == NULL) {
		snprintf(err, errlen, "cannot listen or load the certificates");
		k8s_fedapi_stop(api);
		return NULL;
	}
	if (!k8s_mhdthread_start(&api->mhd, daemon, conns_expire, NULL, api, &api->log,
	                         "federation endpoint")) {
		snprintf(err, errlen, "cannot start the serving thread");
		k8s_fedapi_stop(api);
		return NULL;
	}
	return api;
}
