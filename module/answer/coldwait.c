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

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "lib/clock.h"
#include "answer/coldwait.h"
#include "ops/dnsmetrics.h"
#include "resolver/late.h"
#include "answer/outcome.h"
#include "resolver/slots.h"
#include "forward/keeper.h"

/*! \brief The thread's memory for one try (an answer needs a few KiB). */
#define ARENA_SIZE (256 * 1024)
/*! \brief An SOA's rdata at most: two names and five 32-bit numbers. */
#define SOA_RDATA_MAX (2 * KNOT_DNAME_MAXLEN + 20)
/*! \brief Room kept for the OPT record and its Extended DNS Error. */
#define OPT_RESERVE (KNOT_EDNS_MIN_SIZE + KNOT_EDNS_OPTION_HDRLEN + 2 + 32)
/*! \brief The deadline's Extended DNS Error: 22, No Reachable Authority. */
#define EDE_DEADLINE 22
#define EDE_DEADLINE_TEXT "upstream answer not in time"

typedef struct {
	k8s_slot_t h;  /*!< First: the hand-over's state, the client, the query's length. */
	uint16_t soa_len;
	uint32_t soa_ttl;
	uint64_t deadline_ms;
	uint8_t wire[K8S_COLD_QUERY_MAX];
	uint8_t soa_owner[KNOT_DNAME_MAXLEN];
	uint8_t soa_rdata[SOA_RDATA_MAX];
} slot_t;

/*! \brief Slots in all: the waiting queries' cap and its headroom (share.h). */
#define SLOT_ROOM (K8S_COLD_SLOTS + K8S_COLD_SLOTS / K8S_SHARE_HEADROOM_PART)

struct k8s_cold {
	k8s_cold_answer_fn answer;
	void *ctx;
	k8s_log_t log;
	unsigned deadline_ms;                    /*!< A waiting query's, then SERVFAIL. */
	char owner[KNOT_DNAME_TXT_MAXLEN + 1];   /*!< Its pool's label: the zone's name. */
	k8s_slots_t handoff;                     /*!< Over \a slots. */
	k8s_share_t waiting;                     /*!< The waiting queries, by tenant. */
	pthread_t thread;
	knot_mm_t mm;                            /*!< Allocates from \a arena, reset after each try. */
	size_t arena_used;
	max_align_t arena[ARENA_SIZE / sizeof(max_align_t)];
	uint8_t out[2 + KNOT_WIRE_MAX_PKTSIZE];  /*!< The response, after a TCP length. */
	slot_t slots[SLOT_ROOM];
};

static void *arena_alloc(void *ctx, size_t len)
{
	k8s_cold_t *w = ctx;
	size_t align = sizeof(max_align_t);
	size_t need = (len + align - 1) / align;
	if (len > ARENA_SIZE || need > ARENA_SIZE / align - w->arena_used) {
		return NULL;
	}
	void *p = &w->arena[w->arena_used];
	w->arena_used += need;
	return p;
}

static void slot_release(k8s_cold_t *w, slot_t *s)
{
	k8s_slots_release(&s->h, true);
}

static void send_answer(k8s_cold_t *w, const slot_t *s, size_t size)
{
	k8s_late_send_from(s->h.fd, s->h.tcp, &s->h.remote, &s->h.local, w->out, size);
	k8s_dnsmetrics_late(s->h.tcp, &s->h.remote, &s->h.local, s->wire, s->h.len, w->out + 2,
	                    size, s->h.received_ns, K8S_DNSMETRICS_KUBERNETES);
}

/*! \brief A fresh response to \a q with room for the OPT record, at the ANSWER section. */
static knot_pkt_t *response_new(k8s_cold_t *w, const slot_t *s, const knot_pkt_t *q)
{
	size_t max = s->h.tcp ? KNOT_WIRE_MAX_PKTSIZE : k8s_late_udp_limit(q, s->h.remote.ss_family);
	knot_pkt_t *r = knot_pkt_new(w->out + 2, max, &w->mm);
	if (r == NULL || knot_pkt_init_response(r, q) != KNOT_EOK ||
	    (knot_pkt_has_edns(q) && knot_pkt_reserve(r, OPT_RESERVE) != KNOT_EOK) ||
	    knot_pkt_begin(r, KNOT_ANSWER) != KNOT_EOK) {
		knot_pkt_free(r);
		return NULL;
	}
	return r;
}

