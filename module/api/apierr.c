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

/*
 * The API errors' classes (reflector.h): their names in logs and series, and the class of
 * a transfer libcurl ended without a (complete) answer.
 */

#include "api/reflector.h"

static const char *apierr_names[K8S_APIERR_COUNT] = {
	[K8S_APIERR_NETWORK]      = "network",
	[K8S_APIERR_TLS]          = "tls",
	[K8S_APIERR_TIMEOUT]      = "timeout",
	[K8S_APIERR_UNAUTHORIZED] = "unauthorized",
	[K8S_APIERR_FORBIDDEN]    = "forbidden",
	[K8S_APIERR_NOTFOUND]     = "not-found",
	[K8S_APIERR_GONE]         = "gone",
	[K8S_APIERR_THROTTLED]    = "throttled",
	[K8S_APIERR_SERVER]       = "server",
	[K8S_APIERR_HTTP]         = "http",
	[K8S_APIERR_DECODE]       = "decode",
	[K8S_APIERR_TOO_LARGE]    = "too-large",
};

const char *k8s_apierr_name(k8s_apierr_t err)
{
	return (err >= 0 && err < K8S_APIERR_COUNT) ? apierr_names[err] : "unknown";
}

/*! Error class of a transfer that got no (complete) answer. */
k8s_apierr_t k8s_apierr_of_curl(CURLcode result)
{
	switch (result) {
	case CURLE_OPERATION_TIMEDOUT:
		return K8S_APIERR_TIMEOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CLIENTCERT:
		return K8S_APIERR_TLS;
	default:
		return K8S_APIERR_NETWORK;
	}
}
