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
 * knotd glue of CoreDNS's rewrite and template (module/rewrite/): the options' checks,
 * the global instance's BEGIN hook that applies them before knotd looks for the query's
 * zone, and the zones a rewritten name is answered from.
 *
 * Why the BEGIN stage of the global instance: CoreDNS applies rewrite and template
 * before its zone plugins, and a rewritten name may move a query into a cluster zone
 * from no zone, out of one, or between them. knotd chose the query's zone before any
 * hook runs and gives a module no way to choose another, so a query the rules change
 * is answered here, whole: from the table of the mod-k8s zone its new name is in
 * (k8s_rewrite_zone_answer(), the zone's own answer with the owner the rules give), from a
 * template, or from the forwarder's cache; knotd then adds only its OPT and RCODE
 * (DONE). A query no rule changes goes on as before; without rules the hook is not
 * installed at all.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/forward.h"
#include "k8s_glue.h"
#include "lib/clock.h"
#include "lib/tsan_rcu.h"
#include "rewrite/blocks.h"
#include "rewrite/dnstext.h"
#include "rewrite/rewrite.h"
#include "rewrite/template.h"
#include "resolver/upstream.h"


struct k8s_rw_glue {
	k8s_keeper_t *keeper;           /*!< Names outside the zones, asked for (A, AAAA). */
	k8s_rw_blocks_t *blocks;        /*!< Each server block's rules. */
	k8s_regex_scratch_t **scratch;  /*!< One per knotd worker (qdata's thread_id). */
	unsigned threads;
};

/* Options. */

/*! \brief One value alone (\a template: a template); a zone in two blocks: the load's check. */
static int check_value(knotd_conf_check_args_t *args, bool template)
{
	const char *value = (const char *)args->data;
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(&value, template ? 0 : 1, &value, template ? 1 : 0,
	                                       k8s_glue_check_msg, sizeof(k8s_glue_check_msg));
	if (b == NULL) {
		args->err_str = k8s_glue_check_msg;
		return KNOT_EINVAL;
	}
	k8s_rw_blocks_free(b);
	return KNOT_EOK;
}

int k8s_rewrite_check_rule(knotd_conf_check_args_t *args)
{
	return check_value(args, false);
}

int k8s_rewrite_check_template(knotd_conf_check_args_t *args)
{
	return check_value(args, true);
}

static void glue_free(struct k8s_rw_glue *g)
{
	if (g == NULL) {
		return;
	}
	for (unsigned i = 0; g->scratch != NULL && i < g->threads; i++) {
		k8s_regex_scratch_free(g->scratch[i]);
	}
	free(g->scratch);
	k8s_keeper_free(g->keeper);
	k8s_rw_blocks_free(g->blocks);
	free(g);
}

void k8s_rewrite_free_ctx(k8s_ctx_t *ctx)
{
	glue_free(ctx->rw);
	ctx->rw = NULL;
}

static knotd_state_t rewrite_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod);

/*! \brief The instance's live forwarder, the kept names' (caller's RCU section). */
static k8s_fwd_t *keeper_live(void *arg)
{
	const k8s_ctx_t *ctx = arg;
	return (ctx->fwd != NULL) ? k8s_forward_live(ctx->fwd) : NULL;
}

