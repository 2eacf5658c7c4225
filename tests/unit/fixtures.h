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
 * Builders of slim API objects for unit tests: the shapes the decoder
 * produces, written out by hand so that table, records and answer tests do
 * not depend on JSON.
 */

#pragma once

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/objects.h"

static inline k8s_ip_t fx_ip(const char *text)
{
	k8s_ip_t ip = { 0 };
	if (inet_pton(AF_INET, text, ip.bytes) == 1) {
		ip.family = AF_INET;
	} else if (inet_pton(AF_INET6, text, ip.bytes) == 1) {
		ip.family = AF_INET6;
	}
	return ip;
}

static inline k8s_service_t fx_service(const char *ns, const char *name, k8s_svc_type_t type,
                                       const char *ip1, const char *ip2)
{
	k8s_service_t svc = {
		.meta = { .kind = K8S_SERVICE, .ns = ns, .name = name },
		.type = type,
	};
	if (ip1 != NULL) {
		svc.ips[svc.ip_count++] = fx_ip(ip1);
	}
	if (ip2 != NULL) {
		svc.ips[svc.ip_count++] = fx_ip(ip2);
	}
	return svc;
}

static inline k8s_endpoint_t fx_ep(const char *ip, bool ready, const char *hostname,
                                   const char *target)
{
	k8s_endpoint_t ep = { .ip = fx_ip(ip), .ready = ready, .hostname = hostname,
	                      .target = target };
	return ep;
}

static inline k8s_slice_t fx_slice(const char *ns, const char *name, const char *service,
                                   uint8_t family, const k8s_endpoint_t *eps, uint32_t count,
                                   const k8s_port_t *ports, uint16_t port_count)
{
	k8s_slice_t slice = {
		.meta = { .kind = K8S_ENDPOINTSLICE, .ns = ns, .name = name },
		.service = service,
		.family = family,
		.endpoint_count = count,
		.endpoints = eps,
		.port_count = port_count,
		.ports = ports,
	};
	return slice;
}
