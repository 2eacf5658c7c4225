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
 * \brief Records from objects: the block of one service, built aside.
 *
 * A Service and its EndpointSlices (cluster zone), or a ServiceImport and its
 * imported EndpointSlices (clusterset zone), become one k8s_svc_t: service IPs,
 * ready endpoint addresses labelled by hostname (else pod name with
 * endpoint-pod-names, else the dashed address), named ports, prebuilt A and
 * AAAA answers. Slices of a service are merged and their duplicates dropped.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "objects.h"
#include "table.h"

typedef struct {
	bool endpoint_pod_names;  /*!< Label endpoints without hostname by their pod name. */
} k8s_records_conf_t;

/*!
 * \brief Builds the cluster-zone block of a Service.
 *
 * \param svc     The Service.
 * \param slices  Its EndpointSlices (any order; non-IP ones are ignored).
 * \param count   Their number.
 *
 * \return A block to publish with k8s_table_put_svc(), or NULL without memory
 *         or if the names are not DNS labels.
 */
k8s_svc_t *k8s_records_service(const k8s_service_t *svc, const k8s_slice_t *const *slices,
                               size_t count, const k8s_records_conf_t *conf);

/*!
 * \brief Builds the clusterset-zone block of a ServiceImport.
 *
 * ClusterSetIP imports answer their clusterset IPs; headless ones the ready
 * endpoints of every source cluster, named <hostname>.<clusterid>.
 * Slices without a valid source-cluster label are ignored.
 */
k8s_svc_t *k8s_records_import(const k8s_serviceimport_t *imp, const k8s_slice_t *const *slices,
                              size_t count, const k8s_records_conf_t *conf);
