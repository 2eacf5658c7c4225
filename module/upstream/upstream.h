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
 * \brief Addresses of names outside our zones (ExternalName targets, autopath's
 * outside names, federation names), from an upstream resolver.
 *
 * A stub resolver asking for an ExternalName service should get the CNAME and
 * the target's addresses in one response, as CoreDNS gives them. knotd's
 * workers must never wait on the network for that: a query that meets a name
 * asks for it (k8s_upstream_ask(), lock-free), a resolver thread of our own asks
 * the upstream for its A and AAAA records, keeps the answers (CNAME chains
 * included) in a cache that workers read lock-free under RCU, and refreshes them
 * before their TTL runs out while queries look them up. A name not resolved yet
 * is cold: the query is answered late (coldwait.h).
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "lib/log.h"

/*! \brief A cached upstream answer: immutable, readable until the end of the RCU read-side section. */
typedef struct {
	uint16_t rcode;         /*!< Upstream RCODE: NOERROR, NXDOMAIN, or a failure (count 0). */
	uint16_t count;         /*!< RRsets of the answer section (CNAME chain first, then the addresses). */
	uint32_t expires;       /*!< Monotonic seconds (k8s_now_ms() / 1000) when it runs out. */
	knot_rrset_t rrsets[];  /*!< Owners and rdata live inside this allocation. */
} k8s_upstream_answer_t;

/*!
 * \brief True if the answer is the upstream's failure (REFUSED, SERVFAIL...): no
 * records, kept until the name is asked again (with backoff), so that queries get
 * an answer at once rather than wait for one.
 */
static inline bool k8s_upstream_failed(const k8s_upstream_answer_t *ans)
{
	return ans->rcode != KNOT_RCODE_NOERROR && ans->rcode != KNOT_RCODE_NXDOMAIN;
}

typedef enum {
	K8S_UPSTREAM_PENDING = 0,  /*!< Not resolved yet, or the last attempts timed out. */
	K8S_UPSTREAM_READY,        /*!< \a ans holds the answer (rcode may be NXDOMAIN or a failure, count may be 0). */
} k8s_upstream_status_t;

typedef struct k8s_upstream k8s_upstream_t;

/*!
 * \brief Starts a resolver that asks \a server (UDP, TCP after a truncated answer).
 *
 * \param timeout_ms  Per-attempt timeout. A timeout or a transport error is
 *                    retried at once, three attempts in all; an answer with an
 *                    RCODE other than NOERROR or NXDOMAIN fails at once (a forwarder
 *                    first asks its next server, if another) and is cached as a
 *                    failure (k8s_upstream_failed()) until the retry. A failed name
 *                    is retried later with backoff (1 s doubling to 60 s).
 *
 * \return The resolver, or NULL (no memory, no thread).
 */
k8s_upstream_t *k8s_upstream_new(const struct sockaddr_storage *server, unsigned timeout_ms,
                                 const k8s_log_t *log);

/*!
 * \brief Chooses a forwarder's server for a name (resolver thread; may read RCU data).
 *
 * \param attempt  0, 1, 2: each attempt may take another server.
 *
 * \return False if the name has no server (the resolution fails, retried with backoff).
 */
typedef bool (*k8s_upstream_servers_t)(void *ctx, const knot_dname_t *name, unsigned attempt,
                                       struct sockaddr_storage *server);

/*!
 * \brief Starts a forwarder: a resolver whose server depends on the name (\a servers),
 * and whose queries carry EDNS(0) option \a opt_code with the asked name's source
 * label (k8s_upstream_ask_source()) as its value. Its cache is keyed by name, type
 * and source.
 */
k8s_upstream_t *k8s_upstream_new_forwarder(k8s_upstream_servers_t servers, void *ctx,
                                           uint16_t opt_code, unsigned timeout_ms,
                                           const k8s_log_t *log);

/*!
 * \brief Asks the resolver to resolve every kept name again now (any thread): a
 * forwarder's servers changed. Kept answers are served until the new ones arrive.
 */
void k8s_upstream_refresh(k8s_upstream_t *u);

/*!
 * \brief Stops and joins the thread (at once, even with queries in flight), frees everything.
 *
 * No reader, and no ask, may remain.
 */
void k8s_upstream_free(k8s_upstream_t *u);

/*!
 * \brief Asks for a name a query met (autopath) to be resolved (any thread, lock-free,
 * never blocks, allocates nothing).
 *
 * The resolver takes it within a moment and resolves it; it is resolved again
 * only if a lookup found it (or a query asked again) since its last resolution
 * began, and forgotten when its answer runs out without one. At most 4096
 * names are kept so: past that, a new name takes the place of the oldest name
 * asked once and not looked up since its answer (names looked up again go
 * last, on a clock). Asking for a name that is kept already marks it used.
 *
 * \param name  Lowercase name.
 *
 * \return False if the hand-over slots it may take are all busy (dropped: ask again later).
 */
bool k8s_upstream_ask(const k8s_upstream_t *u, const knot_dname_t *name);

/*!
 * \brief From now on the calling thread's asks are no-ops (reported as handed over) and
 *        its lookups do not mark a name used.
 *
 * The cold waiter re-runs a query's answer until its name is resolved: the query's
 * worker asked once, and its retries must neither ask again (a flood that displaces
 * names asked once would turn each waiting query into many upstream queries) nor
 * count as a second use (which keeps a name and refreshes it).
 */
void k8s_upstream_asks_off(void);

/*! \brief k8s_upstream_ask() for the key (name, \a source): a wire label, or NULL. */
bool k8s_upstream_ask_source(const k8s_upstream_t *u, const knot_dname_t *name,
                             const uint8_t *source);

/*! \brief k8s_upstream_lookup() of the key (name, qtype, \a source): a wire label, or NULL. */
k8s_upstream_status_t k8s_upstream_lookup_source(const k8s_upstream_t *u,
                                                 const knot_dname_t *name, uint16_t qtype,
                                                 const uint8_t *source,
                                                 const k8s_upstream_answer_t **ans);

/*!
 * \brief Looks up a target's cached answer for A or AAAA (reader, lock-free, never blocks).
 *
 * Call inside an RCU read-side section; the answer stays valid until it ends.
 *
 * \param name   Lowercase target name.
 * \param qtype  KNOT_RRTYPE_A or KNOT_RRTYPE_AAAA.
 * \param ans    Out: the answer when READY. An expired entry is still served while
 *               its refresh is under way, and for up to 5 minutes while the upstream
 *               fails; the caller caps TTLs at what remains (0 at least).
 */
k8s_upstream_status_t k8s_upstream_lookup(const k8s_upstream_t *u, const knot_dname_t *name,
                                          uint16_t qtype, const k8s_upstream_answer_t **ans);
