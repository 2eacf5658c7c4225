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
 * Server-side search path expansion, in two forms: the KEP's ("DNS Autopath in
 * PodSpec": <name>.search.<ns>.<cluster domain>.<autopath zone>) and CoreDNS's
 * `autopath @kubernetes` (<name>.<ns>.svc.<zone> asked by a pod of <ns>).
 *
 * Both walk a search list as the client's resolver would and answer from the
 * first name that exists: a CNAME to it, then its records. Names in our zones
 * come from the table; names outside them from the upstream cache, which a
 * cold name only asks to fill, so no query waits on the network.
 */

#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include "answer/answer_priv.h"
#include "answer/fedname.h"

/*! \brief A search list, one domain at a time. */
typedef struct {
	const k8s_answer_conf_t *conf;
	const uint8_t *ns;           /*!< KEP form without a list: the pod's namespace label. */
	const knot_dname_t *zone;    /*!< Of the svc.<zone> and <zone> steps. */
	const char *list;            /*!< EDNS search list (comma-separated), or NULL. */
	size_t list_len;
	size_t at;                   /*!< Next position in the list. */
	unsigned step;               /*!< Next fixed step (k8s_autopath_outcome_t order). */
	size_t host;                 /*!< Next host search domain. */
} search_t;

/*! \brief Writes <label>.svc.<zone> (without \a label: svc.<zone>); false if too long. */
static bool svc_domain(knot_dname_t *out, const uint8_t *label, const knot_dname_t *zone)
{
	size_t label_size = (label != NULL) ? 1 + label[0] : 0;
	size_t zone_size = knot_dname_size(zone);
	if (label_size + 4 + zone_size > KNOT_DNAME_MAXLEN) {
		return false;
	}
	if (label != NULL) {
		memcpy(out, label, label_size);
	}
	memcpy(out + label_size, "\x03svc", 4);
	memcpy(out + label_size + 4, zone, zone_size);
	return true;
}

/*! \brief True for a space or a tab: a list written "a, b" is read as "a,b". */
static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/*! \brief The next domain of an EDNS list into \a out; false at its end. */
static bool list_next(search_t *s, knot_dname_t *out)
{
	while (s->at < s->list_len) {
		size_t start = s->at, end = start;
		while (end < s->list_len && s->list[end] != ',') {
			end++;
		}
		s->at = end + 1;
		while (start < end && blank(s->list[start])) {
			start++;
		}
		while (end > start && blank(s->list[end - 1])) {
			end--;
		}
		char text[KNOT_DNAME_TXT_MAXLEN + 1];
		size_t size = end - start;
		if (size == 0 || size >= sizeof(text)) {
			continue;  // Empty, or no name: nothing of the client's could be below it.
		}
		memcpy(text, s->list + start, size);
		text[size] = '\0';
		if (knot_dname_from_str(out, text, KNOT_DNAME_MAXLEN) != NULL) {
			knot_dname_to_lower(out);
			return true;
		}
	}
	return false;
}

/*! \brief Domains in an EDNS list, up to one more than the limit. */
static size_t list_count(const char *list, size_t len)
{
	size_t count = 0;
	bool seen = false;
	for (size_t i = 0; i <= len && count <= K8S_AUTOPATH_MAX_LISTED; i++) {
		if (i == len || list[i] == ',') {
			count += seen;
			seen = false;
		} else if (!blank(list[i])) {
			seen = true;
		}
	}
	return count;
}

/*!
 * \brief The next domain of the search list into \a out (the root for the name
 * itself, always last), and which step it is; false past the end.
 */
