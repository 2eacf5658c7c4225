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
 * \brief Forwarding of names outside our zones, without a knotd worker waiting on the network.
 *
 * A worker that meets a name to forward either answers it from the cache
 * (k8s_fwd_lookup(), lock-free) or hands the query over (k8s_fwd_handoff(): a copy
 * of its wire, the client's address and knotd's socket) and lets knotd send
 * nothing. The forwarder thread asks the upstreams (one name asked once however
 * many clients wait for it), and sends each waiting client its answer from
 * knotd's socket when it arrives, or SERVFAIL with an Extended DNS Error at the
 * deadline (a *late answer*). UDP answers are sent with sendto() on knotd's UDP
 * socket (safe beside the worker's own sends); a TCP query's connection is
 * dup()ed at the hand-over, so that knotd closing it never lets the answer reach
 * another connection that took its number.
 *
 * Upstreams: groups of servers (the default group and stub domains, the longest
 * matching zone first), asked in order; a server that does not answer within 300 ms,
 * fails or answers SERVFAIL/REFUSED is marked down, the name is asked of the next
 * one at once (the first attempt stays open: its late answer is still taken), and
 * a down server is probed every second (". NS") until it answers. A forwarding loop
 * (an upstream that sends our queries back to us) is found with a probe name
 * (`<random>.mod-k8s-loop.`, fresh for each probe) sent to every upstream at start and
 * every minute, and to an upstream as soon as it is marked down (a loop that appears
 * while running shows first as an upstream that stops answering): when the probe still
 * outstanding comes back to us, that upstream is not used until a later probe (every
 * 5 s) is answered without coming back.
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "ops/dnsmetrics.h"
#include "resolver/forward_cache.h"
#include "resolver/share.h"
#include "lib/log.h"

/*! \brief Largest query handed over (bytes); a larger one is answered SERVFAIL by the worker. */
#define K8S_FWD_QUERY_MAX 512
/*! \brief Upstream servers in all (default and stub domains together). */
#define K8S_FWD_SERVERS_MAX 16
/*! \brief Stub domains. */
#define K8S_FWD_GROUPS_MAX 16
/*! \brief Cache entries at most, the groups' capacities with forward-cache-size. */
#define K8S_FWD_CACHE_SIZE_MAX ((size_t)1 << 21)

/*! \brief A set of servers: the default one (zone NULL) or a stub domain's. */
typedef struct {
	knot_dname_t *zone;                 /*!< Lowercase; NULL for the default servers. */
	struct sockaddr_storage *servers;
	size_t count;
} k8s_fwd_group_t;

/*! \brief How a group orders its servers for a name (CoreDNS's forward `policy`). */
typedef enum {
	K8S_FWD_SEQUENTIAL = 0,  /*!< In their order (the forwarder's own way). */
	K8S_FWD_RANDOM,          /*!< A random order for each name. */
	K8S_FWD_ROUND_ROBIN,     /*!< The next one first for each name, then the rest in order. */
} k8s_fwd_policy_t;

/*! \brief How a group's answers are kept. */
typedef enum {
	K8S_FWD_CACHE_SHARED = 0,  /*!< The forwarder's own rules (cache_max_ttl). */
	K8S_FWD_CACHE_OFF,         /*!< Relayed as they came, never kept. */
	K8S_FWD_CACHE_COREDNS,     /*!< CoreDNS's cache plugin's rules (below). */
} k8s_fwd_cache_mode_t;

/*!
 * \brief A group's own settings, as CoreDNS's forward and cache of its server block
 * (forward/groupconf.h reads them from forward-options and forward-cache).
 *
 * With \a coredns, the group forwards as CoreDNS's forward plugin does: its policy, a
 * server down after more than \a max_fails failures in a row (0: never), an upstream's
 * error RCODE relayed as its answer (no failover), TCP when the client asked over TCP
 * (\a force_tcp: always; \a prefer_udp: UDP, TCP after truncation). Without it: in
 * order, a server down at its first failure, SERVFAIL and REFUSED failed over, UDP first.
 *
 * With K8S_FWD_CACHE_COREDNS, an answer is kept as CoreDNS's cache keeps it: for the
 * least TTL of its records (5 s without records) held between the success (NOERROR,
 * delegations) or denial (NXDOMAIN, NODATA) minimum and maximum, every record served
 * with that TTL counting down; a SERVFAIL (an upstream's, or no answer at all) for
 * \a servfail_ttl; at most \a success_cap and \a denial_cap entries of the group.
 */
typedef struct {
	bool coredns;
	uint8_t policy;            /*!< k8s_fwd_policy_t. */
	bool force_tcp;
	bool prefer_udp;
	uint32_t max_fails;
	uint32_t expire_ms;        /*!< CoreDNS's idle connection expiry: none is kept open. */
	uint8_t cache;             /*!< k8s_fwd_cache_mode_t. */
	bool no_success;           /*!< disable success. */
	bool no_denial;            /*!< disable denial. */
	uint32_t success_max, success_min;  /*!< Seconds. */
	uint32_t denial_max, denial_min;    /*!< Seconds. */
	uint32_t success_cap, denial_cap;   /*!< Entries. */
	uint32_t servfail_ttl;     /*!< Seconds. */
} k8s_fwd_settings_t;

/*! \brief The settings of the group of one zone (NULL: the default servers). */
typedef struct {
	knot_dname_t *zone;        /*!< Lowercase, or NULL. */
	k8s_fwd_settings_t set;
} k8s_fwd_zone_settings_t;

/*! \brief Zones with settings at most: the default servers' and each stub domain's. */
#define K8S_FWD_SETTINGS_MAX (1 + K8S_FWD_GROUPS_MAX)

/*! \brief CoreDNS's cache defaults (plugin/cache): 3600 s and 1800 s at most, 5 s at least. */
#define K8S_FWD_COREDNS_SUCCESS_MAX 3600
#define K8S_FWD_COREDNS_DENIAL_MAX 1800
#define K8S_FWD_COREDNS_MIN 5
/*! \brief CoreDNS's cache capacity (256 shards of 39) and its SERVFAIL time. */
#define K8S_FWD_COREDNS_CAP 9984
#define K8S_FWD_COREDNS_SERVFAIL 5
/*! \brief CoreDNS's forward defaults: max_fails and expire. */
#define K8S_FWD_COREDNS_MAX_FAILS 2
#define K8S_FWD_COREDNS_EXPIRE_MS 10000

typedef struct {
	k8s_fwd_group_t *groups;   /*!< [0] the default servers, then the stub domains. */
	size_t group_count;
	/*! Groups' own settings by zone, also for stub domains kube-dns's ConfigMap brings. */
	k8s_fwd_zone_settings_t *settings;
	size_t settings_count;
	unsigned log_interval_ms;  /*!< One line per server and kind of failure this often. */
	unsigned timeout_ms;       /*!< A waiting client's deadline (then SERVFAIL, EDE 22). */
	uint32_t cache_max_ttl;    /*!< Seconds. */
	size_t cache_size;         /*!< Entries. */
	size_t max_pending;        /*!< Names being resolved at once; waiting clients: 4 times that
	                                (each a pool shared by tenants, share.h). */
	uint16_t opt_code;         /*!< EDNS option carrying a kept name's source label, 0: none. */
} k8s_fwd_conf_t;

/*! \brief Frees what k8s_fwd_conf_t holds (not itself). */
void k8s_fwd_conf_deinit(k8s_fwd_conf_t *conf);

/*!
 * \brief A deep copy of \a src into \a dst (on failure, what was copied is freed by
 * k8s_fwd_conf_deinit(\a dst)).
 */
int k8s_fwd_conf_copy(k8s_fwd_conf_t *dst, const k8s_fwd_conf_t *src);

/*!
 * \brief A deep copy of \a src's groups' settings into \a dst (whose own are not freed:
 * on failure, what was copied is freed by k8s_fwd_conf_deinit(\a dst)).
 */
int k8s_fwd_settings_copy(k8s_fwd_conf_t *dst, const k8s_fwd_conf_t *src);

/*! \brief A deep copy of a group (on failure, \a dst holds what was allocated, to free). */
int k8s_fwd_group_copy(k8s_fwd_group_t *dst, const k8s_fwd_group_t *src);

/*! \brief Equal settings share one forwarder. */
bool k8s_fwd_conf_equal(const k8s_fwd_conf_t *a, const k8s_fwd_conf_t *b);

/*! \brief The own settings of the group of \a zone (NULL: the default servers'), or NULL. */
const k8s_fwd_settings_t *k8s_fwd_settings_of(const k8s_fwd_conf_t *conf,
                                              const knot_dname_t *zone);

/*! \brief Counters, pushed by the forwarder thread once a second. */
typedef struct {
	uint64_t forwarded;     /*!< Names asked of an upstream (after the cache). */
	uint64_t answered;      /*!< Late answers sent. */
	uint64_t servfail;      /*!< Late answers that were SERVFAIL: deadline, no upstream, busy. */
	uint64_t timeouts;      /*!< Attempts without an answer within the deadline. */
	uint64_t failovers;     /*!< Attempts that went to another server. */
	uint64_t loops;         /*!< Upstreams found looping. */
	uint64_t dropped;       /*!< Hand-overs refused (no slot free, too many waiting). */
	uint64_t waiting;       /*!< Clients waiting for an answer now. */
	uint64_t cache_entries;
	uint64_t cache_bytes;
	uint64_t broken;        /*!< Names asked while every server of their group was unhealthy. */
	uint64_t kept_timeouts; /*!< A layer's flights (kept names) no upstream answered in time. */
	size_t server_count;
	struct {
		uint64_t queries;   /*!< Attempts sent to it. */
		uint64_t answers;
		uint64_t failures;  /*!< Errors, SERVFAIL/REFUSED, no answer within 300 ms. */
		uint64_t timeouts;
		uint64_t down;      /*!< 1 while down or looping. */
		uint64_t probe_failures;  /*!< Health probes unanswered or failed. */
		uint64_t rcodes[16];      /*!< Its answers by RCODE. */
		/*! Its answers' round trips, CoreDNS's time buckets (dnsmetrics.h), then +Inf. */
		uint64_t rtt[K8S_DNSMETRICS_TIME_BUCKETS + 1];
		uint64_t rtt_sum_ns;
	} server[K8S_FWD_SERVERS_MAX];
} k8s_fwd_stats_t;

/*! \brief Counts server \a server's answer with \a rcode to an attempt sent at \a sent_ns. */
void k8s_fwd_stats_answer(k8s_fwd_stats_t *st, size_t server, uint16_t rcode, uint64_t sent_ns);

typedef void (*k8s_fwd_stats_fn)(void *ctx, const k8s_fwd_stats_t *st);

typedef struct k8s_fwd k8s_fwd_t;

/*!
 * \brief A policy on the forwarder's thread (the kept names, keeper.h), as Knot
 * Resolver's modules are layers on its core: the core calls it only through these, so
 * that it sits above the core and the core knows nothing of it.
 */
typedef struct k8s_fwd_layer {
	/*! \brief Its state for forwarder \a f, before the thread starts; NULL: no memory. */
	void *(*attach)(k8s_fwd_t *f);
	/*! \brief Frees the state, after the thread is joined: no reader may remain. */
	void (*detach)(void *state);
	/*! \brief A descriptor the thread polls beside the hand-over; run() takes its work. */
	int (*wake_fd)(const void *state);
	/*! \brief The thread's turn, after the clients' hand-overs (their flights are joined). */
	void (*run)(void *state, uint64_t now);
	/*! \brief When run() has work next (at most \a until). */
	uint64_t (*due_ms)(const void *state, uint64_t until);
	/*!
	 * \brief A flight it started (k8s_fwd_flight_keep()) ended: \a answer and \a entry,
	 * the one the forwarder publishes next (NULL when the cache's rules do not keep the
	 * answer), or no answer (NULL) after the error \a err of its last attempt. Never
	 * called once the thread stops.
	 */
	void (*flight_done)(void *state, void *job, const knot_pkt_t *answer,
	                    k8s_fwd_entry_t *entry, int err, uint64_t now);
} k8s_fwd_layer_t;

/*!
 * \brief Starts a forwarder and its thread, with the policy \a layer on it (or NULL);
 * \a owner (copied) names its pools in their series and lines.
 *
 * \return NULL on no memory or no thread.
 */
k8s_fwd_t *k8s_fwd_new(const k8s_fwd_conf_t *conf, const char *owner, const k8s_log_t *log,
                       k8s_fwd_stats_fn stats, void *stats_ctx, const k8s_fwd_layer_t *layer);

/*! \brief The state of the forwarder's layer (k8s_fwd_layer_t.attach()'s), or NULL. */
void *k8s_fwd_layer_state(const k8s_fwd_t *f);

/*! \brief Stops and joins the thread, answers nobody more, frees everything. No worker may remain. */
void k8s_fwd_free(k8s_fwd_t *f);

/*! \brief The settings the forwarder was started with. */
const k8s_fwd_conf_t *k8s_fwd_conf(const k8s_fwd_t *f);

/*! \brief How many servers (default and stub domains together). */
size_t k8s_fwd_server_count(const k8s_fwd_t *f);

/*! \brief The address of server \a i (flat order: default, then the stub domains'), as text. */
const char *k8s_fwd_server_text(const k8s_fwd_t *f, size_t i);

/*! \brief Whether a name has servers to go to (the default group or a stub domain). */
bool k8s_fwd_routes(const k8s_fwd_t *f, const knot_dname_t *lower);

/*!
 * \brief The cached answer of (\a lower, \a qtype), or NULL (reader: inside an RCU
 * read-side section; valid until it ends).
 */
const k8s_fwd_entry_t *k8s_fwd_lookup(k8s_fwd_t *f, const knot_dname_t *lower, uint16_t qtype,
                                      uint64_t now_ms);

/*!
 * \brief Hands a query over (any thread; never blocks, allocates nothing; dup() for TCP).
 *
 * The query holds a unit of the forwarder's waiting clients (4 times max_pending), and
 * over TCP one of the process's TCP duplicates, both shared fairly by the tenants
 * (share.h, slots.h's k8s_hold_t): refused when its tenant is past its part of a full
 * pool. The name it asks holds a unit of the pending names, charged to the same tenant.
 *
 * \param fd      knotd's socket the query came on.
 * \param remote  The client's address (the answer's destination over UDP; its family
 *                labels the metrics).
 * \param local   The address the query was sent to (the late answer's source over UDP),
 *                NULL or a wildcard if unknown: the kernel chooses then.
 * \param tenant  Who it is charged to: the client pod's namespace, else its address.
 *
 * \return False when refused (a pool, no free slot, query too large, dup failed):
 *         answer SERVFAIL.
 */
bool k8s_fwd_handoff(k8s_fwd_t *f, const uint8_t *wire, size_t len, int fd, bool tcp,
                     const struct sockaddr_storage *remote,
                     const struct sockaddr_storage *local, k8s_tenant_t tenant);

/* What a layer calls on the forwarder's thread. */

/*!
 * \brief Starts a flight for (\a lower, \a qtype, \a source: a wire label or NULL) without a
 * waiting client, charged to \a tenant, or joins the one in flight: its end goes to the
 * layer's flight_done() with \a job.
 *
 * \return False if none was started (no servers for the name, or the tenant past its part
 *         of the pending names): flight_done() is not called.
 */
bool k8s_fwd_flight_keep(k8s_fwd_t *f, const knot_dname_t *lower, uint16_t qtype,
                         const uint8_t *source, k8s_tenant_t tenant, void *job, uint64_t now);

/*! \brief Detaches \a job from its flight (its name is forgotten): no flight_done() for it. */
void k8s_fwd_flight_unkeep(k8s_fwd_t *f, const void *job);

/*! \brief The forwarder's cache: the thread writes it, workers read it under RCU. */
k8s_fwd_cache_t *k8s_fwd_cache_of(k8s_fwd_t *f);

/*! \brief Where the forwarder's lines go. */
const k8s_log_t *k8s_fwd_log(const k8s_fwd_t *f);

/*! \brief Who the forwarder's pools are (k8s_fwd_new()'s \a owner), for a layer's pools. */
const char *k8s_fwd_owner(const k8s_fwd_t *f);

/*!
 * \brief Whether \a lower is a loop probe's name (`*.mod-k8s-loop.`): never forwarded.
 * If it is the current probe of an upstream, that upstream is marked as looping.
 */
bool k8s_fwd_loop_probe(k8s_fwd_t *f, const knot_dname_t *lower);