int k8s_rewrite_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t rules = k8s_glue_option(check, K8S_OPT(REWRITE));
	knotd_conf_t tpls = k8s_glue_option(check, K8S_OPT(TEMPLATE));
	int ret = KNOT_EOK;
	struct k8s_rw_glue *g = NULL;
	if (rules.count == 0 && tpls.count == 0) {
		goto out;
	}
	g = calloc(1, sizeof(*g));
	const char **values = calloc(rules.count + tpls.count, sizeof(*values));
	if (g == NULL || values == NULL) {
		free(values);
		ret = KNOT_ENOMEM;
		goto out;
	}
	char err[512];
	for (size_t i = 0; i < rules.count; i++) {
		values[i] = rules.multi[i].string;
	}
	for (size_t i = 0; i < tpls.count; i++) {
		values[rules.count + i] = tpls.multi[i].string;
	}
	g->blocks = k8s_rw_blocks_new(values, rules.count, values + rules.count, tpls.count,
	                              err, sizeof(err));
	free(values);
	if (g->blocks == NULL) {
		ret = k8s_glue_refuse(check, "%s", err);
	}
	size_t rule_count = 0, tpl_count = 0, blocks = 0;
	if (ret == KNOT_EOK) {
		blocks = k8s_rw_blocks_count(g->blocks, &rule_count, &tpl_count);
	}
	if (ret != KNOT_EOK || check->mod == NULL || knotd_mod_zone(check->mod) != NULL ||
	    rule_count + tpl_count == 0) {
		goto out;  // A check, a zone (the global instance applies them), or no rule at all.
	}
	g->threads = knotd_mod_threads(check->mod);
	g->scratch = calloc(g->threads, sizeof(*g->scratch));
	for (unsigned i = 0; g->scratch != NULL && i < g->threads; i++) {
		g->scratch[i] = k8s_regex_scratch_new();
		if (g->scratch[i] == NULL) {
			break;
		}
	}
	g->keeper = k8s_keeper_new_live(keeper_live, ctx);
	if (g->scratch == NULL || (g->threads > 0 && g->scratch[g->threads - 1] == NULL) ||
	    g->keeper == NULL) {
		ret = KNOT_ENOMEM;
		goto out;
	}
	ret = knotd_mod_hook(check->mod, KNOTD_STAGE_BEGIN, rewrite_begin_hook);
	if (ret == KNOT_EOK) {
		// Set once, before the workers answer with these rules; never cleared (a few
		// instructions a query of a zone after the rules go).
		__atomic_store_n(&k8s_rewrite_zones_soa, true, __ATOMIC_RELAXED);
		ctx->rw = g;
		g = NULL;
		knotd_mod_log(check->mod, LOG_INFO, "%zu rewrite rules and %zu templates of %zu "
		              "server blocks, applied before the zone lookup", rule_count, tpl_count,
		              blocks);
	}
out:
	glue_free(g);
	knotd_conf_free(&rules);
	knotd_conf_free(&tpls);
	return ret;
}

/* The hook. */

/*! \brief CoreDNS's chain answers a template's CNAME target again, through the rules: so deep. */
#define CHASE_MAX 8

/*! \brief One query on its way: the per-query memory, the forwarder. */
typedef struct {
	const struct k8s_rw_glue *g;
	const k8s_ctx_t *ctx;       /*!< The global instance's. */
	k8s_regex_scratch_t *s;
	knotd_qdata_t *qdata;
	knot_pkt_t *pkt;
	knot_mm_t *mm;
	k8s_fwd_t *fwd;             /*!< The instance's live forwarder. */
	const char *remote;         /*!< The client's address as text, once asked. */
} rwq_t;

/*! \brief One question asked through the rules: the client's, or a CNAME's target. */
typedef struct {
	const char *name;           /*!< Text, lowercase, final dot (after the rules). */
	size_t len;
	const knot_dname_t *wire;   /*!< The same, wire. */
	uint16_t qtype, qclass;
	k8s_rewrite_req_t *req;     /*!< What the rules did, NULL if no rule applied. */
	const knot_dname_t *asked;  /*!< Its records' owner without a rule, NULL: the question. */
} ask_t;

/*! \brief A name's wire form from its text, in per-query memory; NULL if it is no name. */
static knot_dname_t *wire_of(knot_mm_t *mm, const char *text, size_t len)
{
	uint8_t wire[256];
	size_t size = k8s_name_from_text(text, len, wire);
	knot_dname_t *out = (size > 0) ? mm->alloc(mm->ctx, size) : NULL;
	if (out != NULL) {
		memcpy(out, wire, size);
	}
	return out;
}

typedef struct {
	rwq_t *q;
	const ask_t *a;
} map_ctx_t;

