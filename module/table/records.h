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
 * imported EndpointSlices (clusterset zone), become one block (k8s_block_t,
 * laid out by block.c): service IPs, ready endpoint addresses labelled by
 * hostname (else pod name with endpoint-pod-names, else the dashed address),
 * named ports, prebuilt A and AAAA answers. Slices of a service are merged and
 * their duplicates dropped; a headless service's endpoints keep the ports of
 * their own slices (block.h, Ports). What passes the caps below is left out
 * and counted in the block's capped.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/block.h"
#include "kinds/objects.h"

/*!
 * \brief Most A records one name holds (the service name, or an endpoint name).
 *
 * An A record with its owner compressed takes 16 bytes: 4000 of them fill a
 * 65535-byte message but for room for any question and an OPT record. More
 * could never be sent; the lowest addresses are kept.
 */
#define K8S_MAX_A_PER_NAME 4000

/*! \brief Most AAAA records one name holds: 2300 x 28 bytes, as for K8S_MAX_A_PER_NAME. */
#define K8S_MAX_AAAA_PER_NAME 2300

/*! \brief Most named ports (name, protocol, number) of a service: counted in 16 bits. */
#define K8S_MAX_PORTS UINT16_MAX

/*! \brief Most source clusters of a headless ServiceImport: counted in 16 bits. */
#define K8S_MAX_CLUSTERS UINT16_MAX

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
 * \return A block (block.h) to publish with k8s_table_put_block(), or NULL without memory
 *         or if the names are not DNS labels.
 */
k8s_block_t *k8s_records_service(const k8s_service_t *svc, const k8s_slice_t *const *slices,
                               size_t count, const k8s_records_conf_t *conf);

/*!
 * \brief True if an ExternalName service's target is a literal IP (written to \a ip).
 *
 * Such a service answers the address, as kube-dns did, not a CNAME.
 */
bool k8s_records_external_ip(const k8s_service_t *svc, k8s_ip_t *ip);

/*!
 * \brief Builds the clusterset-zone block of a ServiceImport.
 *
 * ClusterSetIP imports answer their clusterset IPs; headless ones the ready
 * endpoints of every source cluster, named <hostname>.<clusterid>.
 * Slices without a valid source-cluster label are ignored.
 */
k8s_block_t *k8s_records_import(const k8s_serviceimport_t *imp, const k8s_slice_t *const *slices,
                              size_t count, const k8s_records_conf_t *conf);