static bool search_next(search_t *s, knot_dname_t *out, k8s_autopath_outcome_t *step)
{
	for (;;) {
		switch (s->step) {
		case K8S_AUTOPATH_NAMESPACE:
			s->step++;
			if (s->list == NULL && s->ns != NULL && svc_domain(out, s->ns, s->zone)) {
				*step = K8S_AUTOPATH_NAMESPACE;
				return true;
			}
			break;
		case K8S_AUTOPATH_SVC:
		case K8S_AUTOPATH_CLUSTER:
			*step = s->step++;
			if (s->list != NULL) {
				break;
			}
			if (*step == K8S_AUTOPATH_SVC) {
				if (svc_domain(out, NULL, s->zone)) {
					return true;
				}
				break;
			}
			memcpy(out, s->zone, knot_dname_size(s->zone));
			return true;
		case K8S_AUTOPATH_HOST: {
			if (s->list != NULL || s->host >= s->conf->host_search_count) {
				s->step++;
				break;
			}
			*step = K8S_AUTOPATH_HOST;
			const knot_dname_t *host = s->conf->host_search[s->host++];
			memcpy(out, host, knot_dname_size(host));
			return true;
		}
		case K8S_AUTOPATH_LISTED:
			if (s->list != NULL && list_next(s, out)) {
				*step = K8S_AUTOPATH_LISTED;
				return true;
			}
			s->step++;
			break;
		case K8S_AUTOPATH_NAME:
			s->step++;
			*step = K8S_AUTOPATH_NAME;
			out[0] = '\0';
			return true;
		default:
			return false;
		}
	}
}

/*! \brief A candidate: the name's labels, then a search domain (a wire dname), into \a out. */
static size_t candidate(uint8_t out[KNOT_DNAME_MAXLEN], const uint8_t *name, size_t name_size,
                        const knot_dname_t *domain)
{
	size_t domain_size = knot_dname_size(domain);
	if (name_size + domain_size > KNOT_DNAME_MAXLEN) {
		return 0;
	}
	memcpy(out, name, name_size);
	memcpy(out + name_size, domain, domain_size);
	return name_size + domain_size;
}

/*!
 * \brief Where the answer section stood before a candidate was tried.
 *
 * A candidate is answered right after the CNAME to it, so that the ADDITIONAL
 * stage sees its SRV records where they are; a candidate that does not exist
 * has put nothing but that CNAME, which rewinding takes back.
 */
typedef struct {
	size_t size;
	uint16_t rrset_count;
	uint16_t answer_count;
	uint16_t ancount;
	uint16_t suffix_pos;
	uint8_t suffix_labels;
} mark_t;

static void pkt_mark(const knot_pkt_t *pkt, mark_t *m)
{
	m->size = pkt->size;
	m->rrset_count = pkt->rrset_count;
	m->answer_count = pkt->sections[KNOT_ANSWER].count;
	m->ancount = knot_wire_get_ancount(pkt->wire);
	m->suffix_pos = pkt->compr.suffix.pos;
	m->suffix_labels = pkt->compr.suffix.labels;
}

static void pkt_rewind(knot_pkt_t *pkt, const mark_t *m)
{
	pkt->size = m->size;
	pkt->rrset_count = m->rrset_count;
	pkt->sections[KNOT_ANSWER].count = m->answer_count;
	knot_wire_set_ancount(pkt->wire, m->ancount);
	pkt->compr.suffix.pos = m->suffix_pos;
	pkt->compr.suffix.labels = m->suffix_labels;
}

/*! \brief What is known of a candidate. */
typedef enum {
	CAND_ABSENT,    /*!< NXDOMAIN: on to the next step. */
	CAND_NODATA,    /*!< Exists without records of the type: on, but remembered. */
	CAND_DONE,      /*!< Answered (or failed): the walk ends with \a res. */
	CAND_UNKNOWN,   /*!< Outside our zones, not known without waiting: the walk ends. */
	CAND_COLD,      /*!< Outside our zones, asked for: the walk ends. */
	CAND_FAILED,    /*!< Outside our zones, the upstream failed: the walk ends, NXDOMAIN. */
} cand_t;

