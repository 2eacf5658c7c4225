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
 * \brief CoreDNS's rewrite plugin: its rules, read from CoreDNS's own syntax, applied
 * to a query's name, type and class in the order CoreDNS applies them (every rule in
 * turn, `stop`, the default, ends the walk at the first rule that rewrites), and the
 * response rules they leave (names mapped back, TTLs clamped, RCODEs replaced),
 * applied to each record in the reverse order, as CoreDNS's ResponseReverter does.
 *
 * Forms: `name exact|prefix|suffix|substring|regex FROM TO [answer auto|answer name
 * FROM TO]...`, `type FROM TO`, `class FROM TO`, `ttl [MATCH] NAME TTL|MIN-MAX`,
 * `rcode [MATCH] NAME FROM TO`, each after an optional `stop` or `continue`, the
 * block form `stop { ... }` read as CoreDNS reads it (the block's words are the
 * rule's). Refused, with the reason: `answer value`, `metadata`, `edns0`, `cname`.
 *
 * Per query nothing is allocated but texts in the caller's per-query memory.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

#include "rewrite/regex.h"

/*! \brief Most rules (rewrite option values) of an instance. */
#define K8S_REWRITE_RULES_MAX 64

/*! \brief Most response rules one rule leaves (auto's two and its answer names). */
#define K8S_REWRITE_RESP_PER_RULE 8

/*! \brief Most response rules one query collects (more: SERVFAIL). */
#define K8S_REWRITE_RESP_MAX 64

typedef struct k8s_rewrite k8s_rewrite_t;

/*! \brief A response rule a query's rewrite left (what its names and values become). */
typedef struct {
	const void *rule;       /*!< The rule's response part (opaque). */
	const char *orig;       /*!< answer auto: the name the query was rewritten to ... */
	const char *repl;       /*!< ... and the one it had before. */
} k8s_rewrite_resp_t;

/*! \brief What the rules did to one query. */
typedef struct {
	const char *name;       /*!< The name asked after the rules (text, lowercase, final dot). */
	size_t name_len;
	uint16_t qtype, qclass; /*!< The type and class asked after the rules. */
	bool renamed;           /*!< The name changed. */
	bool invalid;           /*!< A rule made a name that is none (SERVFAIL, as CoreDNS), or
	                             the query collected more than K8S_REWRITE_RESP_MAX response rules. */
	size_t resp_count;
	k8s_rewrite_resp_t resp[K8S_REWRITE_RESP_MAX];
} k8s_rewrite_req_t;

/*!
 * \brief Reads the rules, one per value (the words after `rewrite` in a Corefile).
 *
 * \return The rules, or NULL with the reason (and the value's number) in \a err.
 */
k8s_rewrite_t *k8s_rewrite_new(const char *const *values, size_t count, char *err, size_t err_len);

void k8s_rewrite_free(k8s_rewrite_t *rw);

/*! \brief Number of rules. */
size_t k8s_rewrite_count(const k8s_rewrite_t *rw);

/*!
 * \brief Applies the rules to a query.
 *
 * \param name  The query name's text (k8s_name_to_text()).
 * \param mm    Per-query memory for the rewritten names.
 * \return True if any rule applied (\a out says what to do), false if none did.
 */
bool k8s_rewrite_request(const k8s_rewrite_t *rw, k8s_regex_scratch_t *s, knot_mm_t *mm,
                         const char *name, size_t len, uint16_t qtype, uint16_t qclass,
                         k8s_rewrite_req_t *out);

/*!
 * \brief A record's owner as the response rules leave it (name rules, in reverse).
 *
 * \return The new text's length in \a out (the owner unchanged: a copy), 0 if too long.
 */
size_t k8s_rewrite_owner(const k8s_rewrite_req_t *req, k8s_regex_scratch_t *s,
                         const char *owner, size_t len, char *out, size_t max);

/*! \brief A record's value name (CNAME, PTR, NS, MX, SRV target, SOA's MNAME): value rules. */
size_t k8s_rewrite_value(const k8s_rewrite_req_t *req, k8s_regex_scratch_t *s,
                         const char *value, size_t len, char *out, size_t max);

/*! \brief True if the response rules change TTLs or the RCODE. */
bool k8s_rewrite_has_ttl(const k8s_rewrite_req_t *req);

/*! \brief A record's TTL as the response rules leave it. */
uint32_t k8s_rewrite_ttl(const k8s_rewrite_req_t *req, uint32_t ttl);

/*! \brief The response's RCODE as the response rules leave it. */
uint16_t k8s_rewrite_rcode(const k8s_rewrite_req_t *req, uint16_t rcode);

/*! \brief True if the response rules name owners or values (not only TTLs and RCODEs). */
bool k8s_rewrite_maps_names(const k8s_rewrite_req_t *req);
