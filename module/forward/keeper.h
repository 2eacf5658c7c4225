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
 * \brief Kept names (keeper.c on the forwarder's thread, keeper_ref.c the handles): the
 * addresses of names outside our zones that the module's own answers need (ExternalName
 * targets, autopath's outside names), resolved by the forwarder (resolver/forward.h)
 * and kept fresh while queries look them up.
 *
 * A stub resolver asking for an ExternalName service should get the CNAME and the
 * target's addresses in one response, as CoreDNS gives them. knotd's workers never
 * wait on the network for that: a query that meets a name asks for it
 * (k8s_keeper_ask(), lock-free), and the forwarder's thread resolves its A and AAAA
 * records as ordinary flights of the forwarder (one per name, type and source: a
 * client's forwarded query for the same name joins the same flight), with the
 * forwarder's servers, failover, health and loop marks, and counted in its per-upstream
 * metrics. The answers (CNAME chains included) are kept where workers read them
 * lock-free under RCU, and resolved again before their TTL runs out while queries look
 * them up. A name not resolved yet is cold: the query is answered late
 * (answer/coldwait.h).
 *
 * A keeper belongs to one forwarder: the instance's own (`upstream ADDR`: a forwarder
 * whose default servers are ADDR), or the live forwarder of the instance's `forward`
 * settings, reached under RCU on each call; when kube-dns's ConfigMap replaces that
 * forwarder, the new one starts with no kept names (the next query asks again).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "lib/log.h"
#include "resolver/share.h"
#include "resolver/upstream.h"

/*! \brief What the module's answers hold: a forwarder's kept names. */
typedef struct k8s_keeper k8s_keeper_t;

/*! \brief A forwarder (resolver/forward.h). */
typedef struct k8s_fwd k8s_fwd_t;

/*!
 * \brief The kept names as a policy on a forwarder's thread (a layer, resolver/forward.h):
 * a forwarder started with it keeps names (k8s_keeper_new_live() reaches them), as the
 * instance's forwarder and k8s_keeper_new()'s own are.
 */
extern const struct k8s_fwd_layer k8s_keeper_layer;

/*! \brief The live forwarder (called inside an RCU read-side section), or NULL. */
typedef k8s_fwd_t *(*k8s_keeper_live_t)(void *ctx);

/*!
 * \brief Kept names on a forwarder of their own, whose default servers are \a servers
 * (\a count of them, 1 to 16): the `upstream` option's one server, or a federation's
 * nameservers. Its queries carry EDNS(0) option \a opt_code (0: none) with the asked
 * name's source label (k8s_keeper_ask_source()) as its value; \a timeout_ms is a
 * name's deadline; \a owner names its pools (share.h).
 *
 * \return NULL on no memory or no thread.
 */
k8s_keeper_t *k8s_keeper_new(const struct sockaddr_storage *servers, size_t count,
                             uint16_t opt_code, unsigned timeout_ms, const char *owner,
                             const k8s_log_t *log);

/*! \brief Kept names on the forwarder \a live returns, whichever is live at each call. */
k8s_keeper_t *k8s_keeper_new_live(k8s_keeper_live_t live, void *ctx);

/*! \brief Stops its own forwarder, if any, and frees it. No reader, and no ask, may remain. */
void k8s_keeper_free(k8s_keeper_t *k);

/*!
 * \brief Asks for a name a query met to be resolved (any thread, lock-free, never
 * blocks, allocates nothing), for \a tenant: the query's (share.h).
 *
 * The forwarder's thread takes it within a moment and resolves it; it is resolved
 * again only if a lookup found it (or a query asked again) since its last resolution
 * began, and forgotten when its answer runs out without one. At most 4096 names are
 * kept so: past that, a new name takes the place of the oldest name asked once and not
 * looked up since its answer (names looked up again go last, on a clock). Asking for a
 * name that is kept already marks it used. A failed resolution is tried again with
 * backoff (1 s doubling to 60 s); an upstream's REFUSED or SERVFAIL (after the next
 * server, if any), or no answer from any upstream within the deadline, is kept as the
 * answer until then, so that queries get it at once.
 *
 * The asks waiting for the thread and the names' flights are pools shared by the
 * tenants (share.h); due names wait for a flight in their tenant's queue, taken in
 * turns, a name asked for the first time before a refresh, a refresh before a retry.
 *
 * \param name  Lowercase name.
 *
 * \return False if the tenant is past its part of the asks, or the slots are all
 *         busy (dropped: ask again later).
 */
bool k8s_keeper_ask(const k8s_keeper_t *k, const knot_dname_t *name, k8s_tenant_t tenant);

/*!
 * \brief Looks up a name's kept answer for A or AAAA (reader, lock-free, never blocks).
 *
 * Call inside an RCU read-side section; the answer stays valid until it ends.
 *
 * \param ans  Out: the answer when READY. An expired entry is still served while its
 *             refresh is under way, and for up to 5 minutes while the upstream fails;
 *             the caller caps TTLs at what remains (0 at least).
 */
k8s_upstream_status_t k8s_keeper_lookup(const k8s_keeper_t *k, const knot_dname_t *name,
                                        uint16_t qtype, const k8s_fwd_entry_t **ans);

/*! \brief k8s_keeper_ask() for the key (name, \a source): a wire label, or NULL. */
bool k8s_keeper_ask_source(const k8s_keeper_t *k, const knot_dname_t *name,
                           const uint8_t *source, k8s_tenant_t tenant);

/*! \brief k8s_keeper_lookup() of the key (name, qtype, \a source): a wire label, or NULL. */
k8s_upstream_status_t k8s_keeper_lookup_source(const k8s_keeper_t *k, const knot_dname_t *name,
                                               uint16_t qtype, const uint8_t *source,
                                               const k8s_fwd_entry_t **ans);

/*!
 * \brief From now on the calling thread's asks are no-ops (reported as handed over) and
 *        its lookups do not mark a name used.
 *
 * The cold waiter re-runs a query's answer until its name is resolved: the query's
 * worker asked once, and its retries must neither ask again (a flood that displaces
 * names asked once would turn each waiting query into many upstream queries) nor count
 * as a second use (which keeps a name and refreshes it).
 */
void k8s_keeper_asks_off(void);

/*! \brief Sets how many names asked by queries are kept (tests; before the first ask). */
void k8s_keeper_set_max_asked(k8s_keeper_t *k, size_t max);