/*! \brief The cached upstream answer of a name outside our zones, or NULL (\a cold says why). */
static const k8s_fwd_entry_t *outside(k8s_qctx_t *c, const knot_dname_t *name, bool *cold)
{
	const k8s_fwd_entry_t *ext = NULL;
	*cold = false;
	// Only addresses are cached: for other types, the client asks where they are.
	if (c->conf->upstream == NULL ||
	    (c->qtype != KNOT_RRTYPE_A && c->qtype != KNOT_RRTYPE_AAAA)) {
		return NULL;
	}
	if (k8s_keeper_lookup(c->conf->upstream, name, c->qtype, &ext) != K8S_UPSTREAM_READY) {
		*cold = true;
		return NULL;
	}
	return ext;
}

/*! \brief Tries one candidate: CNAME qname to it, then its records. */
static cand_t try_candidate(k8s_qctx_t *c, const knot_dname_t *qname, const knot_dname_t *owner,
                            k8s_answer_t *res)
{
	k8s_zone_t z = zone_of(c->conf, owner);
	const k8s_fwd_entry_t *ext = NULL;
	if (z == K8S_ZONE_COUNT) {
		bool cold;
		ext = outside(c, owner, &cold);
		if (ext == NULL) {
			return cold ? CAND_COLD : CAND_UNKNOWN;
		}
		// No upstream answered (a dead target): as the walk's deadline would end it.
		if (k8s_upstream_unreachable(ext)) {
			*res = K8S_ANSWER_UNREACHABLE;
			return CAND_DONE;
		}
		// REFUSED or SERVFAIL: NXDOMAIN lets the client go on (musl stops at SERVFAIL).
		if (k8s_upstream_failed(ext)) {
			return CAND_FAILED;
		}
		// NXDOMAIN (even at the end of a CNAME chain) sends a client on, as it does here.
		if (k8s_upstream_rcode(ext) == KNOT_RCODE_NXDOMAIN) {
			return CAND_ABSENT;
		}
		if (!k8s_upstream_has_records(ext)) {
			return CAND_NODATA;
		}
	} else {
		uint32_t ready = (z == K8S_ZONE_CLUSTER) ? K8S_READY_CLUSTER : K8S_READY_CLUSTERSET;
		if (!(k8s_table_ready(c->t) & ready)) {
			return CAND_ABSENT;
		}
	}

	mark_t mark;
	pkt_mark(c->pkt, &mark);
	int ret = put_cname(c, qname, qname, owner);
	if (ret != KNOT_EOK) {
		*res = put_result(ret);
		return CAND_DONE;
	}
	if (ext != NULL) {
		*res = k8s_answer_upstream(c, ext, qname, 0);
		return CAND_DONE;
	}
	*res = k8s_answer_name(c, owner, qname, zone_role(z), c->conf->domains[z], 0);
	switch (*res) {
	case K8S_ANSWER_NXDOMAIN:
	case K8S_ANSWER_PASS:
		pkt_rewind(c->pkt, &mark);
		return CAND_ABSENT;
	case K8S_ANSWER_NODATA:
		pkt_rewind(c->pkt, &mark);
		return CAND_NODATA;
	default:
		return CAND_DONE;
	}
}

/*! \brief A name in the packet's mempool. */
static knot_dname_t *name_copy(k8s_qctx_t *c, const uint8_t *name, size_t size)
{
	knot_dname_t *copy = mm_get(c->mm, size);
	if (copy != NULL) {
		memcpy(copy, name, size);
	}
	return copy;
}

/*! \brief Asks for the names outside our zones that the rest of the walk would need. */
static void ask_rest(k8s_qctx_t *c, search_t *s, const uint8_t *name, size_t name_size)
{
	knot_dname_storage_t domain;
	k8s_autopath_outcome_t step;
	while (search_next(s, domain, &step)) {
		uint8_t cand[KNOT_DNAME_MAXLEN];
		bool cold;
		if (candidate(cand, name, name_size, domain) > 0 && !k8s_fedfwd_name(cand) &&
		    zone_of(c->conf, cand) == K8S_ZONE_COUNT && outside(c, cand, &cold) == NULL &&
		    cold && !k8s_keeper_ask(c->conf->upstream, cand, qctx_tenant(c))) {
			return;  // No room: a later query asks again.
		}
	}
}

