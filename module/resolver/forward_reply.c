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
 * A waiting client's late answer (forward_priv.h): the response built on its saved
 * query with libknot (the cached entry's records, or an RCODE with an Extended DNS Error)
 * and sent from knotd's socket.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/dnsmetrics.h"
#include "resolver/forward_priv.h"
#include "resolver/late.h"

static void send_answer(k8s_fwd_t *f, waiter_t *w, size_t size)
{
	k8s_late_send_from(w->fd, w->tcp, &w->remote, &w->local, f->out, size);
	k8s_dnsmetrics_late(w->tcp, &w->remote, &w->local, w->wire, w->len, f->out + 2, size,
	                    w->received_ns, K8S_DNSMETRICS_FORWARD);
}

void forward_reply(k8s_fwd_t *f, waiter_t *w, const k8s_fwd_entry_t *e, uint16_t rcode,
                   int ede, const char *ede_text, uint64_t now)
{
	knot_pkt_t *q = knot_pkt_new(w->wire, w->len, NULL);
	knot_pkt_t *r = NULL;
	if (q == NULL || knot_pkt_parse(q, 0) != KNOT_EOK) {
		goto done;
	}
	size_t max = w->tcp ? KNOT_WIRE_MAX_PKTSIZE : k8s_late_udp_limit(q, w->remote.ss_family);
	r = knot_pkt_new(f->out + 2, max, NULL);
	if (r == NULL || knot_pkt_init_response(r, q) != KNOT_EOK) {
		goto done;
	}
	knot_wire_set_ra(r->wire);

	knot_rrset_t opt;
	bool with_opt = knot_pkt_has_edns(q);
	if (with_opt) {
		if (knot_edns_init(&opt, k8s_late_payload(w->remote.ss_family), 0, KNOT_EDNS_VERSION,
		                   &r->mm) != KNOT_EOK) {
			goto done;
		}
		if (e == NULL && ede >= 0) {
			uint8_t data[2 + 64];
			size_t text_len = strnlen(ede_text, 64);
			data[0] = ede >> 8;
			data[1] = ede & 0xff;
			memcpy(data + 2, ede_text, text_len);
			(void)knot_edns_add_option(&opt, KNOT_EDNS_OPTION_EDE, 2 + text_len, data,
			                           &r->mm);
		}
		(void)knot_pkt_reserve(r, knot_edns_wire_size(&opt));
	}
	if (e != NULL) {
		rcode = e->rcode;
		if (k8s_fwd_entry_put(e, r, now) != KNOT_EOK) {
			rcode = KNOT_RCODE_SERVFAIL;
		}
	}
	knot_wire_set_rcode(r->wire, rcode);
	if (with_opt) {
		(void)knot_pkt_reclaim(r, knot_edns_wire_size(&opt));
		if (knot_pkt_begin(r, KNOT_ADDITIONAL) != KNOT_EOK ||
		    knot_pkt_put(r, KNOT_COMPR_HINT_NONE, &opt, KNOT_PF_FREE) != KNOT_EOK) {
			knot_rrset_clear(&opt, &r->mm);
		}
	}
	send_answer(f, w, r->size);
	f->st.answered++;
	f->st.servfail += (rcode == KNOT_RCODE_SERVFAIL);
done:
	knot_pkt_free(r);
	knot_pkt_free(q);
	forward_waiter_free(f, w);
}

void forward_reply_all(k8s_fwd_t *f, name_t *n, const k8s_fwd_entry_t *e, uint16_t rcode,
                       int ede, const char *ede_text, uint64_t now)
{
	while (n->waiters != NULL) {
		waiter_t *w = n->waiters;
		n->waiters = w->next;
		forward_reply(f, w, e, rcode, ede, ede_text, now);
	}
}
