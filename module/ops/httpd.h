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
 * - /health: 200 while the process lives and nothing in it that has work is wedged
 *   (liveness.h: the module's threads' heartbeats, knotd's UDP workers reading their
 *   sockets), else 503 with the reason; no DNS query is sent, so a flood that makes
 *   knotd drop queries does not fail it. A lameduck file does not change it (CoreDNS's
 *   health answers 200 through its lameduck too).
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

#include "ops/liveness.h"

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
/*!
 * \brief A /health verdict is reused this long: probes at any rate look at knotd's
 * descriptors at most this often.
 */
#define K8S_HTTPD_HEALTH_CACHE_MS 500

typedef struct {
	struct sockaddr_storage listen;  /*!< Address and port of the endpoint. */
	uint16_t dns_ports[K8S_LIVENESS_PORTS_MAX];  /*!< knotd's UDP listening ports (/health). */
	size_t dns_port_count;
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