static size_t value_map(void *arg, const char *in, size_t len, char *out, size_t max)
{
	const map_ctx_t *m = arg;
	if (m->a->req == NULL) {
		if (len >= max) {
			return 0;
		}
		memcpy(out, in, len + 1);
		return len;
	}
	return k8s_rewrite_value(m->a->req, m->q->s, in, len, out, max);
}

/*! \brief The TTLs of the records put since record \a from, as \a req's rules clamp them. */
static void clamp_ttls(const rwq_t *q, const k8s_rewrite_req_t *req, uint16_t from)
{
	knot_pkt_t *pkt = q->pkt;
	for (uint16_t i = from; i < pkt->rrset_count; i++) {
		size_t pos = pkt->rr_info[i].pos;
		for (uint16_t k = 0; k < pkt->rr[i].rrs.count; k++) {
			// The owner: labels up to the root or a compression pointer.
			while (pos < pkt->size && pkt->wire[pos] != 0 && pkt->wire[pos] < 0xc0) {
				pos += 1 + pkt->wire[pos];
			}
			pos += (pos < pkt->size && pkt->wire[pos] >= 0xc0) ? 2 : 1;
			if (pos + 10 > pkt->size) {
				return;
			}
			uint32_t ttl = knot_wire_read_u32(pkt->wire + pos + 4);
			knot_wire_write_u32(pkt->wire + pos + 4, k8s_rewrite_ttl(req, ttl));
			pos += 10 + knot_wire_read_u16(pkt->wire + pos + 8);
		}
	}
}

/*! \brief Puts one record (owner and rdata copied to per-query memory). */
static int put_rr(rwq_t *q, const knot_dname_t *owner, uint16_t type, uint16_t rclass,
                  uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
	knot_mm_t *mm = q->mm;
	size_t osize = knot_dname_size(owner);
	knot_rrset_t *rr = mm->alloc(mm->ctx, sizeof(*rr));
	knot_rdata_t *rd = mm->alloc(mm->ctx, knot_rdata_size(rdlen));
	knot_dname_t *own = mm->alloc(mm->ctx, osize);
	if (rr == NULL || rd == NULL || own == NULL) {
		return KNOT_ENOMEM;
	}
	memcpy(own, owner, osize);
	knot_rrset_init(rr, own, type, rclass, ttl);
	knot_rdata_init(rd, rdlen, rdata);
	rr->rrs.count = 1;
	rr->rrs.size = knot_rdata_size(rdlen);
	rr->rrs.rdata = rd;
	return knot_pkt_put(q->pkt, KNOT_COMPR_HINT_NONE, rr, 0);
}

/*!
 * \brief An upstream answer of \a name outside our zones: the forwarder's cache, else
 * (A, AAAA) the kept names, asked for when cold. Its chain's first owner is shown as
 * \a shown (NULL: the question).
 *
 * \return True with \a rcode set if there is an answer; false if cold (asked for).
 */
static bool put_upstream(rwq_t *q, const knot_dname_t *name, const knot_dname_t *shown,
                         uint16_t qtype, uint16_t *rcode)
{
	uint64_t now = k8s_now_ms();
	const k8s_fwd_entry_t *e = (q->fwd != NULL) ? k8s_fwd_lookup(q->fwd, name, qtype, now) : NULL;
	if (e == NULL && (qtype == KNOT_RRTYPE_A || qtype == KNOT_RRTYPE_AAAA) &&
	    k8s_keeper_lookup(q->g->keeper, name, qtype, &e) != K8S_UPSTREAM_READY) {
		(void)k8s_keeper_ask(q->g->keeper, name,
		                     k8s_glue_tenant(q->ctx, k8s_glue_remote(q->qdata)));
		return false;
	}
	if (e == NULL || k8s_upstream_failed(e)) {
		return false;
	}
	uint32_t left = k8s_upstream_ttl_left(e, now);
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(e, &it);
	const knot_rrset_t *next;
	while ((next = k8s_upstream_next(e, &it)) != NULL) {
		knot_rrset_t rr = *next;
		rr.ttl = (rr.ttl < left) ? rr.ttl : left;
		uint16_t hint = KNOT_COMPR_HINT_NONE;
		if (knot_dname_is_equal(rr.owner, name)) {
			if (shown == NULL) {
				hint = KNOT_COMPR_HINT_QNAME;
			} else {
				rr.owner = (knot_dname_t *)shown;
			}
		}
		if (knot_pkt_put(q->pkt, hint, &rr, 0) != KNOT_EOK) {
			break;
		}
	}
	*rcode = k8s_upstream_rcode(e);
	return true;
}

