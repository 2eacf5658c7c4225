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
 * A block's named ports: collected from the service (or import) and its slices,
 * sorted and capped; for a headless service whose endpoints answer their own
 * slices' ports, each endpoint's set, the unions of endpoints listed in several
 * slices, and the distinct sets stored once (k8s_block_t.port_sets).
 */

#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "table/records.h"
#include "table/records_priv.h"

/*! \brief Collects a named port of a slice; duplicates go when the ports are sorted (records_sort_ports()). */
int records_add_port(draft_t *d, const k8s_port_t *port, uint32_t slice)
{
	if (port->name == NULL || port->port == 0) {
		return KNOT_EOK;  // Unnamed ports have no SRV record.
	}
	if (!records_grow((void **)&d->ports, &d->port_cap, d->port_count, sizeof(*d->ports))) {
		return KNOT_ENOMEM;
	}
	d->ports[d->port_count++] = (draft_port_t){ .port = *port, .slice = slice };
	return KNOT_EOK;
}

/*! \brief Order of named ports: (name, protocol) as answers search them, then number. */
static int port_cmp(const k8s_port_t *x, const k8s_port_t *y)
{
	int cmp = strcmp(x->name, y->name);
	if (cmp != 0) {
		return cmp;
	}
	if (x->proto != y->proto) {
		return (x->proto < y->proto) ? -1 : 1;
	}
	return (x->port > y->port) - (x->port < y->port);
}

static int draft_port_cmp(const void *a, const void *b)
{
	return port_cmp(&((const draft_port_t *)a)->port, &((const draft_port_t *)b)->port);
}

