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
 * \brief A record's text as miekg/dns's NewRR reads it, for the types templates answer:
 * OWNER [TTL] [CLASS] TYPE RDATA, the origin "." (relative names are below the root),
 * 3600 s without a TTL, parentheses and `;` comments; A, AAAA, CNAME, DNAME, NS, PTR,
 * MX, SRV, TXT and SOA. Into the caller's record: no allocation but the rdata in
 * per-query memory.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

/*! \brief A record read from its text. */
typedef struct {
	uint8_t owner[KNOT_DNAME_MAXLEN];
	uint16_t type, rclass;
	uint32_t ttl;
	uint8_t *rdata;             /*!< In per-query memory (NULL without it). */
	uint16_t rdlen;
	char owner_text[1024];      /*!< The owner as written, with a final dot (for response rules). */
} k8s_rrtext_t;

/*! \brief Maps a name of the rdata (a rewrite's response rules): its length in \a out, 0: fails. */
typedef size_t (*k8s_rrtext_map_t)(void *ctx, const char *in, size_t len, char *out, size_t max);

/*!
 * \brief Reads a record's text.
 *
 * \param map  Applied to the names in the rdata (CNAME, PTR, NS, DNAME, MX, SRV targets,
 *             SOA's MNAME), or NULL.
 * \param mm   Where the rdata goes; NULL: only checked.
 * \return KNOT_EOK, KNOT_ENOTSUP for a type not read (\a rr->type set), KNOT_EMALF.
 */
int k8s_rrtext_parse(const char *text, size_t len, k8s_rrtext_map_t map, void *ctx,
                     knot_mm_t *mm, k8s_rrtext_t *rr);

/*! \brief A class mnemonic as miekg's StringToClass has it (case matters). */
int k8s_rrtext_class(const char *s, uint16_t *out);

/*! \brief A class's mnemonic ("" for none). */
const char *k8s_rrtext_class_name(uint16_t c);