/*!
 * \brief Walks the search list for \a name (its labels, no root label) as a
 * client's resolver would: the first name that exists is answered; a name that
 * exists without records of the type is passed, as glibc passes it, and
 * answered only if no later name exists.
 */
static k8s_answer_t walk(k8s_qctx_t *c, const knot_dname_t *qname, const uint8_t *name,
                         size_t name_size, search_t *s, k8s_autopath_outcome_t *outcome)
{
	knot_dname_t *nodata = NULL;
	k8s_autopath_outcome_t nodata_step = K8S_AUTOPATH_NONE;
	knot_dname_storage_t domain;
	k8s_autopath_outcome_t step;
	while (search_next(s, domain, &step)) {
		uint8_t cand[KNOT_DNAME_MAXLEN];
		size_t cand_size = candidate(cand, name, name_size, domain);
		if (cand_size == 0) {
			continue;  // Longer than a name: the client's resolver skips it too.
		}
		// Federated services are asked for by their full name only (the design's caveat).
		if (k8s_fedfwd_name(cand)) {
			continue;
		}
		knot_dname_t *owner = name_copy(c, cand, cand_size);
		if (owner == NULL) {
			return K8S_ANSWER_SERVFAIL;
		}
		k8s_answer_t res = K8S_ANSWER_NXDOMAIN;
		switch (try_candidate(c, qname, owner, &res)) {
		case CAND_ABSENT:
			continue;
		case CAND_NODATA:
			if (nodata == NULL) {
				nodata = owner;
				nodata_step = step;
			}
			continue;
		case CAND_DONE:
			*outcome = step;
			return res;
		case CAND_COLD:
			(void)k8s_keeper_ask(c->conf->upstream, owner, qctx_tenant(c));
			ask_rest(c, s, name, name_size);
			if (nodata == NULL) {
				*outcome = K8S_AUTOPATH_COLD;
				return K8S_ANSWER_NXDOMAIN;
			}
			break;
		case CAND_UNKNOWN:
		case CAND_FAILED:
			break;
		}
		break;
	}
	if (nodata == NULL) {
		*outcome = K8S_AUTOPATH_FELL_THROUGH;
		return K8S_ANSWER_NXDOMAIN;
	}

	// The name that exists without records: its CNAME (and its chain, if it is outside).
	*outcome = nodata_step;
	int ret = put_cname(c, qname, qname, nodata);
	if (ret != KNOT_EOK) {
		return put_result(ret);
	}
	if (zone_of(c->conf, nodata) == K8S_ZONE_COUNT) {
		bool cold;
		const k8s_fwd_entry_t *ext = outside(c, nodata, &cold);
		if (ext != NULL) {
			return k8s_answer_upstream(c, ext, qname, 0);
		}
	}
	return K8S_ANSWER_HIT;
}

/*!
 * \brief Answers <name>.search.<ns>.<cluster domain>.<autopath zone> by walking the
 * search list of the query's EDNS option, or else the pod's: <ns>.svc.<cluster
 * domain>, svc.<cluster domain>, <cluster domain>, the host's domains, the name.
 */