/*! \brief Orders drafted ports by (slice, index in the block). */
static int slice_port_cmp(const void *a, const void *b)
{
	const draft_port_t *x = a, *y = b;
	if (x->slice != y->slice) {
		return (x->slice < y->slice) ? -1 : 1;
	}
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*! \brief Appends a list of \a len values to the pool; its offset in \a off. */
static int pool_add(draft_t *d, const uint16_t *values, size_t len, uint32_t *off)
{
	if (d->pool_len > UINT32_MAX - len) {
		return KNOT_ENOMEM;
	}
	while (d->pool_len + len > d->pool_cap) {
		if (!records_grow((void **)&d->pool, &d->pool_cap, d->pool_cap, sizeof(*d->pool))) {
			return KNOT_ENOMEM;
		}
	}
	*off = d->pool_len;
	if (len > 0) {
		memcpy(d->pool + d->pool_len, values, len * sizeof(*values));
	}
	d->pool_len += len;
	return KNOT_EOK;
}

static int list_add(draft_t *d, uint32_t off, size_t len)
{
	if (d->list_count == UINT32_MAX ||
	    !records_grow((void **)&d->lists, &d->list_cap, d->list_count, sizeof(*d->lists))) {
		return KNOT_ENOMEM;
	}
	d->lists[d->list_count++] = (port_list_t){ .off = off, .len = len };
	return KNOT_EOK;
}

/*!
 * \brief Each slice's ports as a list of indices into the block's ports (list i is slice i's).
 *
 * Reorders the drafted ports, whose block indices are set.
 */
static int slice_lists(draft_t *d)
{
	if (d->port_count > 1) {
		qsort(d->ports, d->port_count, sizeof(*d->ports), slice_port_cmp);
	}
	size_t i = 0;
	for (uint32_t slice = 0; slice < d->slice_count; slice++) {
		uint32_t off = d->pool_len;
		size_t len = 0;
		for (; i < d->port_count && d->ports[i].slice == slice; i++) {
			uint32_t idx = d->ports[i].idx;
			if (idx == NO_PORT || (len > 0 && d->pool[off + len - 1] == idx)) {
				continue;  // Capped, or listed twice by the slice.
			}
			uint16_t value = idx;
			uint32_t at;
			if (pool_add(d, &value, 1, &at) != KNOT_EOK) {
				return KNOT_ENOMEM;
			}
			len++;
		}
		if (list_add(d, off, len) != KNOT_EOK) {
			return KNOT_ENOMEM;
		}
	}
	return KNOT_EOK;
}

/*!
 * \brief Sorts the named ports and keeps each (name, protocol, number) once, at most K8S_MAX_PORTS.
 *
 * Slices disagree on a port's number during a rollout: each number is kept,
 * and an endpoint answers the numbers of its own slices (slice_lists()).
 */
int records_sort_ports(draft_t *d)
{
	if (d->port_count > 1) {
		qsort(d->ports, d->port_count, sizeof(*d->ports), draft_port_cmp);
	}
	d->block_ports = malloc((d->port_count > 0 ? d->port_count : 1) * sizeof(*d->block_ports));
	if (d->block_ports == NULL) {
		return KNOT_ENOMEM;
	}
	size_t kept = 0;
	for (size_t i = 0; i < d->port_count; i++) {
		draft_port_t *port = &d->ports[i];
		if (i > 0 && port_cmp(&d->ports[i - 1].port, &port->port) == 0) {
			port->idx = d->ports[i - 1].idx;
			continue;
		}
		if (kept == K8S_MAX_PORTS) {
			port->idx = NO_PORT;
			d->capped++;
			continue;
		}
		port->idx = kept;
		d->block_ports[kept++] = port->port;
	}
	d->block_port_count = kept;
	return d->per_slice_ports ? slice_lists(d) : KNOT_EOK;
}

static int u16_cmp(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
	return (x > y) - (x < y);
}

/*!
 * \brief Gives the same endpoint in several slices (sorted, adjacent) the union of their ports.
 *
 * The same address can be in two slices with different port numbers (a
 * rollout, two versions side by side): it answers both.
 */
int records_union_duplicates(draft_t *d)
{
	uint16_t *merged = NULL;
	size_t merged_cap = 0;
	int ret = KNOT_EOK;
	for (size_t i = 0, end; i < d->ep_count && ret == KNOT_EOK; i = end) {
		bool several = false;
		for (end = i + 1; end < d->ep_count && k8s_block_ent_cmp(&d->eps[i], &d->eps[end]) == 0;
		     end++) {
			several = several || d->eps[end].ports != d->eps[i].ports;
		}
		if (!several) {
			continue;
		}
		size_t len = 0;
		for (size_t j = i; j < end; j++) {
			const port_list_t *list = &d->lists[d->eps[j].ports];
			if (len + list->len > merged_cap) {
				size_t cap = 2 * (len + list->len);
				uint16_t *grown = realloc(merged, cap * sizeof(*merged));
				if (grown == NULL) {
					ret = KNOT_ENOMEM;
					break;
				}
				merged = grown;
				merged_cap = cap;
			}
			if (list->len == 0) {
				continue; // an empty list may have no pool yet (NULL + 0 is undefined)
			}
			memcpy(merged + len, d->pool + list->off, list->len * sizeof(*merged));
			len += list->len;
		}
		if (ret != KNOT_EOK) {
			break;
		}
		if (len > 1) {
			qsort(merged, len, sizeof(*merged), u16_cmp);
		}
		size_t distinct = 0;
		for (size_t j = 0; j < len; j++) {
			if (distinct == 0 || merged[distinct - 1] != merged[j]) {
				merged[distinct++] = merged[j];
			}
		}
		uint32_t off;
		ret = pool_add(d, merged, distinct, &off);
		if (ret == KNOT_EOK) {
			ret = list_add(d, off, distinct);
		}
		for (size_t j = i; j < end && ret == KNOT_EOK; j++) {
			d->eps[j].ports = d->list_count - 1;
		}
	}
	free(merged);
	return ret;
}

/*! \brief An endpoint's port list, to sort by content. */
typedef struct {
	const uint16_t *values;
	uint32_t len;
	uint32_t ep;
} set_key_t;

static int set_key_cmp(const void *a, const void *b)
{
	const set_key_t *x = a, *y = b;
	size_t n = (x->len < y->len) ? x->len : y->len;
	for (size_t i = 0; i < n; i++) {
		if (x->values[i] != y->values[i]) {
			return (x->values[i] < y->values[i]) ? -1 : 1;
		}
	}
	return (x->len > y->len) - (x->len < y->len);
}

/*!
 * \brief Stores the kept endpoints' port sets, each distinct one once (none when all have every port).
 */
int records_intern_port_sets(draft_t *d)
{
	if (!d->per_slice_ports || d->ep_count == 0) {
		return KNOT_EOK;
	}
	set_key_t *keys = malloc(d->ep_count * sizeof(*keys));
	if (keys == NULL) {
		return KNOT_ENOMEM;
	}
	size_t total = 0;
	for (size_t i = 0; i < d->ep_count; i++) {
		const port_list_t *list = &d->lists[d->eps[i].ports];
		// An empty list may have no pool yet (NULL + 0 is undefined).
		const uint16_t *values = (list->len > 0) ? d->pool + list->off : NULL;
		keys[i] = (set_key_t){ .values = values, .len = list->len, .ep = i };
	}
	qsort(keys, d->ep_count, sizeof(*keys), set_key_cmp);
	for (size_t i = 0; i < d->ep_count; i++) {
		if (i == 0 || set_key_cmp(&keys[i - 1], &keys[i]) != 0) {
			total += 1 + keys[i].len;
		}
	}
	// One set of every port (the lists are ascending and distinct): nothing to store.
	const set_key_t *last = &keys[d->ep_count - 1];
	if (keys[0].len == d->block_port_count && set_key_cmp(&keys[0], last) == 0) {
		free(keys);
		return KNOT_EOK;
	}
	d->port_sets = malloc(total * sizeof(*d->port_sets));
	d->ep_ports = malloc(d->ep_count * sizeof(*d->ep_ports));
	if (d->port_sets == NULL || d->ep_ports == NULL || total > UINT32_MAX) {
		free(keys);
		return KNOT_ENOMEM;
	}
	size_t pos = 0, set = 0;
	for (size_t i = 0; i < d->ep_count; i++) {
		if (i == 0 || set_key_cmp(&keys[i - 1], &keys[i]) != 0) {
			set = pos;
			d->port_sets[pos++] = keys[i].len;
			if (keys[i].len > 0) {
				memcpy(d->port_sets + pos, keys[i].values, keys[i].len * sizeof(uint16_t));
				pos += keys[i].len;
			}
		}
		d->ep_ports[keys[i].ep] = set;
	}
	d->port_sets_len = total;
	free(keys);
	return KNOT_EOK;
}
