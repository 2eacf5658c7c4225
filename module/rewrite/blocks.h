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
 * \brief CoreDNS's server blocks as the rules see them: each block's zones and its own
 * rewrite rules and templates. CoreDNS hands a query to the one block whose zone is the
 * longest suffix of its name, and only that block's rules apply to it; so here.
 *
 * A value `ZONE[,ZONE...]: WORDS` (a first word that ends with `:`) belongs to the block
 * of those zones; a value without it to the root's (`.`); `ZONE[,ZONE...]:` alone names a
 * block without rules, whose names no other block's rules touch. Rule words never end
 * with `:` (a rule's first word is a keyword, a template's a class), so the prefix is
 * unambiguous. A zone is in one block only, as CoreDNS refuses a zone twice on a port.
 *
 * Read at load; per query one split of the name into labels and a suffix comparison per
 * block zone, longest first (none with the root's block alone), nothing allocated,
 * nothing written.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#include "rewrite/rewrite.h"
#include "rewrite/template.h"

/*! \brief Most server blocks (the root's too) and most zones of all blocks. */
#define K8S_RW_BLOCKS_MAX 32
#define K8S_RW_BLOCK_ZONES_MAX 64

/*! \brief One block's rules. */
typedef struct {
	k8s_rewrite_t *rewrite;         /*!< NULL without rewrite values. */
	k8s_templates_t *templates;     /*!< NULL without template values. */
} k8s_rw_block_t;

typedef struct k8s_rw_blocks k8s_rw_blocks_t;

/*!
 * \brief Reads the values of the options `rewrite` and `template` into their blocks (the
 * templates of a block default to its zones).
 *
 * \return The blocks, or NULL with the reason in \a err.
 */
k8s_rw_blocks_t *k8s_rw_blocks_new(const char *const *rewrites, size_t rewrite_count,
                                   const char *const *templates, size_t template_count,
                                   char *err, size_t err_len);

void k8s_rw_blocks_free(k8s_rw_blocks_t *b);

/*! \brief Number of blocks, the root's included, and of rules and templates in all. */
size_t k8s_rw_blocks_count(const k8s_rw_blocks_t *b, size_t *rules, size_t *templates);

/*!
 * \brief The rules of the block a name is handed to (its zone the longest suffix of
 * \a name, wire, lowercase), or NULL if that block has none.
 */
const k8s_rw_block_t *k8s_rw_blocks_of(const k8s_rw_blocks_t *b, const uint8_t *name);
