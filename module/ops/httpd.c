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

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <libknot/errcode.h>
#include <microhttpd.h>
#include <urcu/urcu-memb.h>

#include "lib/clock.h"
#include "ops/dnsmetrics.h"
#include "ops/httpd.h"
#include "ops/liveness.h"
#include "lib/mhdconns.h"
#include "lib/mhdthread.h"
#include "ops/metrics.h"
#include "lib/sockaddr.h"
#include "mod-k8s/mod-k8s.h"

typedef struct {
	k8s_httpd_conf_t conf;
	k8s_mhdconns_t conns;         /*!< Open connections: every one capped, none answering. */
	char *lameduck_file;
	time_t started_s;             /*!< A lameduck file older than this is a previous run's. */
	k8s_mhdthread_t mhd;
	k8s_liveness_t liveness;      /*!< What /health follows (the thread's alone). */
	uint64_t health_ms;           /*!< When /health last looked (0: never). */
	bool health_ok;
	char health_why[192];         /*!< Why not, when not. */
	k8s_metrics_out_t page;       /*!< Reused by every scrape (the thread's alone). */
} httpd_t;

static pthread_mutex_t httpd_lock = PTHREAD_MUTEX_INITIALIZER;
static httpd_t *running;
static unsigned refs;

/* /health: the process's threads and knotd's UDP workers, asked nothing (liveness.h). */

/*! \brief The verdict, looked for at most every K8S_HTTPD_HEALTH_CACHE_MS. */
static bool healthy(httpd_t *h)
{
	uint64_t now = k8s_now_ms();
	if (h->health_ms == 0 || now - h->health_ms >= K8S_HTTPD_HEALTH_CACHE_MS) {
		uint64_t asked = k8s_dnsmetrics_clock();
		h->health_ok = k8s_liveness_check(&h->liveness, now, h->health_why,
		                                  sizeof(h->health_why));
		k8s_dnsmetrics_health(asked, h->health_ok);
		h->health_ms = now;
	}
	return h->health_ok;
}

/*! \brief True once a lameduck file newer than the endpoint's start exists. */
static bool lameduck(const httpd_t *h)
{
	struct stat st;
	return h->lameduck_file != NULL && stat(h->lameduck_file, &st) == 0 &&
	       st.st_mtime >= h->started_s;
}

/* The connections: a deadline for each request, and a cap on them all (mhdconns.h). */

/*! \brief Past the cap, the oldest connection of the address holding the most gives way. */
static void notify_connection(void *cls, struct MHD_Connection *connection, void **ctx,
                              enum MHD_ConnectionNotificationCode code)
{
	httpd_t *h = cls;
	if (k8s_mhdconns_notify(&h->conns, connection, ctx, code) != NULL) {
		(void)k8s_mhdconns_make_room(&h->conns);
	}
}

static void completed(void *cls, struct MHD_Connection *connection, void **state,
                      enum MHD_RequestTerminationCode code)
{
	k8s_mhdconns_completed(connection);
}

/*!
 * Closes every connection not answered whole (request line, headers and the answer
 * sent) within K8S_HTTPD_REQUEST_MS of its accept or of its previous answer, however
 * steadily it trickles; returns the ms until the next such deadline. The serving
 * thread's tick (k8s_mhdthread_tick_t).
 */
static int64_t conns_expire(void *arg, uint64_t now)
{
	httpd_t *h = arg;
	return k8s_mhdconns_expire(&h->conns, now, NULL);
}

/* The requests. */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type,
                             const char *text, size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)text,
	                                                            MHD_RESPMEM_MUST_COPY);
	if (resp == NULL) {
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *text)
{
	return reply(conn, code, "text/plain; charset=utf-8", text, strlen(text));
}

static enum MHD_Result metrics(httpd_t *h, struct MHD_Connection *conn)
{
	k8s_buf_reset(&h->page.buf, K8S_METRICS_MAX_PAGE);
	h->page.failed = false;
	if (k8s_metrics_render(&h->page, lameduck(h)) != KNOT_EOK) {
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics not rendered\n");
	}
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
	             h->page.buf.data != NULL ? h->page.buf.data : "", h->page.buf.len);
}

static enum MHD_Result ready(httpd_t *h, struct MHD_Connection *conn)
{
	if (lameduck(h)) {
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready (lameduck)\n");
	}
	char why[128] = "";
	if (!k8s_metrics_ready(why, sizeof(why))) {
		char text[192];
		snprintf(text, sizeof(text), "not ready (%s)\n", why);
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text);
	}
	return reply_text(conn, MHD_HTTP_OK, "OK\n");
}

