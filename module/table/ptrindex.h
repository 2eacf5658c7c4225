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
 * \brief The record table's PTR index and reverse-zone prefixes; private to table.c and ptrindex.c.
 *
 * The PTR index has one slot per address: the record owning it in a block, or
 * an immutable set of the records owning it, cluster-zone records first.
 * Prefixes count the PTR-owning addresses under them, so that a reverse name
 * above an address is an empty non-terminal. Both change with the blocks, in
 * k8s_table_put_block() and k8s_table_del_block(); k8s_table_ptr() and
 * k8s_table_prefix() (table.h) read them.
 */

#pragma once

#include <stdint.h>

#include "lib/hash.h"
#include "table/table.h"

/*! \brief Hash of an address in the table's indexes (PTR slots, pods): its length tells the family. */
static inline uint32_t k8s_table_ip_hash(uint8_t family, const uint8_t *bytes)
{
	return k8s_hash(bytes, k8s_ip_len(family));
}

/*! \brief Hash of a PTR index slot (a record or a set of them), for k8s_rcuhash_init(). */
uint32_t k8s_ptrindex_hash(const void *elem);

/*!
 * \brief Plans and publishes the PTR index and prefix change of a block replacing another.
 *
 * Either block may be NULL (a new service, a deleted one).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (nothing changed)
 */
int k8s_ptrindex_update(k8s_table_t *t, const k8s_block_t *old, const k8s_block_t *svc);

/*! \brief Frees the PTR index's sets and the prefixes at once; only when no reader can exist. */
void k8s_ptrindex_free(k8s_table_t *t);
