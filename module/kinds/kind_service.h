/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief core/v1 Service (kind_service.c).
 */

#pragma once

#include "kinds/kind.h"

typedef enum {
	K8S_SVC_CLUSTERIP = 0,  /*!< ClusterIP, NodePort or LoadBalancer with a cluster IP. */
	K8S_SVC_HEADLESS,       /*!< clusterIP "None". */
	K8S_SVC_EXTERNALNAME,   /*!< type ExternalName. */
} k8s_svc_type_t;

/*! \brief Most load-balancer ingress IPs kept per Service (one per family in practice). */
#define K8S_INGRESS_MAX 2

/*! \brief Most external addresses kept per Service (k8s_external's): the rest are left out. */
#define K8S_EXTERNAL_MAX 64

/*! \brief core/v1 Service. */
typedef struct {
	k8s_object_t meta;
	uint8_t type;              /*!< k8s_svc_type_t. */
	bool publish_not_ready;    /*!< spec.publishNotReadyAddresses or the tolerate-unready annotation. */
	uint8_t ip_count;          /*!< Valid cluster IPs (spec.clusterIPs, else spec.clusterIP). */
	k8s_ip_t ips[2];
	uint8_t ingress_count;     /*!< status.loadBalancer.ingress[].ip, the first K8S_INGRESS_MAX. */
	k8s_ip_t ingress[2];       /*!< External addresses (Federated-DNS); hostname ingress is left out. */
	const char *external_name; /*!< Lowercase target without trailing dot, or NULL. */
	uint16_t port_count;
	const k8s_port_t *ports;
	uint8_t external_count;    /*!< spec.externalIPs, then status.loadBalancer.ingress[].ip:
	                                CoreDNS's ExternalIPs (k8s_external), valid ones, in order,
	                                the first K8S_EXTERNAL_MAX; hostname ingress left out. */
	const k8s_ip_t *externals; /*!< NULL without any. */
} k8s_service_t;