/*! \brief The SOA of the query's own zone in the authority section (negative answers). */
static void put_soa(rwq_t *q, const k8s_ctx_t *z, bool same_zone)
{
	knot_rrset_t soa;
	if (same_zone) {
		soa = knotd_qdata_zone_apex_rrset(q->qdata, KNOT_RRTYPE_SOA);
	} else {
		// Another zone's: the copy its queries left, if one came yet.
		const knot_rrset_t *copy = k8s_rewrite_zone_soa(z);
		if (copy == NULL) {
			return;
		}
		soa = *copy;
	}
	if (knot_rrset_empty(&soa)) {
		return;
	}
	uint32_t min = knot_soa_minimum(soa.rrs.rdata);
	soa.ttl = (soa.ttl < min) ? soa.ttl : min;
	if (knot_pkt_begin(q->pkt, KNOT_AUTHORITY) == KNOT_EOK) {
		(void)knot_pkt_put(q->pkt, KNOT_COMPR_HINT_NONE, &soa, 0);
	}
}

/*!
 * \brief Answers a name from the zone it is in (its records owned by \a shown, NULL: the
 * question), or from upstream. \a top: the client's question (the RCODE is the answer's).
 */
static knotd_state_t answer_name(rwq_t *q, const knot_dname_t *name, const knot_dname_t *shown,
                                 uint16_t qtype, bool top)
{
	knotd_qdata_t *qdata = q->qdata;
	const k8s_ctx_t *z = k8s_rewrite_zone_of(name);
	uint16_t rcode = KNOT_RCODE_NOERROR;
	if (z == NULL) {
		if (put_upstream(q, name, shown, qtype, &rcode)) {
			if (top) {
				knot_wire_set_ra(q->pkt->wire);
				qdata->rcode = rcode;
			}
			return KNOTD_STATE_DONE;
		}
		// Cold: asked for, the client's retry finds it.
		if (top) {
			qdata->rcode = KNOT_RCODE_SERVFAIL;
			qdata->rcode_ede = KNOT_EDNS_EDE_NOT_READY;
		}
		return KNOTD_STATE_FAIL;
	}
	uint16_t before = q->pkt->rrset_count;
	k8s_answer_t res = k8s_rewrite_zone_answer(z, name, shown, qtype, qdata->query,
	                                      k8s_glue_remote(qdata), q->pkt, q->mm);
	if (!top) {
		return KNOTD_STATE_DONE;
	}
	knot_wire_set_aa(q->pkt->wire);
	const knot_dname_t *own_zone = knotd_qdata_zone_name(qdata);
	bool same_zone = own_zone != NULL && knot_dname_is_equal(own_zone, z->zone);
	switch (res) {
	case K8S_ANSWER_HIT:
		qdata->rcode = KNOT_RCODE_NOERROR;
		if (q->pkt->rrset_count > before) {
			k8s_answer_additional(&z->answer, q->pkt, q->pkt, q->mm);
		}
		return KNOTD_STATE_DONE;
	case K8S_ANSWER_HIT_NXDOMAIN:
		qdata->rcode = KNOT_RCODE_NXDOMAIN;
		return KNOTD_STATE_DONE;
	case K8S_ANSWER_PASS:
		// The zone file's names (its apex): its SOA and NS where it is the query's zone.
		if (same_zone && knot_dname_is_equal(name, z->zone) &&
		    (qtype == KNOT_RRTYPE_SOA || qtype == KNOT_RRTYPE_NS)) {
			knot_rrset_t apex = knotd_qdata_zone_apex_rrset(qdata, qtype);
			qdata->rcode = KNOT_RCODE_NOERROR;
			(void)knot_pkt_put(q->pkt, KNOT_COMPR_HINT_NONE, &apex, 0);
			return KNOTD_STATE_DONE;
		}
		// fall through
	case K8S_ANSWER_NODATA:
	case K8S_ANSWER_NXDOMAIN:
		qdata->rcode = (res == K8S_ANSWER_NXDOMAIN) ? KNOT_RCODE_NXDOMAIN : KNOT_RCODE_NOERROR;
		put_soa(q, z, same_zone);
		return KNOTD_STATE_DONE;
	case K8S_ANSWER_TRUNC:
		knot_wire_set_tc(q->pkt->wire);
		qdata->rcode = KNOT_RCODE_NOERROR;
		return KNOTD_STATE_DONE;
	default: {
		const k8s_answer_reply_t *reply = &k8s_answer_replies[res];
		qdata->rcode = reply->rcode;
		qdata->rcode_ede = reply->ede;
		return KNOTD_STATE_FAIL;
	}
	}
}