/*! \brief The authority section of a negative answer: the zone's SOA (TTL: its minimum at most). */
static void put_soa(k8s_cold_t *w, const slot_t *s, knot_pkt_t *r)
{
	if (s->soa_len == 0) {
		return;
	}
	uint32_t ttl = s->soa_ttl;
	knot_rrset_t soa;
	knot_rrset_init(&soa, (knot_dname_t *)s->soa_owner, KNOT_RRTYPE_SOA, KNOT_CLASS_IN, ttl);
	if (knot_rrset_add_rdata(&soa, s->soa_rdata, s->soa_len, &w->mm) != KNOT_EOK) {
		return;
	}
	uint32_t minimum = knot_soa_minimum(soa.rrs.rdata);
	soa.ttl = (minimum < ttl) ? minimum : ttl;
	if (knot_pkt_begin(r, KNOT_AUTHORITY) != KNOT_EOK ||
	    knot_pkt_put(r, KNOT_COMPR_HINT_NONE, &soa, 0) != KNOT_EOK) {
		knot_wire_set_tc(r->wire);
	}
}

/*! \brief The OPT record, with an Extended DNS Error when \a ede >= 0. */
static void put_opt(k8s_cold_t *w, knot_pkt_t *r, int ede, const char *ede_text)
{
	knot_rrset_t opt;
	if (knot_edns_init(&opt, K8S_LATE_EDNS_PAYLOAD, 0, KNOT_EDNS_VERSION, &w->mm) != KNOT_EOK) {
		return;
	}
	if (ede >= 0) {
		uint8_t data[2 + 32];
		size_t text_len = strlen(ede_text);
		text_len = (text_len < 32) ? text_len : 32;
		data[0] = ede >> 8;
		data[1] = ede & 0xff;
		memcpy(data + 2, ede_text, text_len);
		(void)knot_edns_add_option(&opt, KNOT_EDNS_OPTION_EDE, 2 + text_len, data, &w->mm);
	}
	(void)knot_pkt_reclaim(r, OPT_RESERVE);
	if (knot_pkt_begin(r, KNOT_ADDITIONAL) != KNOT_EOK ||
	    knot_pkt_put(r, KNOT_COMPR_HINT_NONE, &opt, 0) != KNOT_EOK) {
		knot_wire_set_tc(r->wire);
	}
}

/*!
 * \brief Answers a waiting query again: sent once it is no longer cold, or SERVFAIL
 * at its deadline; otherwise it keeps waiting. Returns true while it waits.
 */
static bool slot_try(k8s_cold_t *w, slot_t *s, uint64_t now)
{
	bool waits = false;
	knot_pkt_t *r = NULL;
	knot_pkt_t *q = knot_pkt_new(s->wire, s->h.len, &w->mm);
	if (q == NULL || knot_pkt_parse(q, 0) != KNOT_EOK) {
		goto done;
	}
	knot_dname_storage_t lower;
	if (knot_dname_to_wire(lower, knot_pkt_qname(q), sizeof(lower)) <= 0) {
		goto done;
	}
	knot_dname_to_lower(lower);

	urcu_memb_read_lock();
	r = response_new(w, s, q);
	if (r == NULL) {
		urcu_memb_read_unlock();
		goto done;
	}
	bool cold = false;
	k8s_answer_t res = w->answer(w->ctx, q, lower, &s->h.remote, r, &w->mm, &cold);
	if (cold && now < s->deadline_ms) {
		urcu_memb_read_unlock();
		waits = true;
		goto done;
	}
	const k8s_answer_reply_t *reply = &k8s_answer_replies[res];
	bool negative = reply->negative;
	int ede = reply->ede;
	const char *ede_text = (ede == EDE_DEADLINE) ? EDE_DEADLINE_TEXT : "";
	uint16_t rcode = reply->rcode;
	if (cold || rcode == KNOT_RCODE_SERVFAIL || rcode == KNOT_RCODE_REFUSED) {
		// Only the header and the question: what the answer put goes.
		knot_pkt_free(r);
		r = response_new(w, s, q);
		if (r == NULL) {
			urcu_memb_read_unlock();
			goto done;
		}
		if (cold) {
			rcode = KNOT_RCODE_SERVFAIL;
			ede = EDE_DEADLINE;
			ede_text = EDE_DEADLINE_TEXT;
		}
		negative = false;
	} else {
		knot_wire_set_aa(r->wire);
		if (res == K8S_ANSWER_TRUNC) {
			knot_wire_set_tc(r->wire);  // knotd's TRUNC state does so for a worker's answer.
		}
	}
	if (negative) {
		put_soa(w, s, r);
	}
	knot_wire_set_rcode(r->wire, rcode);
	if (knot_pkt_has_edns(q)) {
		put_opt(w, r, ede, ede_text);
	}
	send_answer(w, s, r->size);
	urcu_memb_read_unlock();
done:
	knot_pkt_free(r);
	knot_pkt_free(q);
	w->arena_used = 0;
	if (!waits) {
		slot_release(w, s);
	}
	return waits;
}

