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
 * \brief The process's operations endpoint (option metrics-listen), as CoreDNS's
 * prometheus, health and ready plugins: plain HTTP, GET only, three paths.
 *
 * - /metrics: k8s_metrics_render() in Prometheus's text format.
 * - /health: 200 if knotd answered a UDP query sent to its own listener within
 *   K8S_HTTPD_HEALTH_MS (any response code: the workers are alive), else 503.
 * - /ready: 200 if every zone answers (k8s_metrics_ready()) and no lameduck file
 *   newer than the endpoint's start exists, else 503 with the reason.
 *
 * One endpoint per process however many zones set the option: the first zone
 * that acquires it starts it, every zone that sets the option holds a reference,
 * the last release stops it. A reload loads the new zones before it unloads the
 * old ones, so the endpoint and its port stay up across a reload. A zone asking
 * for another address while it runs shares the running one (k8s_httpd_acquire()
 * says so). The endpoint's thread drives libmicrohttpd and never logs: its owner
 * zone may be unloaded while other zones keep it.
 *
 * Clients that hold connections cannot keep the kubelet's probes out, however many
 * addresses they have: a connection must be answered within K8S_HTTPD_REQUEST_MS of its
 * accept (or of its previous answer), however steadily it trickles; and past
 * K8S_HTTPD_MAX_CONNECTIONS a new connection makes one give way, the oldest of the
 * address that holds the most (k8s_mhdconns_victim()), never the new one. A probe's
 * request arrives whole at once and is answered at once, long before its connection
 * could be the oldest.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*! \brief Connections served at once; past it one gives way to the new (k8s_mhdconns_victim()). */
#define K8S_HTTPD_MAX_CONNECTIONS 32
/*! \brief Connections closed by us that libmicrohttpd has yet to reap (beyond the cap). */
#define K8S_HTTPD_SPARE_CONNECTIONS 16
/*! \brief Connections from one address at once; more are closed at accept. */
#define K8S_HTTPD_MAX_PER_ADDRESS 8
/*! \brief Milliseconds from accept (or an answer's end) to the next answer sent, whole. */
#define K8S_HTTPD_REQUEST_MS 5000
/*! \brief Seconds a connection may stay idle (a net under K8S_HTTPD_REQUEST_MS). */
#define K8S_HTTPD_TIMEOUT_S 5
/*! \brief Bytes of a request's line and headers (libmicrohttpd's connection memory). */
#define K8S_HTTPD_MAX_REQUEST 8192
/*! \brief /health's deadline for knotd's answer. */
#define K8S_HTTPD_HEALTH_MS 1000
/*! \brief A /health result is reused this long: probes at any rate send a query at most this often. */
#define K8S_HTTPD_HEALTH_CACHE_MS 500

typedef struct {
	struct sockaddr_storage listen;  /*!< Address and port of the endpoint. */
	struct sockaddr_storage dns;     /*!< knotd's UDP listener that /health queries (AF_UNSPEC: none). */
	uint8_t probe_name[256];         /*!< /health's query name (wire format). */
	uint16_t probe_type;             /*!< ...and type. */
	const char *lameduck_file;       /*!< Its appearance turns /ready to 503; or NULL. */
} k8s_httpd_conf_t;

/*!
 * \brief Takes a reference to the process's endpoint, starting it if none runs.
 *
 * \param shared  Out: true if it ran already, on another address (the running one is kept).
 * \param err     Out: a lowercase reason on failure.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM, KNOT_ERROR (cannot listen; no reference is held)
 */
int k8s_httpd_acquire(const k8s_httpd_conf_t *conf, bool *shared, char *err, size_t errlen);

/*! \brief Drops a reference; the last one stops the endpoint (waits for its thread). */
void k8s_httpd_release(void);

/*!
 * \brief Builds the DNS query /health sends (\a id, RD clear) into \a wire.
 *
 * \return Its length, or 0 if \a name does not fit.
 */
size_t k8s_httpd_probe_query(const uint8_t *name, uint16_t type, uint16_t id,
                             uint8_t *wire, size_t size);

/*! \brief True if \a wire is a response to the query of \a id (any response code). */
bool k8s_httpd_probe_answered(const uint8_t *wire, size_t len, uint16_t id);
