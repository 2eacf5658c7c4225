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
 * \brief The resolver's pools, each shared fairly by the tenants that use it at the moment.
 *
 * A *tenant* is who a query is charged to: a pod's namespace (the glue reads it from the
 * pod table where pods are watched), else the client's whole address (IPv4, or IPv6's 128
 * bits); an upstream for the TCP answers' bytes. A *pool* is something the resolver has a
 * fixed amount of: clients waiting, names asked upstream, the kept names' asks and
 * flights, the cold waiters' queries, TCP duplicates, upstream sockets, TCP answers' bytes.
 *
 * Each pool has a size (its *cap*) and half as much again of *headroom*. While less than
 * the cap is held, anyone takes (work-conserving: one tenant alone may use all of it).
 * Past the cap, only a tenant that holds less than its fair part (the cap divided by the
 * tenants holding some now, itself included) takes, up to the headroom: so a tenant that
 * asks for the first time gets its part at once however many heavy tenants fill the cap,
 * and since the heavy ones take nothing more until the pool is below its cap again, the
 * pool comes to be divided max-min among its tenants as their units end (a waiting query
 * within its deadline, a flight within its timeout).
 *
 * Workers take and give back with atomic adds only (never a lock, never a wait): each
 * tenant has two of K8S_SHARE_BUCKETS counters chosen by a keyed hash and holds the smaller
 * (a count-min sketch: another tenant in one of its buckets does not count against it
 * unless it shares both); the tenants holding some are counted by their first bucket.
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/log.h"

/*! \brief Who a unit is charged to (k8s_tenant_addr(), k8s_tenant_ns(), k8s_tenant_upstream()). */
typedef uint64_t k8s_tenant_t;

/*! \brief A client that is no pod: its whole address (an IPv4-mapped one as IPv4). */
k8s_tenant_t k8s_tenant_addr(const struct sockaddr_storage *addr);

/*! \brief A pod's namespace (a wire label): the pods of a namespace share its part. */
k8s_tenant_t k8s_tenant_ns(const uint8_t *label);

/*! \brief An upstream server (address and port): the TCP answers' bytes are shared by them. */
k8s_tenant_t k8s_tenant_upstream(const struct sockaddr_storage *server);

/*! \brief Counters of a pool (16 KiB). */
#define K8S_SHARE_BUCKETS 4096

/*! \brief Headroom: a pool may hold its cap and this part of it again, for tenants within their part. */
#define K8S_SHARE_HEADROOM_PART 2

typedef struct k8s_share {
	atomic_uint count[K8S_SHARE_BUCKETS];
	atomic_uint used;          /*!< Units held, every tenant together. */
	atomic_uint tenants;       /*!< Tenants holding some now (by their first bucket). */
	atomic_uint_fast64_t refused;  /*!< Takes refused since the start. */
	unsigned cap;              /*!< What the pool has; past it, only tenants within their part take. */
	unsigned room;             /*!< The most it holds: cap and its headroom. */
	uint64_t key;              /*!< The buckets' hash key: which tenants meet is not guessable. */
	const char *pool;          /*!< Its series' label: what it holds ("cold_waiting"). */
	const char *owner;         /*!< Whose it is ("forward", a zone's name). */
	atomic_uint_fast64_t log_ms;   /*!< The last line about its refusals. */
	atomic_uint_fast64_t logged;   /*!< Refusals counted in a line already. */
	struct k8s_share *next;    /*!< In the list of pools with series (k8s_share_register()). */
} k8s_share_t;

/*! \brief What a holder keeps to give its units back. */
typedef struct {
	uint16_t bucket[2];
	unsigned units;            /*!< 0: holds nothing. */
} k8s_share_ref_t;

/*!
 * \brief An empty pool of \a cap units (at least 1) and its headroom; \a pool and \a owner
 * (static or outliving it) name it in its series and lines.
 */
void k8s_share_init(k8s_share_t *share, unsigned cap, const char *pool, const char *owner);

/*!
 * \brief Takes \a units for \a tenant (the rule: this file's head); \a ref records them.
 * Never waits (atomic adds only): a worker's call. False, holding nothing, when refused
 * (counted).
 */
bool k8s_share_take(k8s_share_t *share, k8s_tenant_t tenant, unsigned units,
                    k8s_share_ref_t *ref);

/*!
 * \brief k8s_share_take() that does not count a refusal: a thread that tries a waiting
 * unit again at each turn (the kept names' flights) counts one refusal per unit that
 * had to wait (k8s_share_refused()), not one per turn.
 */
bool k8s_share_try(k8s_share_t *share, k8s_tenant_t tenant, unsigned units,
                   k8s_share_ref_t *ref);

/*! \brief Counts a refusal (of a unit k8s_share_try() left waiting). */
void k8s_share_refused(k8s_share_t *share);

/*! \brief Gives back what \a ref holds (nothing if it holds nothing; once). */
void k8s_share_put(k8s_share_t *share, k8s_share_ref_t *ref);

/*! \brief What \a tenant holds now (its smaller counter). */
unsigned k8s_share_held(const k8s_share_t *share, k8s_tenant_t tenant);

/*! \brief The units held now, every tenant together. */
unsigned k8s_share_used(const k8s_share_t *share);

/*! \brief A tenant's fair part now: the cap over the tenants holding some (at least 1). */
unsigned k8s_share_fair(const k8s_share_t *share);

/*!
 * \brief Logs the pool's refusals since the last line, at most one line every 10 s
 * (whichever thread calls first; any thread, no lock): "OWNER, POOL full ...".
 */
void k8s_share_log(k8s_share_t *share, const k8s_log_t *log, uint64_t now_ms);

/*!
 * \brief The pool's series (mod_k8s_share_*) while it is registered: a metrics source is
 * added with the first pool and removed with the last (the process's pools below are
 * rendered while any is registered). Not from a metrics source's collect.
 */
void k8s_share_register(k8s_share_t *share);

/*! \brief Its series end; no scrape reads it after this returns. */
void k8s_share_unregister(k8s_share_t *share);

/*
 * The process's pools: what every forwarder and cold waiter takes from knotd's descriptors
 * and memory together, sized once from knotd's descriptor limit.
 */

/*! \brief The parts of knotd's descriptor limit the TCP duplicates and the upstream sockets take: 1/8 each. */
#define K8S_SHARE_FDS_PART 8

/*! \brief The TCP duplicates of the hand-overs (forwarders and cold waiters), by client tenant. */
k8s_share_t *k8s_share_tcp_dups(void);

/*! \brief The sockets the resolver asks upstreams from (UDP and TCP), by the name's tenant. */
k8s_share_t *k8s_share_sockets(void);

/*! \brief Bytes of TCP answers being read (4 MiB), by upstream. */
k8s_share_t *k8s_share_tcp_bytes(void);

/*! \brief Logs the process's pools' refusals (k8s_share_log()); the owners' threads call it. */
void k8s_share_log_process(const k8s_log_t *log, uint64_t now_ms);
