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
 * The upstreams' health (forward_priv.h): a failing server marked down, logged at most
 * every forward_log_interval() per kind of failure, probed until it answers again; the loop probes
 * that find an upstream sending our queries back to us.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lib/clock.h"
#include "resolver/forward_priv.h"

/*! \brief A down server is probed this often. */
#define PROBE_MS 1000
/*! \brief Loop probes: at start, then this often (and to a server when it is marked down). */
#define LOOP_PROBE_MS 60000
/*! \brief A looping server is probed this often, to be used again once it stops looping. */
#define LOOP_RETRY_MS 5000
#define LOOP_LABEL "\x0c""mod-k8s-loop"
/*! \brief A probe name's first label: a 64-bit random token in hex. */
#define TOKEN_HEX 16

static const char *fail_text[FAIL_KINDS] = {
	"no answer within the deadline",
	"no answer within 300 ms",
	"transport error",
	"answered SERVFAIL or REFUSED",
};

static void loop_probe_name(uint8_t *name, uint64_t token)
{
	static const char hex[] = "0123456789abcdef";
	name[0] = TOKEN_HEX;
	for (int i = 0; i < TOKEN_HEX; i++) {
		name[1 + i] = hex[(token >> (4 * (TOKEN_HEX - 1 - i))) & 0xf];
	}
	memcpy(name + 1 + TOKEN_HEX, LOOP_LABEL, sizeof(LOOP_LABEL));  // With the root label.
}

/*! \brief \a s has no loop probe out: no name can mark it any more. */
static void loop_probe_end(k8s_fwd_t *f, server_t *s)
{
	k8s_dnsquery_close(&s->loop_probe);
	atomic_store(&f->loop_token[s - f->servers], 0);
}

/*!
 * \brief Sends \a s a loop probe under a fresh random name: only its return to us, while
 * it is out, marks \a s (a name seen once, echoed or replayed later, marks nothing).
 */
static void loop_probe_send(k8s_fwd_t *f, server_t *s, uint64_t now)
{
	loop_probe_end(f, s);
	uint64_t token = 0;
	if (getrandom(&token, sizeof(token), 0) != sizeof(token) || token == 0) {
		return;  // No name an upstream could not guess: no probe this time.
	}
	loop_probe_name(s->loop_name, token);
	// Published before the query leaves: it may come back at once.
	atomic_store(&f->loop_token[s - f->servers], token);
	if (k8s_dnsquery_start(&s->loop_probe, &s->addr, s->loop_name, KNOT_RRTYPE_HINFO,
	                       LOOP_PROBE_MS / 2, now) != KNOT_EOK) {
		atomic_store(&f->loop_token[s - f->servers], 0);
	}
}

/*!
 * \brief A line about a change of \a s's state (\a what), at most one per server every
 * forward_log_interval(): an upstream that flaps (slow past 300 ms, then answering; looping, then
 * not) is one line, with the changes not logged since.
 */
static void state_log(k8s_fwd_t *f, server_t *s, int kind, int priority,
                      const char *what_before, const char *what, uint64_t now)
{
	if (s->state_log_ms[kind] != 0 && now < s->state_log_ms[kind] + forward_log_interval(f)) {
		s->state_skipped[kind]++;
		return;
	}
	char skipped[64] = "";
	if (s->state_skipped[kind] > 0) {
		snprintf(skipped, sizeof(skipped), " (%u more changes since the last line)",
		         s->state_skipped[kind]);
	}
	k8s_logf(&f->log, priority, "forward, %supstream %s %s%s", what_before, s->text, what,
	         skipped);
	s->state_log_ms[kind] = now;
	s->state_skipped[kind] = 0;
}

/*! \brief \a s sent its loop probe back to us: not used until a later probe comes back clean. */
static void loop_found(k8s_fwd_t *f, server_t *s)
{
	// Its answer (ours, relayed back) says nothing more.
	loop_probe_end(f, s);
	s->loop_retry_ms = k8s_now_ms() + LOOP_RETRY_MS;
	if (s->looped) {
		return;
	}
	s->looped = true;
	f->st.loops++;
	state_log(f, s, STATE_LOOP, LOG_ERR, "loop detected: ", "sends our queries back to us, "
	          "it is not used until it stops (fix: the node's resolv.conf, which the pod "
	          "copies, must not name this DNS server or a local cache that forwards to it, "
	          "e.g. kubelet --resolv-conf=/run/systemd/resolve/resolv.conf instead of "
	          "127.0.0.53)", k8s_now_ms());
}

