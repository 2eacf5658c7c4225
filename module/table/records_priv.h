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
 * \brief Private to the records' files: the draft a block is settled in, shared by
 * records.c (addresses, endpoints, clusters, the block) and records_ports.c (named
 * ports and the endpoints' port sets).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "table/records.h"

/*! \brief A named port while drafting: which slice lists it, and where it goes. */
typedef struct {
	k8s_port_t port;        /*!< Its name points into the objects. */
	uint32_t slice;         /*!< The draft's index of the slice that lists it. */
	uint32_t idx;           /*!< Once sorted: its index in the block's ports, or NO_PORT (capped). */
} draft_port_t;

#define NO_PORT UINT32_MAX

/*! \brief A list of indices into the block's ports, ascending, in the draft's pool. */
typedef struct {
	uint32_t off;
	uint32_t len;
} port_list_t;

/*! \brief A growable array of entries and what else a block needs. */
typedef struct {
	k8s_ip_t *sips;
	size_t sip_count;
	k8s_block_ent_t *eps;       /*!< Cluster: the slice's index while drafting, then the sorted id's;
	                                 ports: the slice's index, then its list's (records_union_duplicates()). */
	size_t ep_count, ep_cap;
	draft_port_t *ports;    /*!< Named ports, duplicates until sorted. */
	size_t port_count, port_cap;
	k8s_port_t *block_ports; /*!< The distinct named ports, in block order (records_sort_ports()). */
	size_t block_port_count;
	bool per_slice_ports;   /*!< Headless with ports from the slices: endpoints get port sets. */
	uint32_t slice_count;   /*!< Slices whose endpoints were kept. */
	port_list_t *lists;     /*!< Per slice its ports, then the unions of endpoints in several slices. */
	size_t list_count, list_cap;
	uint16_t *pool;         /*!< The lists' values. */
	size_t pool_len, pool_cap;
	uint16_t *port_sets;    /*!< The block's distinct port sets (k8s_block_t.port_sets), or NULL. */
	size_t port_sets_len;
	uint32_t *ep_ports;     /*!< With port_sets: per endpoint, the offset of its set. */
	const char **clusters;  /*!< Source cluster id of each slice kept (points into the objects). */
	size_t cluster_count, cluster_cap;
	uint8_t *cluster_wire;  /*!< Distinct cluster ids in wire form, in order, once sorted. */
	size_t cluster_bytes;
	uint32_t ready_count;
	size_t capped;          /*!< Records and ports left out at the caps. */
	const k8s_ip_t *ingress; /*!< Load-balancer IPs (point into the service). */
	size_t ingress_count;
	const char **topos;     /*!< Distinct topology zones of the endpoints (point into the objects). */
	size_t topo_count, topo_cap;
	uint8_t *topo_wire;     /*!< Them in wire form, in order. */
	size_t topo_bytes;
	k8s_ip_t *externals;    /*!< External addresses, each once, in the service's order. */
	size_t external_count;
	size_t external_listed; /*!< The service's, repeats included. */
} draft_t;

/*!
 * \brief Makes room for one more element in a growable array. Here, not in records.c,
 * so that records_ports.c calls nothing of records.c: calls go one way, records.c to
 * records_ports.c.
 */
static inline bool records_grow(void **arr, size_t *cap, size_t count, size_t elem_size)
{
	if (count < *cap) {
		return true;
	}
	size_t cap_new = (*cap > 0) ? 2 * *cap : 16;
	void *arr_new = realloc(*arr, cap_new * elem_size);
	if (arr_new == NULL) {
		return false;
	}
	*arr = arr_new;
	*cap = cap_new;
	return true;
}

/*! \brief Collects a named port of a slice; duplicates go when the ports are sorted. */
int records_add_port(draft_t *d, const k8s_port_t *port, uint32_t slice);

/*!
 * \brief Sorts the named ports in block order, drops duplicates and what passes the cap;
 * with per-slice ports, each slice's list of them.
 */
int records_sort_ports(draft_t *d);

/*! \brief With per-slice ports: an endpoint listed in several slices gets their union. */
int records_union_duplicates(draft_t *d);

/*! \brief With per-slice ports: the distinct sets stored once, per endpoint its set's offset. */
int records_intern_port_sets(draft_t *d);
