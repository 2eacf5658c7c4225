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
 * \brief CoreDNS's template plugin: its templates, read from CoreDNS's own syntax
 * (`CLASS TYPE [ZONE...] { match REGEX...; answer RR; additional RR; authority RR;
 * rcode CODE; fallthrough [ZONE...] }`), matched against a query as CoreDNS matches
 * them (in order; a template whose zone, class and type fit but whose regexes do not
 * answers SERVFAIL unless it falls through), and their records rendered.
 *
 * The records' text is a Go template of which this subset is read: `{{ .Name }}`,
 * `{{ .Zone }}`, `{{ .Class }}`, `{{ .Type }}`, `{{ .Remote }}`, `{{ .Group.NAME }}`,
 * `{{ index .Match N }}`, `{{ index .Group "NAME" }}`, with `{{-` and `-}}`; anything
 * else (functions, pipelines, `var`, `expr`, `ederror`, `.Message`, ...) is refused at
 * load with the reason. A rendered record is read as miekg/dns reads one (NewRR: the
 * origin ".", 3600 s without a TTL) for the types A, AAAA, CNAME, DNAME, NS, PTR, MX,
 * SRV, TXT and SOA.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

#include "rewrite/regex.h"
#include "rewrite/rrtext.h"

/*! \brief Most templates (template option values) of an instance. */
#define K8S_TEMPLATES_MAX 64

/*! \brief Longest rendered record text. */
#define K8S_TEMPLATE_TEXT_MAX 4096

typedef struct k8s_templates k8s_templates_t;
typedef struct k8s_template k8s_template_t;

typedef enum {
	K8S_TEMPLATE_NONE = 0,  /*!< No template answers: the query goes on. */
	K8S_TEMPLATE_SERVFAIL,  /*!< A template's zone matched, none of its regexes, no fallthrough. */
	K8S_TEMPLATE_MATCH,     /*!< A template answers (k8s_template_rr()). */
} k8s_template_result_t;

typedef enum {
	K8S_TEMPLATE_ANSWER = 0,
	K8S_TEMPLATE_AUTHORITY,
	K8S_TEMPLATE_ADDITIONAL,
	K8S_TEMPLATE_SECTIONS
} k8s_template_section_t;

/*! \brief A query a template matched: what its records are rendered from. */
typedef struct {
	const k8s_template_t *tpl;
	const char *name;           /*!< The query name's text (lowercase, final dot). */
	size_t name_len;
	const uint8_t *zone;        /*!< The template's zone the name is in (wire). */
	uint16_t qtype, qclass;     /*!< The query's; the template's where the query asks ANY. */
	const char *remote;         /*!< The client's address as text. */
	const k8s_regex_t *re;      /*!< The regex that matched. */
	k8s_regex_span_t spans[K8S_REGEX_GROUPS_MAX + 1];
} k8s_template_match_t;

/*! \brief A rendered record: its rdata in per-query memory. */
typedef k8s_rrtext_t k8s_template_rr_t;

/*!
 * \brief Reads the templates, one per value (the words after `template` in a Corefile;
 * a block's lines separated by `;` or newlines).
 *
 * \param zones  The server block's zones (text), a template's without ZONE (none: the root).
 */
k8s_templates_t *k8s_templates_new(const char *const *values, size_t count,
                                   const char *const *zones, size_t zone_count, char *err,
                                   size_t err_len);

void k8s_templates_free(k8s_templates_t *t);

/*! \brief Number of templates. */
size_t k8s_templates_count(const k8s_templates_t *t);

/*!
 * \brief Matches a query against the templates in order.
 *
 * \param name, len  The query name's text (k8s_name_to_text()).
 * \param wire       The same name, wire, lowercase.
 */
k8s_template_result_t k8s_templates_match(const k8s_templates_t *t, k8s_regex_scratch_t *s,
                                          const char *name, size_t len, const uint8_t *wire,
                                          uint16_t qtype, uint16_t qclass,
                                          k8s_template_match_t *m);

/*! \brief The matched template's RCODE. */
uint16_t k8s_template_rcode(const k8s_template_match_t *m);

/*! \brief How many records the matched template has in \a section. */
size_t k8s_template_count(const k8s_template_match_t *m, k8s_template_section_t section);

/*!
 * \brief Renders record \a i of \a section.
 *
 * \param value_map  Called on a name in the rdata (CNAME, PTR, ... targets) to map it
 *                   (the rewrite's response rules), or NULL.
 * \return KNOT_EOK, or an error (CoreDNS answers SERVFAIL for a record it cannot read).
 */
int k8s_template_rr(const k8s_template_match_t *m, k8s_template_section_t section, size_t i,
                    knot_mm_t *mm,
                    k8s_rrtext_map_t value_map, void *map_ctx, k8s_template_rr_t *rr);