void forward_server_fail(k8s_fwd_t *f, server_t *s, int kind, const char *detail,
                         uint64_t now)
{
	size_t idx = s - f->servers;
	f->st.server[idx].failures += (kind != FAIL_TIMEOUT);
	f->st.server[idx].timeouts += (kind == FAIL_TIMEOUT);
	// CoreDNS's max_fails: down after more than that many failures in a row (0: never).
	s->fails++;
	bool mark = (s->set == NULL || !s->set->coredns) ||
	            (s->set->max_fails != 0 && s->fails > s->set->max_fails);
	bool logged = (now >= s->log_ms[kind] + forward_log_interval(f) || s->log_ms[kind] == 0);
	if (logged) {
		char skipped[48] = "";
		if (s->log_skipped[kind] > 0) {
			snprintf(skipped, sizeof(skipped), ", %u more since the last line",
			         s->log_skipped[kind]);
		}
		k8s_logf(&f->log, LOG_WARNING, "forward, upstream %s failed (%s%s%s%s)%s", s->text,
		         fail_text[kind], detail ? ": " : "", detail ? detail : "", skipped,
		         (s->down || !mark) ? "" : ", marked down");
		s->log_ms[kind] = now;
		s->log_skipped[kind] = 0;
	} else {
		s->log_skipped[kind]++;
	}
	if (mark && !s->down && !s->looped) {
		if (!logged) {
			k8s_logf(&f->log, LOG_WARNING, "forward, upstream %s marked down (%u failures "
			         "in a row)", s->text, s->fails);
		}
		s->down = true;
		s->next_probe_ms = now + PROBE_MS;
		// A loop that appears while running shows first as a server that stops answering.
		loop_probe_send(f, s, now);
	}
}

void forward_server_ok(k8s_fwd_t *f, server_t *s)
{
	s->probe_fails = 0;
	s->fails = 0;
	if (s->down) {
		s->down = false;
		state_log(f, s, STATE_UP, LOG_NOTICE, "", "answers again", k8s_now_ms());
	}
}

bool k8s_fwd_loop_probe(k8s_fwd_t *f, const knot_dname_t *lower)
{
	if (lower[0] == 0 || !knot_dname_is_equal(lower + 1 + lower[0], (const uint8_t *)LOOP_LABEL)) {
		return false;
	}
	if (lower[0] != TOKEN_HEX) {
		return true;
	}
	uint64_t token = 0;
	for (int i = 0; i < TOKEN_HEX; i++) {
		uint8_t c = lower[1 + i];
		if (c >= '0' && c <= '9') {
			token = (token << 4) | (c - '0');
		} else if (c >= 'a' && c <= 'f') {
			token = (token << 4) | (c - 'a' + 10);
		} else {
			return true;
		}
	}
	// Only the probe still out for a server marks it (0 is no probe's).
	for (size_t i = 0; i < f->server_count && token != 0; i++) {
		if (atomic_load(&f->loop_token[i]) == token) {
			atomic_store(&f->loop_seen[i], true);
			k8s_slots_wake(&f->handoff);
		}
	}
	return true;
}

void forward_loops_check(k8s_fwd_t *f)
{
	for (size_t i = 0; i < f->server_count; i++) {
		if (atomic_exchange(&f->loop_seen[i], false)) {
			loop_found(f, &f->servers[i]);
		}
	}
}

void forward_probes_start(k8s_fwd_t *f, uint64_t now)
{
	bool loop_round = (now >= f->next_loop_ms);
	if (loop_round) {
		f->next_loop_ms = now + LOOP_PROBE_MS;
	}
	for (size_t i = 0; i < f->server_count; i++) {
		server_t *s = &f->servers[i];
		if (s->looped) {
			if (now >= s->loop_retry_ms) {
				s->loop_retry_ms = now + LOOP_RETRY_MS;
				loop_probe_send(f, s, now);
			}
			continue;
		}
		if (loop_round) {
			loop_probe_send(f, s, now);
		}
		if (s->down && s->probe.fd < 0 && now >= s->next_probe_ms) {
			s->next_probe_ms = now + PROBE_MS;
			(void)k8s_dnsquery_start(&s->probe, &s->addr, (const uint8_t *)"",
			                         KNOT_RRTYPE_NS, PROBE_MS, now);
		}
	}
}

void forward_probe_io(k8s_fwd_t *f, server_t *s, k8s_dnsquery_t *p, uint64_t now)
{
	knot_pkt_t *answer = NULL;
	int ret = k8s_dnsquery_io(p, now, &answer);
	if (ret == KNOT_EAGAIN) {
		return;
	}
	knot_pkt_free(answer);
	if (p == &s->probe) {
		k8s_dnsquery_close(p);
		// Any answer to a health probe means the server is back (SERVFAIL too, as
		// CoreDNS's health check takes it).
		if (ret == KNOT_EOK) {
			forward_server_ok(f, s);
		} else {
			f->st.server[s - f->servers].probe_failures++;
			s->probe_fails++;
		}
		return;
	}
	loop_probe_end(f, s);
	// A probe that came back to us did so before its answer (relayed by the loop) could
	// come here: its flag is set already, so this answer is clean only without it.
	if (atomic_exchange(&f->loop_seen[s - f->servers], false)) {
		loop_found(f, s);
	} else if (ret == KNOT_EOK && s->looped) {
		s->looped = false;
		state_log(f, s, STATE_UNLOOP, LOG_NOTICE, "", "no longer sends our queries back to "
		          "us (its loop probe was answered without coming back), used again", now);
		forward_server_ok(f, s);
	}
}

void forward_probes_expire(k8s_fwd_t *f, uint64_t now)
{
	for (size_t i = 0; i < f->server_count; i++) {
		server_t *s = &f->servers[i];
		if (s->probe.fd >= 0 && now >= s->probe.deadline_ms) {
			f->st.server[i].probe_failures++;
			s->probe_fails++;
			k8s_dnsquery_close(&s->probe);
		}
		if (s->loop_probe.fd >= 0 && now >= s->loop_probe.deadline_ms) {
			loop_probe_end(f, s);
		}
	}
}
