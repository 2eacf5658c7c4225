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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer/answer_priv.h"
#include "lib/dnsname.h"
#include "answer/fedname.h"

static const uint8_t fedfwd_zone[K8S_FEDFWD_ZONE_SIZE] = K8S_FEDFWD_ZONE;

bool k8s_fedfwd_name(const knot_dname_t *name)
{
	return knot_dname_in_bailiwick(name, fedfwd_zone) >= 0;
}

/*! \brief True if a wire label is an RFC 1123 label (or an RFC 1035 one, as kube-dns asks). */
static bool label_valid(const uint8_t *label, bool rfc1035)
{
	const char *text = (const char *)label + 1;
	return rfc1035 ? k8s_dns1035_label_valid(text, label[0])
	               : k8s_dns_label_valid(text, label[0], false);
}

int k8s_federation_parse(const char *text, k8s_federation_t *fed, char *err, size_t errlen)
{
	memset(fed, 0, sizeof(*fed));
	const char *eq = strchr(text, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "not NAME=DOMAIN");
		return KNOT_EINVAL;
	}
	size_t name_len = eq - text;
	if (memchr(text, '.', name_len) != NULL ||
	    k8s_dns_name_labels(text, name_len, false, fed->name, sizeof(fed->name)) == 0) {
		snprintf(err, errlen, "the name is no lowercase DNS label");
		return KNOT_EINVAL;
	}
	const char *domain = eq + 1;
	size_t domain_len = strlen(domain);
	if (domain_len > 0 && domain[domain_len - 1] == '.') {
		domain_len--;  // An absolute name says the same.
	}
	size_t size = k8s_dns_name_labels(domain, domain_len, false, fed->domain,
	                                    KNOT_DNAME_MAXLEN - 1);
	if (size == 0) {
		snprintf(err, errlen, "the domain is no lowercase DNS name");
		return KNOT_EINVAL;
	}
	fed->domain[size] = '\0';
	return KNOT_EOK;
}

bool k8s_federation_node_valid(const char *name)
{
	uint8_t labels[KNOT_DNAME_MAXLEN];
	return k8s_dns_name_labels(name, strlen(name), false, labels, sizeof(labels) - 1) > 0;
}

bool k8s_federation_query(const k8s_federation_t *feds, size_t count, const k8s_qname_t *q,
                          k8s_fedquery_t *fq)
{
	// <svc>.<ns>.<fed>.svc.<zone> parses as the endpoint <svc> of service <ns> in namespace <fed>.
	if (count == 0 || q->kind != K8S_Q_SUBNAME || q->sub_count != 1) {
		return false;
	}
	const uint8_t *svc = q->sub[0], *ns = q->owner, *name = q->ns;
	if (!label_valid(svc, true) || !label_valid(ns, false)) {
		return false;
	}
	for (size_t i = 0; i < count; i++) {
		if (k8s_label_equal(feds[i].name, name)) {
			fq->fed = &feds[i];
			fq->owner = svc;
			fq->owner_len = (ns + 1 + ns[0]) - svc;
			fq->ns = ns;
			fq->labels = svc;
			fq->labels_len = (q->owner + q->owner_len + 4) - svc;  // Up to and with "svc".
			return true;
		}
	}
	return false;
}

bool k8s_federation_local(const k8s_block_t *svc)
{
	switch (svc->type) {
	case K8S_SVC_EXTERNALNAME:
		return true;
	case K8S_SVC_HEADLESS:
		return svc->rrs_a.count + svc->rrs_aaaa.count > 0;
	default:
		return svc->ready_count > 0;
	}
}

size_t k8s_federation_remote_name(const k8s_fedquery_t *fq, const k8s_topology_t *topology,
                                  uint8_t out[KNOT_DNAME_MAXLEN])
{
	size_t domain_size = knot_dname_size(fq->fed->domain);
	size_t topology_size = (topology != NULL) ? topology->size : 0;
	if (fq->labels_len + topology_size + domain_size > KNOT_DNAME_MAXLEN) {
		topology_size = 0;  // The global name is the next best.
	}
	size_t size = fq->labels_len + topology_size + domain_size;
	if (size > KNOT_DNAME_MAXLEN) {
		return 0;
	}
	uint8_t *pos = out;
	memcpy(pos, fq->labels, fq->labels_len);
	pos += fq->labels_len;
	if (topology_size > 0) {
		memcpy(pos, topology->labels, topology_size);
		pos += topology_size;
	}
	memcpy(pos, fq->fed->domain, domain_size);
	return size;
}

/*!
 * \brief A federated service: a CNAME to the local service while it has
 * endpoints, followed by its records; else a CNAME to the federation's name for
 * this cluster's zone and region, followed through the upstream when there is one.
 */
k8s_answer_t k8s_federation_answer(k8s_qctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_fedquery_t *fq,
                                   const knot_dname_t *zone, unsigned depth)
{
	const k8s_block_t *svc = NULL;
	if (k8s_table_ns(c->t, fq->ns)) {
		svc = k8s_table_block(c->t, K8S_ZONE_CLUSTER, fq->owner, fq->owner_len);
	}
	bool local = svc != NULL && k8s_federation_local(svc);

	uint8_t name[KNOT_DNAME_MAXLEN];
	size_t size;
	if (local) {
		size = write_name(name, sizeof(name), svc, NULL, zone);
	} else {
		const k8s_topology_t *topology = c->conf->topology;
		if (topology == NULL) {
			topology = k8s_table_topology(c->t);
		}
		size = k8s_federation_remote_name(fq, topology, name);
	}
	if (size == 0) {
		return K8S_ANSWER_NXDOMAIN;  // Longer than a DNS name: no name to point to.
	}
	knot_dname_t *target = mm_get(c->mm, size);
	if (target == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	memcpy(target, name, size);

	int ret = put_cname(c, owner, qname, target);
	if (ret != KNOT_EOK || c->qtype == KNOT_RRTYPE_CNAME) {
		return put_result(ret);
	}
	if (local) {
		return k8s_answer_follow(c, target, qname, K8S_ROLE_CLUSTER, zone, depth);
	}
	/*
	 * The remote name goes through the upstream as an ExternalName target does:
	 * asked for by the query (a lock-free hand-over to the forwarder's kept names,
	 * k8s_keeper_ask()) and answered late once cached (cold).
	 */
	return k8s_answer_target(c, target, qname, depth);
}
