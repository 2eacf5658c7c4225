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

/* Server-side search path expansion (KEP "DNS Autopath in PodSpec"). */

#include <stddef.h>
#include <string.h>

#include "answer_priv.h"

/*! \brief Most search paths taken from a query's EDNS option. */
#define MAX_SEARCH 8

/*! \brief A candidate: the name's labels, then a search path (a wire dname), into \a out. */
static size_t candidate(uint8_t out[KNOT_DNAME_MAXLEN], const uint8_t *name, size_t name_size,
                        const knot_dname_t *path)
{
	size_t path_size = knot_dname_size(path);
	if (name_size + path_size > KNOT_DNAME_MAXLEN) {
		return 0;
	}
	memcpy(out, name, name_size);
	memcpy(out + name_size, path, path_size);
	return name_size + path_size;
}

/*! \brief The search list: the query's EDNS option (comma-separated domains) or the KEP's three. */
static size_t search_list(const ctx_t *c, const knot_pkt_t *query, const uint8_t *ns,
                          knot_dname_storage_t paths[MAX_SEARCH])
{
	const knot_dname_t *suffix = c->conf->domains[K8S_ZONE_CLUSTER];
	uint8_t *opt = NULL;
	if (c->conf->autopath_option != 0 && query != NULL && query->opt_rr != NULL) {
		opt = knot_edns_get_option(query->opt_rr, c->conf->autopath_option, NULL);
	}
	if (opt == NULL) {
		// <ns>.svc.<suffix>, svc.<suffix>, <suffix>: the pod's ClusterFirst search path.
		size_t ns_size = 1 + ns[0], suffix_size = knot_dname_size(suffix);
		if (ns_size + 4 + suffix_size > KNOT_DNAME_MAXLEN) {
			return 0;
		}
		memcpy(paths[0], ns, ns_size);
		memcpy(paths[0] + ns_size, "\x03svc", 4);
		memcpy(paths[0] + ns_size + 4, suffix, suffix_size);
		memcpy(paths[1], "\x03svc", 4);
		memcpy(paths[1] + 4, suffix, suffix_size);
		memcpy(paths[2], suffix, suffix_size);
		return 3;
	}

	size_t count = 0, len = knot_edns_opt_get_length(opt);
	const char *text = (const char *)knot_edns_opt_get_data(opt);
	for (size_t start = 0; start < len && count < MAX_SEARCH; ) {
		size_t end = start;
		while (end < len && text[end] != ',') {
			end++;
		}
		char domain[KNOT_DNAME_TXT_MAXLEN + 1];
		size_t size = end - start;
		if (size > 0 && size < sizeof(domain)) {
			memcpy(domain, text + start, size);
			domain[size] = '\0';
			if (knot_dname_from_str(paths[count], domain, KNOT_DNAME_MAXLEN) != NULL) {
				knot_dname_to_lower(paths[count++]);
			}
		}
		start = end + 1;
	}
	return count;
}

/*!
 * \brief Answers <name>.search.<ns>.<cluster domain>.<autopath zone> from the first name of
 * the search list that exists in our zones: a CNAME to it, then its records.
 *
 * Only names in our zones are tried, so nothing waits on the network; when none
 * exists the answer is NXDOMAIN and the client goes on with the absolute name.
 */
k8s_answer_t k8s_autopath_answer(ctx_t *c, const knot_dname_t *qname, const knot_pkt_t *query)
{
	const k8s_answer_conf_t *conf = c->conf;
	const knot_dname_t *suffix = conf->domains[K8S_ZONE_CLUSTER];
	size_t suffix_labels = knot_dname_labels(suffix, NULL);
	size_t suffix_size = knot_dname_size(suffix) - 1;

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
	const uint8_t *name = qname;
	size_t name_size = labels[n - suffix_labels - 2] - qname;

	knot_dname_storage_t paths[MAX_SEARCH];
	size_t path_count = search_list(c, query, ns, paths);

	// Each candidate is answered aside; the first one that exists is copied over.
	knot_pkt_t *scratch = knot_pkt_new(NULL, c->pkt->max_size, c->mm);
	if (scratch == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	ctx_t aside = *c;
	aside.pkt = scratch;
	for (size_t i = 0; i < path_count; i++) {
		uint8_t cand[KNOT_DNAME_MAXLEN];
		size_t cand_size = candidate(cand, name, name_size, paths[i]);
		if (cand_size == 0) {
			continue;
		}
		k8s_zone_t z = zone_of(conf, cand);
		if (z == K8S_ZONE_COUNT) {
			continue;  // Not ours: answering it would wait on the network.
		}
		uint32_t ready = (z == K8S_ZONE_CLUSTER) ? K8S_READY_CLUSTER : K8S_READY_CLUSTERSET;
		if (!(k8s_table_ready(c->t) & ready)) {
			continue;
		}
		knot_dname_t *owner = mm_get(c->mm, cand_size);
		if (owner == NULL) {
			return K8S_ANSWER_SERVFAIL;
		}
		memcpy(owner, cand, cand_size);
		k8s_answer_t res = k8s_answer_name(&aside, owner, qname, zone_role(z), conf->domains[z], 0);
		if (res == K8S_ANSWER_NXDOMAIN || res == K8S_ANSWER_PASS) {
			continue;
		}
		if (res != K8S_ANSWER_HIT && res != K8S_ANSWER_NODATA && res != K8S_ANSWER_HIT_NXDOMAIN) {
			return res;
		}

		// qname CNAME <candidate>, then what the candidate answered.
		int ret = put_cname(c, qname, qname, owner);
		for (uint16_t j = 0; ret == KNOT_EOK && j < scratch->rrset_count; j++) {
			ret = knot_pkt_put(c->pkt, KNOT_COMPR_HINT_NONE, &scratch->rr[j], 0);
		}
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
		return (res == K8S_ANSWER_HIT_NXDOMAIN) ? K8S_ANSWER_HIT_NXDOMAIN : K8S_ANSWER_HIT;
	}
	return K8S_ANSWER_NXDOMAIN;
}
