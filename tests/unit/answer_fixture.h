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
 * The answer path's test harness, shared by test_answer.c and test_answer_ext.c: the
 * record table a test's setup fills (put_service()), and queries asked as knotd's hook
 * asks them, through k8s_answer() into a real libknot response, parsed back as a client
 * would and dumped as sorted text. Included after cmocka.h, whose asserts it uses.
 */

#pragma once

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "answer/answer.h"
#include "table/records.h"

/* Per-query memory: everything is freed after each test. */
static void *arena[4096];
static size_t arena_used;

static inline void *arena_alloc(void *ctx, size_t len)
{
	assert_true(arena_used < sizeof(arena) / sizeof(arena[0]));
	return arena[arena_used++] = malloc(len);
}

static inline void arena_free(void)
{
	while (arena_used > 0) {
		free(arena[--arena_used]);
	}
}

static knot_mm_t mm = { .alloc = arena_alloc };

static k8s_table_t table;
static const k8s_records_conf_t rconf = { .endpoint_pod_names = false };

static inline void put_service(const k8s_service_t *svc, const k8s_slice_t *slices, size_t count)
{
	const k8s_slice_t *ptrs[8];
	for (size_t i = 0; i < count; i++) {
		ptrs[i] = &slices[i];
	}
	k8s_block_t *block = k8s_records_service(svc, ptrs, count, &rconf);
	assert_non_null(block);
	assert_int_equal(k8s_table_put_block(&table, block), KNOT_EOK);
}

/*! \brief The sections of an answer as sorted "owner TYPE rdata" lines joined by " | ". */
typedef struct {
	k8s_answer_t result;
	k8s_autopath_outcome_t walked;  /*!< How an autopath walk ended, NONE without one. */
	bool tc;
	size_t answer_records;
	uint32_t ttl;                   /*!< The last answer record's TTL. */
	char answer[4096];
	char additional[4096];
} reply_t;

static inline int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static inline void dump_section(const knot_pkt_t *pkt, knot_section_t id, char *out, size_t size,
                         uint32_t *ttl)
{
	const knot_pktsection_t *sec = knot_pkt_section(pkt, id);
	char *lines[512];
	size_t n = 0;
	for (uint16_t i = 0; i < sec->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(sec, i);
		if (rr->type == KNOT_RRTYPE_OPT) {
			continue;
		}
		char owner[KNOT_DNAME_TXT_MAXLEN];
		knot_dname_to_str(owner, rr->owner, sizeof(owner));
		char type[16];
		knot_rrtype_to_string(rr->type, type, sizeof(type));
		if (ttl != NULL) {
			*ttl = rr->ttl;
		}
		for (uint16_t j = 0; j < rr->rrs.count && n < 512; j++) {
			char data[1024];
			assert_true(knot_rrset_txt_dump_data(rr, j, data, sizeof(data),
			                                     &KNOT_DUMP_STYLE_DEFAULT) >= 0);
			lines[n] = malloc(2048);
			snprintf(lines[n++], 2048, "%s %s %s", owner, type, data);
		}
	}
	qsort(lines, n, sizeof(char *), line_cmp);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			strncat(out, " | ", size - strlen(out) - 1);
		}
		strncat(out, lines[i], size - strlen(out) - 1);
		free(lines[i]);
	}
}

static inline reply_t ask_from(const k8s_answer_conf_t *c, const char *name, uint16_t type,
                        uint16_t max_size, const char *search, const char *client);

static inline reply_t ask_conf(const k8s_answer_conf_t *c, const char *name, uint16_t type,
                        uint16_t max_size)
{
	return ask_from(c, name, type, max_size, NULL, NULL);
}

static inline reply_t ask_edns(const k8s_answer_conf_t *c, const char *name, uint16_t type,
                        uint16_t max_size, const char *search)
{
	return ask_from(c, name, type, max_size, search, NULL);
}

/*! \brief A client's address (IPv4, IPv6, or IPv4 as "::ffff:a.b.c.d") as knotd gives it. */
static inline struct sockaddr_storage client_addr(const char *text)
{
	struct sockaddr_storage ss = { 0 };
	if (strchr(text, ':') == NULL) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
	}
	return ss;
}

/*!
 * \brief A query as knotd's hook answers it: optionally with the autopath EDNS option
 * holding \a search, from the address \a client (NULL: none known).
 */
static inline reply_t ask_from(const k8s_answer_conf_t *c, const char *name, uint16_t type,
                        uint16_t max_size, const char *search, const char *client)
{
	knot_dname_t *qname = knot_dname_from_str_alloc(name);
	assert_non_null(qname);
	knot_dname_to_lower(qname);
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_put_question(query, qname, KNOT_CLASS_IN, type), KNOT_EOK);
	knot_rrset_t opt;
	if (search != NULL) {
		assert_int_equal(knot_edns_init(&opt, 1232, 0, 0, NULL), KNOT_EOK);
		assert_int_equal(knot_edns_add_option(&opt, 65001, strlen(search),
		                                      (const uint8_t *)search, NULL), KNOT_EOK);
		query->opt_rr = &opt;
	}
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_init_response(resp, query), KNOT_EOK);
	resp->max_size = max_size;

	reply_t reply = { 0 };
	struct sockaddr_storage remote;
	if (client != NULL) {
		remote = client_addr(client);
	}
	k8s_answer_forget();
	reply.result = k8s_answer(c, &table, qname, type, query, client != NULL ? &remote : NULL,
	                          resp, &mm, &reply.walked);
	if (reply.result == K8S_ANSWER_HIT) {
		assert_int_equal(knot_pkt_begin(resp, KNOT_ADDITIONAL), KNOT_EOK);
		k8s_answer_additional(c, resp, resp, &mm);
	}
	reply.tc = knot_wire_get_tc(resp->wire);

	// Parse the wire back, as a client would.
	knot_pkt_t *parsed = knot_pkt_new(resp->wire, resp->size, NULL);
	assert_int_equal(knot_pkt_parse(parsed, 0), KNOT_EOK);
	dump_section(parsed, KNOT_ANSWER, reply.answer, sizeof(reply.answer), &reply.ttl);
	const knot_pktsection_t *answer = knot_pkt_section(parsed, KNOT_ANSWER);
	for (uint16_t i = 0; i < answer->count; i++) {
		reply.answer_records += knot_pkt_rr(answer, i)->rrs.count;
	}
	dump_section(parsed, KNOT_ADDITIONAL, reply.additional, sizeof(reply.additional), NULL);

	knot_pkt_free(parsed);
	knot_pkt_free(resp);
	if (search != NULL) {
		query->opt_rr = NULL;
		knot_rrset_clear(&opt, NULL);
	}
	knot_pkt_free(query);
	free(qname);
	arena_free();
	return reply;
}

#define assert_reply(r, res, text) do { \
	reply_t _r = (r); \
	assert_int_equal(_r.result, (res)); \
	assert_string_equal(_r.answer, (text)); \
} while (0)