static knotd_state_t ask(rwq_t *q, ask_t *a, bool top, unsigned depth);

/*! \brief The client's address as text (template's .Remote). */
static const char *remote_text(rwq_t *q)
{
	if (q->remote != NULL) {
		return q->remote;
	}
	const struct sockaddr_storage *ss = k8s_glue_remote(q->qdata);
	char *out = q->mm->alloc(q->mm->ctx, INET6_ADDRSTRLEN);
	if (out == NULL || ss == NULL) {
		return "";
	}
	const void *addr = (ss->ss_family == AF_INET6) ?
	                   (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
	                   (const void *)&((const struct sockaddr_in *)ss)->sin_addr;
	q->remote = inet_ntop(ss->ss_family, addr, out, INET6_ADDRSTRLEN) ? out : "";
	return q->remote;
}

/*!
 * \brief A template's CNAME target, as CoreDNS's upstream looks it up: through the
 * rules again, its answer's records added after the CNAME.
 */
static void chase(rwq_t *q, const uint8_t *target, uint16_t qtype, unsigned depth)
{
	if (depth >= CHASE_MAX) {
		return;
	}
	ask_t sub = { .qtype = qtype, .qclass = KNOT_CLASS_IN };
	knot_dname_t *wire = q->mm->alloc(q->mm->ctx, KNOT_DNAME_MAXLEN);
	char *text = q->mm->alloc(q->mm->ctx, K8S_NAME_TEXT_MAX);
	if (wire == NULL || text == NULL) {
		return;
	}
	memcpy(wire, target, knot_dname_size(target));
	knot_dname_to_lower(wire);
	sub.name = text;
	sub.len = k8s_name_to_text(wire, text, K8S_NAME_TEXT_MAX);
	sub.wire = wire;
	sub.asked = wire;
	if (sub.len > 0) {
		(void)ask(q, &sub, false, depth + 1);
	}
}

/*! \brief The records of a matched template, the rules' response side applied. */
static knotd_state_t answer_template(rwq_t *q, const ask_t *a, k8s_template_match_t *m,
                                     bool top, unsigned depth)
{
	knotd_qdata_t *qdata = q->qdata;
	uint16_t rcode = k8s_template_rcode(m);
	if (rcode == KNOT_RCODE_SERVFAIL) {
		qdata->rcode = top ? rcode : qdata->rcode;
		return KNOTD_STATE_FAIL;
	}
	m->remote = remote_text(q);
	static const k8s_template_section_t order[] = {
		K8S_TEMPLATE_ANSWER, K8S_TEMPLATE_AUTHORITY, K8S_TEMPLATE_ADDITIONAL
	};
	static const knot_section_t sections[] = { KNOT_ANSWER, KNOT_AUTHORITY, KNOT_ADDITIONAL };
	k8s_template_rr_t *rr = q->mm->alloc(q->mm->ctx, sizeof(*rr));
	if (rr == NULL) {
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return KNOTD_STATE_FAIL;
	}
	map_ctx_t map = { q, a };
	// A chased target adds its answer's records only.
	size_t last = top ? 3 : 1;
	for (size_t s = 0; s < last; s++) {
		if (s > 0 && knot_pkt_begin(q->pkt, sections[s]) != KNOT_EOK) {
			break;
		}
		for (size_t i = 0; i < k8s_template_count(m, order[s]); i++) {
			int ret = k8s_template_rr(m, order[s], i, q->mm, value_map, &map, rr);
			const knot_dname_t *owner = NULL;
			if (ret == KNOT_EOK && a->req != NULL && k8s_rewrite_maps_names(a->req)) {
				char text[K8S_NAME_TEXT_MAX];
				size_t len = k8s_rewrite_owner(a->req, q->s, rr->owner_text,
				                               strlen(rr->owner_text), text, sizeof(text));
				owner = (len > 0) ? wire_of(q->mm, text, len) : NULL;
			} else if (ret == KNOT_EOK) {
				owner = rr->owner;
			}
			if (ret == KNOT_EOK && owner == NULL) {
				ret = KNOT_EMALF;
			}
			if (ret == KNOT_EOK) {
				ret = put_rr(q, owner, rr->type, rr->rclass, rr->ttl, rr->rdata, rr->rdlen);
			}
			if (ret == KNOT_ESPACE) {
				knot_wire_set_tc(q->pkt->wire);
				break;
			} else if (ret != KNOT_EOK) {
				// CoreDNS: a template that fails, or a record it cannot read, is SERVFAIL.
				if (top) {
					qdata->rcode = KNOT_RCODE_SERVFAIL;
				}
				return KNOTD_STATE_FAIL;
			}
			if (order[s] == K8S_TEMPLATE_ANSWER && rr->type == KNOT_RRTYPE_CNAME &&
			    (a->qtype == KNOT_RRTYPE_A || a->qtype == KNOT_RRTYPE_AAAA)) {
				chase(q, rr->rdata, a->qtype, depth);
			}
		}
	}
	if (top) {
		knot_wire_set_aa(q->pkt->wire);
		qdata->rcode = rcode;
	}
	return KNOTD_STATE_DONE;
}

/*!
 * \brief One question through the rules, as CoreDNS's chain answers it: rewrite, then
 * template, then the zone the name is in, or upstream. The client's question (\a top)
 * that no rule touches goes on (returns KNOTD_STATE_NOOP for "not ours").
 */
static knotd_state_t ask(rwq_t *q, ask_t *a, bool top, unsigned depth)
{
	// The rules of the one server block CoreDNS hands the name to.
	const k8s_rw_block_t *block = k8s_rw_blocks_of(q->g->blocks, a->wire);
	const k8s_rewrite_t *rules = (block != NULL) ? block->rewrite : NULL;
	const k8s_templates_t *templates = (block != NULL) ? block->templates : NULL;
	uint16_t qtype = a->qtype, qclass = a->qclass;
	k8s_rewrite_req_t stack_req;  // About 1.6 KiB: CHASE_MAX levels at most.
	if (rules != NULL) {
		k8s_rewrite_req_t *req = &stack_req;
		if (k8s_rewrite_request(rules, q->s, q->mm, a->name, a->len, a->qtype,
		                        a->qclass, req)) {
			if (req->invalid) {
				// CoreDNS: "invalid name after rewrite", SERVFAIL.
				q->qdata->rcode = top ? KNOT_RCODE_SERVFAIL : q->qdata->rcode;
				return KNOTD_STATE_FAIL;
			}
			a->req = req;
			if (req->renamed && (a->wire = wire_of(q->mm, req->name, req->name_len)) == NULL) {
				return KNOTD_STATE_FAIL;
			}
			a->name = req->name;
			a->len = req->name_len;
			a->qtype = req->qtype;
			a->qclass = req->qclass;
		}
	}
	uint16_t first = q->pkt->rrset_count;
	knotd_state_t next = KNOTD_STATE_NOOP;
	k8s_template_match_t *m = NULL;
	k8s_template_result_t tres = K8S_TEMPLATE_NONE;
	if (templates != NULL && (m = q->mm->alloc(q->mm->ctx, sizeof(*m))) != NULL) {
		tres = k8s_templates_match(templates, q->s, a->name, a->len, a->wire, a->qtype,
		                           a->qclass, m);
	}
	if (tres == K8S_TEMPLATE_SERVFAIL) {
		q->qdata->rcode = top ? KNOT_RCODE_SERVFAIL : q->qdata->rcode;
		next = KNOTD_STATE_FAIL;
	} else if (tres == K8S_TEMPLATE_MATCH) {
		next = answer_template(q, a, m, top, depth);
	} else if (!top || (a->req != NULL && (a->req->renamed || a->qtype != qtype ||
	                                       a->qclass != qclass || k8s_rewrite_has_ttl(a->req)))) {
		// The name's records show the name the rules map it back to.
		const knot_dname_t *shown = a->asked;
		if (a->req != NULL) {
			char text[K8S_NAME_TEXT_MAX];
			size_t len = k8s_rewrite_owner(a->req, q->s, a->name, a->len, text, sizeof(text));
			knot_dname_t *mapped = (len > 0) ? wire_of(q->mm, text, len) : NULL;
			if (mapped == NULL) {
				q->qdata->rcode = top ? KNOT_RCODE_SERVFAIL : q->qdata->rcode;
				return KNOTD_STATE_FAIL;
			}
			// Mapped back to the question: its own bytes (a compression pointer).
			bool question = top && knot_dname_is_equal(mapped, q->qdata->query->lower_qname);
			shown = question ? NULL : mapped;
		}
		next = (a->qclass == KNOT_CLASS_IN) ? answer_name(q, a->wire, shown, a->qtype, top)
		                                    : KNOTD_STATE_NOOP;
	}
	if (a->req != NULL && next == KNOTD_STATE_DONE) {
		clamp_ttls(q, a->req, first);
	}
	if (a->req != NULL && top && next != KNOTD_STATE_NOOP) {
		q->qdata->rcode = k8s_rewrite_rcode(a->req, q->qdata->rcode);
	}
	return next;
}

static knotd_state_t rewrite_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (state != K8S_STATE_PRODUCE || qdata->type != KNOTD_QUERY_TYPE_NORMAL) {
		return state;
	}
	k8s_tsan_zone_seen();
	const k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	const struct k8s_rw_glue *g = ctx->rw;
	// Each worker its match data (knotd numbers its workers below knotd_mod_threads()).
	unsigned thread = qdata->params->thread_id;
	if (thread >= g->threads) {
		return state;
	}
	if (k8s_rw_blocks_of(g->blocks, qdata->query->lower_qname) == NULL) {
		return state;  // Its server block has no rules: knotd goes on, at once.
	}
	rwq_t q = {
		.g = g, .ctx = ctx, .s = g->scratch[thread], .qdata = qdata, .pkt = pkt,
		.mm = qdata->mm,
	};
	char text[K8S_NAME_TEXT_MAX];
	ask_t a = {
		.name = text, .wire = qdata->query->lower_qname,
		.qtype = knot_pkt_qtype(qdata->query), .qclass = knot_pkt_qclass(qdata->query),
	};
	a.len = k8s_name_to_text(a.wire, text, sizeof(text));
	if (a.len == 0) {
		return state;
	}
	urcu_memb_read_lock();
	q.fwd = keeper_live((void *)ctx);
	knotd_state_t next = ask(&q, &a, true, 0);
	urcu_memb_read_unlock();
	if (next == KNOTD_STATE_NOOP) {
		return state;  // No rule touched it: knotd goes on.
	}
	k8s_stats_answered_by(qdata, K8S_DNSMETRICS_KUBERNETES);
	return next;
}