k8s_answer_t k8s_autopath_answer(k8s_qctx_t *c, const knot_dname_t *qname, const knot_pkt_t *query,
                                 k8s_autopath_outcome_t *outcome)
{
	const k8s_answer_conf_t *conf = c->conf;
	const knot_dname_t *suffix = conf->domains[K8S_ZONE_CLUSTER];
	size_t suffix_labels = knot_dname_labels(suffix, NULL);
	size_t suffix_size = knot_dname_size(suffix) - 1;
	*outcome = K8S_AUTOPATH_NONE;

	const uint8_t *labels[KNOT_DNAME_MAXLABELS];
	size_t total = 0;
	for (const uint8_t *l = qname; *l != 0; l += 1 + *l) {
		labels[total++] = l;
	}
	size_t n = total - knot_dname_labels(conf->zone, NULL);
	if (n == 0) {
		return K8S_ANSWER_PASS;
	}

	// Right below the zone apex: the cluster domain, else the name cannot be a search path.
	const uint8_t *apex = labels[n - 1] + 1 + labels[n - 1][0];
	if (n <= suffix_labels) {
		const uint8_t *tail = suffix;
		for (size_t skip = suffix_labels - n; skip > 0; skip--) {
			tail += 1 + tail[0];
		}
		// Sizes first: either name may be the shorter, and neither is read past its end.
		size_t size = apex - qname;
		bool equal = size == knot_dname_size(tail) - 1 && memcmp(tail, qname, size) == 0;
		return equal ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	}
	const uint8_t *domain = labels[n - suffix_labels];
	if ((size_t)(apex - domain) != suffix_size || memcmp(domain, suffix, suffix_size) != 0) {
		return K8S_ANSWER_NXDOMAIN;
	}
	const uint8_t *ns = labels[n - suffix_labels - 1];
	if (!k8s_table_ns(c->t, ns)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (n == suffix_labels + 1) {
		return K8S_ANSWER_NODATA;  // <ns>.<suffix>: above the search domain.
	}
	if (!k8s_label_is(labels[n - suffix_labels - 2], "search")) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (n == suffix_labels + 2) {
		return K8S_ANSWER_NODATA;  // The search domain itself.
	}

	search_t s = { .conf = conf, .ns = ns, .zone = suffix, .step = K8S_AUTOPATH_NAMESPACE };
	uint8_t *opt = NULL;
	if (conf->autopath_option != 0 && query != NULL && query->opt_rr != NULL) {
		opt = knot_edns_get_option(query->opt_rr, conf->autopath_option, NULL);
	}
	if (opt != NULL) {
		s.list = (const char *)knot_edns_opt_get_data(opt);
		s.list_len = knot_edns_opt_get_length(opt);
		// Refused whole rather than cut: the domain left out could be the one that matches.
		if (list_count(s.list, s.list_len) > K8S_AUTOPATH_MAX_LISTED) {
			*outcome = K8S_AUTOPATH_REFUSED;
			return K8S_ANSWER_REFUSED;
		}
	}
	return walk(c, qname, qname, labels[n - suffix_labels - 2] - qname, &s, outcome);
}

/*!
 * \brief The client-address form: <name>.<ns>.svc.<zone>, which does not exist,
 * asked by a pod of <ns> is walked on from svc.<zone>, as CoreDNS's
 * `autopath @kubernetes` does.
 */
k8s_answer_t k8s_autopath_client(k8s_qctx_t *c, const knot_dname_t *qname, const uint8_t *ns,
                                 const struct sockaddr_storage *remote,
                                 k8s_autopath_outcome_t *outcome)
{
	const k8s_answer_conf_t *conf = c->conf;
	// <name>.<ns>.svc.<zone>: the query name's parse found the shape (qname.h's svc_ns).
	k8s_ip_t ip;
	if (ns == NULL || remote == NULL || !k8s_client_ip(remote, &ip)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	// Only a pod's own namespace is first in its search list; a node's address has another list.
	const uint8_t *pod_ns = k8s_table_pod_ns(c->t, &ip);
	if (pod_ns == NULL || !k8s_label_equal(pod_ns, ns)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	search_t s = { .conf = conf, .zone = conf->zone, .step = K8S_AUTOPATH_SVC };
	return walk(c, qname, qname, ns - qname, &s, outcome);
}