static enum MHD_Result health(httpd_t *h, struct MHD_Connection *conn)
{
	if (healthy(h)) {
		return reply_text(conn, MHD_HTTP_OK, "OK\n");
	}
	char text[sizeof(h->health_why) + 32];
	snprintf(text, sizeof(text), "not alive (%s)\n", h->health_why);
	return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text);
}

/*!
 * \brief Answers at the first call: a GET carries no body to wait for, and another
 * method is refused before its body is read (libmicrohttpd closes the connection).
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size, void **state)
{
	httpd_t *h = cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	}
	if (strcmp(url, MOD_K8S_PATH_METRICS) == 0) {
		return metrics(h, conn);
	} else if (strcmp(url, MOD_K8S_PATH_HEALTH) == 0) {
		return health(h, conn);
	} else if (strcmp(url, MOD_K8S_PATH_READY) == 0) {
		return ready(h, conn);
	}
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "no such path (/metrics, /health, /ready)\n");
}

/*! \brief The serving thread is registered with liburcu (for /ready). */
static void rcu_thread(bool starting)
{
	if (starting) {
		urcu_memb_register_thread();
	} else {
		urcu_memb_unregister_thread();
	}
}

static void httpd_free(httpd_t *h)
{
	k8s_mhdthread_stop(&h->mhd);
	k8s_buf_free(&h->page.buf);
	free(h->lameduck_file);
	free(h);
}

static httpd_t *httpd_start(const k8s_httpd_conf_t *conf, char *err, size_t errlen)
{
	httpd_t *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "no memory");
		return NULL;
	}
	h->conf = *conf;
	for (size_t i = 0; i < conf->dns_port_count; i++) {
		k8s_liveness_add_port(&h->liveness, conf->dns_ports[i]);
	}
	k8s_mhdconns_init(&h->conns, K8S_HTTPD_MAX_CONNECTIONS, K8S_MHDCONNS_OLDEST_OF_MOST,
	                  K8S_HTTPD_REQUEST_MS);
	h->started_s = time(NULL);
	if (conf->lameduck_file != NULL && (h->lameduck_file = strdup(conf->lameduck_file)) == NULL) {
		snprintf(err, errlen, "no memory");
		httpd_free(h);
		return NULL;
	}
	h->conf.lameduck_file = NULL;
	uint16_t port;
	struct sockaddr_storage listen;
	unsigned flags = k8s_mhdthread_flags(&conf->listen, &listen, &port);
	struct MHD_Daemon *daemon = MHD_start_daemon(flags, port, NULL, NULL, handle, h,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&listen,
		// A restarted knotd binds at once while the old one's connections linger.
		MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
		// Our cap is enforced at accept (k8s_mhdconns_make_room()): libmicrohttpd's own,
		// with room for the connections given way, never stops accepting the probes.
		MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)(K8S_HTTPD_MAX_CONNECTIONS + K8S_HTTPD_SPARE_CONNECTIONS),
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)K8S_HTTPD_MAX_PER_ADDRESS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)K8S_HTTPD_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)K8S_HTTPD_MAX_REQUEST,
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
		MHD_OPTION_NOTIFY_COMPLETED, completed, h,
		MHD_OPTION_END);
	if (daemon == NULL) {
		snprintf(err, errlen, "cannot listen (%s)", strerror(errno));
		httpd_free(h);
		return NULL;
	}
	// Never logs (see httpd.h): no log for the thread. Its tick enforces the deadlines.
	if (!k8s_mhdthread_start(&h->mhd, daemon, conns_expire, rcu_thread, h, NULL,
	                         "metrics endpoint")) {
		snprintf(err, errlen, "cannot start the serving thread");
		httpd_free(h);
		return NULL;
	}
	return h;
}

int k8s_httpd_acquire(const k8s_httpd_conf_t *conf, bool *shared, char *err, size_t errlen)
{
	pthread_mutex_lock(&httpd_lock);
	*shared = false;
	if (running == NULL) {
		running = httpd_start(conf, err, errlen);
		if (running == NULL) {
			pthread_mutex_unlock(&httpd_lock);
			return KNOT_ERROR;
		}
	} else {
		*shared = !k8s_sockaddr_equal(&running->conf.listen, &conf->listen);
	}
	refs++;
	pthread_mutex_unlock(&httpd_lock);
	return KNOT_EOK;
}

void k8s_httpd_release(void)
{
	pthread_mutex_lock(&httpd_lock);
	httpd_t *stop = NULL;
	if (refs > 0 && --refs == 0) {
		stop = running;
		running = NULL;
	}
	pthread_mutex_unlock(&httpd_lock);
	if (stop != NULL) {
		httpd_free(stop);
	}
}