static void *cold_run(void *arg)
{
	k8s_cold_t *w = arg;
	urcu_memb_register_thread();
	// The worker asked for the name; a retry only looks it up (keeper.h says why).
	k8s_keeper_asks_off();
	bool waiting = false;
	while (!k8s_slots_stopping(&w->handoff)) {
		struct pollfd pfd = { .fd = w->handoff.wake_fd, .events = POLLIN };
		if (poll(&pfd, 1, waiting ? K8S_COLD_TICK_MS : -1) < 0 && errno != EINTR) {
			break;
		}
		if (pfd.revents != 0) {
			k8s_slots_woken(&w->handoff);
		}
		k8s_slots_looking(&w->handoff);
		uint64_t now = k8s_now_ms();
		waiting = false;
		k8s_share_log(&w->waiting, &w->log, now);
		k8s_share_log_process(&w->log, now);
		for (size_t i = 0; i < SLOT_ROOM; i++) {
			slot_t *s = (slot_t *)k8s_slots_ready(&w->handoff, i);
			if (s != NULL && slot_try(w, s, now)) {
				waiting = true;
			}
		}
		urcu_memb_quiescent_state();
	}
	urcu_memb_unregister_thread();
	return NULL;
}

k8s_cold_t *k8s_cold_new(k8s_cold_answer_fn answer, void *ctx, const char *owner,
                         unsigned deadline_ms, const k8s_log_t *log)
{
	k8s_cold_t *w = calloc(1, sizeof(*w));
	if (w == NULL) {
		return NULL;
	}
	w->answer = answer;
	w->ctx = ctx;
	w->log = *log;
	w->deadline_ms = (deadline_ms > 0) ? deadline_ms : K8S_COLD_DEADLINE_MS;
	snprintf(w->owner, sizeof(w->owner), "%s", owner);
	w->mm = (knot_mm_t){ .ctx = w, .alloc = arena_alloc };
	k8s_share_init(&w->waiting, K8S_COLD_SLOTS, "cold_waiting", w->owner);
	if (k8s_slots_init(&w->handoff, w->slots, SLOT_ROOM, sizeof(slot_t),
	                   &w->waiting) != KNOT_EOK) {
		free(w);
		return NULL;
	}
	if (pthread_create(&w->thread, NULL, cold_run, w) != 0) {
		k8s_slots_deinit(&w->handoff);
		free(w);
		return NULL;
	}
	k8s_share_register(&w->waiting);
	return w;
}

void k8s_cold_free(k8s_cold_t *w)
{
	if (w == NULL) {
		return;
	}
	k8s_share_unregister(&w->waiting);
	k8s_slots_stop(&w->handoff, w->thread);
	free(w);
}

bool k8s_cold_handoff(k8s_cold_t *w, const uint8_t *wire, size_t len, int fd, bool tcp,
                      const struct sockaddr_storage *remote,
                      const struct sockaddr_storage *local, const knot_rrset_t *soa,
                      k8s_tenant_t tenant)
{
	if (w == NULL || len > K8S_COLD_QUERY_MAX || fd < 0) {
		return false;
	}
	size_t soa_owner_len = 0;
	const knot_rdata_t *soa_rd = NULL;
	if (soa != NULL && soa->owner != NULL && soa->rrs.count > 0) {
		soa_owner_len = knot_dname_size(soa->owner);
		soa_rd = soa->rrs.rdata;
		if (soa_owner_len > KNOT_DNAME_MAXLEN || soa_rd->len > SOA_RDATA_MAX) {
			return false;
		}
	}
	slot_t *s = (slot_t *)k8s_slots_claim(&w->handoff, fd, tcp, len, remote, local, tenant);
	if (s == NULL) {
		return false;
	}
	memcpy(s->wire, wire, len);
	s->soa_len = 0;
	if (soa_rd != NULL) {
		memcpy(s->soa_owner, soa->owner, soa_owner_len);
		memcpy(s->soa_rdata, soa_rd->data, soa_rd->len);
		s->soa_len = soa_rd->len;
		s->soa_ttl = soa->ttl;
	}
	s->deadline_ms = k8s_now_ms() + w->deadline_ms;
	k8s_slots_publish(&w->handoff, &s->h);
	return true;
}

