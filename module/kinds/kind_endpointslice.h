/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief discovery.k8s.io/v1 EndpointSlice, cluster-local or imported (kind_endpointslice.c).
 */

#pragma once

#include "kinds/kind.h"

/*! \brief One address of an EndpointSlice endpoint (multi-address endpoints are flattened). */
typedef struct {
	k8s_ip_t ip;
	bool ready;                /*!< conditions.ready; absent means ready. */
	const char *hostname;      /*!< Valid DNS label or NULL. */
	const char *target;        /*!< targetRef.name of a Pod, valid label below 64 chars, or NULL. */
	const char *zone;          /*!< zone (topology), lowercase, when a DNS name (dot-separated
	                                labels of at most 63 bytes: a query can name it), or NULL. */
} k8s_endpoint_t;

/*! \brief discovery.k8s.io/v1 EndpointSlice (cluster-local or imported). */
typedef struct {
	k8s_object_t meta;
	const char *service;         /*!< Label kubernetes.io/service-name, or NULL. */
	const char *mcs_service;     /*!< Label multicluster.kubernetes.io/service-name, or NULL. */
	const char *source_cluster;  /*!< Label multicluster.kubernetes.io/source-cluster, or NULL. */
	uint8_t family;              /*!< AF_INET, AF_INET6, or 0 for FQDN and unknown types. */
	int64_t trigger_time_ns;     /*!< endpoints.kubernetes.io/last-change-trigger-time (Unix ns), 0 if absent. */
	uint32_t endpoint_count;
	const k8s_endpoint_t *endpoints;
	uint16_t port_count;
	const k8s_port_t *ports;     /*!< Target ports; port 0 means "all ports" and gets no SRV. */
	/*! The first targetRef name of a Pod that is a valid pod name (a DNS subdomain) but no
	 *  DNS label (over 63 bytes, or dotted), for a log line; NULL if none. Not in the digest. */
	const char *unlabelled_pod;
} k8s_slice_t;
