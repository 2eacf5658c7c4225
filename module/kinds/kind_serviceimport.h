/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief multicluster.x-k8s.io ServiceImport (kind_serviceimport.c).
 */

#pragma once

#include "kinds/kind.h"

/*!
 * \brief multicluster.x-k8s.io ServiceImport (v1alpha1 or v1beta1).
 *
 * Its name is a DNS subdomain, as the API server checks a custom resource's; only
 * one that is a DNS label names records (store.c).
 */
typedef struct {
	k8s_object_t meta;
	bool headless;             /*!< spec.type Headless, else ClusterSetIP. */
	uint8_t ip_count;          /*!< spec.ips. */
	k8s_ip_t ips[2];
	uint16_t port_count;
	const k8s_port_t *ports;
	uint16_t cluster_count;    /*!< status.clusters: the clusters exporting the service. */
	const char *const *clusters; /*!< Their ids (one or two DNS labels, lowercase). */
} k8s_serviceimport_t;
