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
 * \brief The stub-zone programming endpoint of the K8S-DNS role, as the design's
 * "stubzone server": POST /federations/<name> with {"nameservers": ["IP", ...]}
 * programs a federation, DELETE /federations/<name> removes it.
 *
 * HTTPS only, and every connection must come with a client certificate that the
 * configured CA signed: the TLS handshake itself requires it and verifies it
 * (gnutls_certificate_verify_peers, for the client-auth purpose), so a client
 * without one is refused before any HTTP is read. One thread of ours drives
 * libmicrohttpd and closes a connection whose request has not arrived whole within
 * K8S_FEDAPI_REQUEST_MS, however steadily it trickles; connections, those per
 * address and those still in their handshake are capped, the oldest handshake
 * giving way to a new one, so that clients without a certificate cannot keep the
 * federation's controller out. Bodies are capped.
 */

#pragma once

#include <stddef.h>
#include <sys/socket.h>

#include "federation/fedfwd.h"
#include "lib/log.h"

/*! Connections served at once; more wait in the listen queue. */
#define K8S_FEDAPI_MAX_CONNECTIONS 256
/*! Connections from one address at once; more are closed at accept. */
#define K8S_FEDAPI_MAX_PER_ADDRESS 8
/*! Connections whose handshake has not verified a certificate; past it the oldest is closed. */
#define K8S_FEDAPI_MAX_UNVERIFIED  192
/*! Milliseconds from accept (or a request's end) to a whole request: handshake, headers, body. */
#define K8S_FEDAPI_REQUEST_MS      5000
/*! Seconds a connection may stay idle while its answer is sent. */
#define K8S_FEDAPI_TIMEOUT_S       10
/*! Bytes of a certificate, key or CA file. */
#define K8S_FEDAPI_MAX_PEM         (1024 * 1024)

typedef struct {
	struct sockaddr_storage listen;  /*!< Address and port to listen on. */
	const char *cert;                /*!< Server certificate chain (PEM file). */
	const char *key;                 /*!< Its private key (PEM file). */
	const char *client_ca;           /*!< CA of the clients' certificates (PEM file). */
} k8s_fedapi_conf_t;

typedef struct k8s_fedapi k8s_fedapi_t;

/*!
 * \brief Reads the certificates and starts serving.
 *
 * \param err  Out: a lowercase reason on failure.
 *
 * \return The server, or NULL.
 */
k8s_fedapi_t *k8s_fedapi_start(const k8s_fedapi_conf_t *conf, k8s_fedfwd_t *fwd,
                               const k8s_log_t *log, char *err, size_t errlen);

/*! \brief Stops serving (waits for the thread) and frees everything. */
void k8s_fedapi_stop(k8s_fedapi_t *api);
