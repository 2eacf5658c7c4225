/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief core/v1 Pod (kind_pod.c).
 */

#pragma once

#include "kinds/kind.h"

/*! \brief core/v1 Pod. */
typedef struct {
	k8s_object_t meta;
	bool live;                 /*!< Pending or Running and not being deleted. */
	bool host_network;         /*!< spec.hostNetwork: its IP is the node's. */
	uint8_t ip_count;          /*!< status.podIPs (else status.podIP). */
	k8s_ip_t ips[2];
} k8s_pod_t;
