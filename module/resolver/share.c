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
 * The resolver's pools and their tenants' shares (share.h): taking and giving back with
 * atomics, a tenant's fair part, the lines about refusals, the series of the pools, and
 * the process's pools (descriptors, TCP answers' bytes).
 */

#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>

#include "lib/hash.h"
#include "mod-k8s/mod-k8s.h"
#include "ops/metrics.h"
#include "resolver/share.h"

/*! \brief One line about a pool's refusals at most this often. */
#define LOG_EVERY_MS 10000

/* Tenants. */

/*! \brief Two 64-bit words folded under the process's key, tagged by what they are. */
static k8s_tenant_t tenant_fold(uint64_t tag, uint64_t a, uint64_t b)
{
	return k8s_hash_mix(a ^ k8s_hash_key[0] ^ tag, b ^ k8s_hash_key[1]);
}

/*! \brief An address's bytes as two words (IPv4-mapped as IPv4); \a port too if asked. */
static uint64_t addr_words(const struct sockaddr_storage *addr, bool port, uint64_t *b)
{
	uint64_t a = 0;
	*b = 0;
	if (addr == NULL) {
		return a;
	}
	if (addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
		*b = port ? in6->sin6_port : 0;
		if (!IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(&a, in6->sin6_addr.s6_addr, 8);
			uint64_t low;
			memcpy(&low, in6->sin6_addr.s6_addr + 8, 8);
			*b ^= low * 0x9e3779b97f4a7c15ULL;
			return a;
		}
		uint32_t v4;
		memcpy(&v4, in6->sin6_addr.s6_addr + 12, 4);
		return (1ULL << 63) | v4;
	} else if (addr->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
		*b = port ? in->sin_port : 0;
		return (1ULL << 63) | in->sin_addr.s_addr;
	}
	return a;
}

k8s_tenant_t k8s_tenant_addr(const struct sockaddr_storage *addr)
{
	uint64_t b;
	uint64_t a = addr_words(addr, false, &b);
	return tenant_fold(1, a, b);
}

k8s_tenant_t k8s_tenant_upstream(const struct sockaddr_storage *server)
{
	uint64_t b;
	uint64_t a = addr_words(server, true, &b);
	return tenant_fold(3, a, b);
}

k8s_tenant_t k8s_tenant_ns(const uint8_t *label)
{
	// A label is at most 63 bytes: FNV-1a over it, then folded under the key.
	uint64_t h = k8s_fnv64(label + 1, label[0], K8S_FNV64_INIT);
	return tenant_fold(2, h, label[0]);
}

/* A pool. */

void k8s_share_init(k8s_share_t *share, unsigned cap, const char *pool, const char *owner)
{
	for (size_t i = 0; i < K8S_SHARE_BUCKETS; i++) {
		atomic_init(&share->count[i], 0);
	}
	atomic_init(&share->used, 0);
	atomic_init(&share->tenants, 0);
	atomic_init(&share->refused, 0);
	atomic_init(&share->log_ms, 0);
	atomic_init(&share->logged, 0);
	share->cap = (cap > 0) ? cap : 1;
	share->room = share->cap + share->cap / K8S_SHARE_HEADROOM_PART;
	share->room += (share->room == share->cap);  // A newcomer's one unit at least.
	share->pool = pool;
	share->owner = owner;
	share->next = NULL;
	if (getrandom(&share->key, sizeof(share->key), GRND_NONBLOCK) != sizeof(share->key)) {
		share->key = (uintptr_t)share ^ 0x9e3779b97f4a7c15ULL;  // Still per process.
	}
}

static void share_buckets(const k8s_share_t *share, k8s_tenant_t tenant, uint16_t bucket[2])
{
	// splitmix64's finalizer over the keyed tenant: one multiply-xorshift hash.
	uint64_t h = tenant ^ share->key;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	bucket[0] = h % K8S_SHARE_BUCKETS;
	bucket[1] = (h >> 32) % K8S_SHARE_BUCKETS;
	if (bucket[1] == bucket[0]) {
		bucket[1] = (bucket[0] + 1) % K8S_SHARE_BUCKETS;
	}
}

/*!
 * \brief Adds \a units to a tenant's buckets (negative: takes them off); the first bucket
 * going from or to empty counts the tenants, so every arrival is matched by one leave.
 * Returns what the tenant held before (its smaller counter).
 */
static unsigned buckets_add(k8s_share_t *share, const uint16_t bucket[2], unsigned units,
                            bool add)
{
	unsigned a, b;
	if (add) {
		a = atomic_fetch_add_explicit(&share->count[bucket[0]], units, memory_order_relaxed);
		b = atomic_fetch_add_explicit(&share->count[bucket[1]], units, memory_order_relaxed);
		if (a == 0) {
			atomic_fetch_add_explicit(&share->tenants, 1, memory_order_relaxed);
		}
	} else {
		a = atomic_fetch_sub_explicit(&share->count[bucket[0]], units, memory_order_relaxed);
		b = atomic_fetch_sub_explicit(&share->count[bucket[1]], units, memory_order_relaxed);
		if (a == units) {
			atomic_fetch_sub_explicit(&share->tenants, 1, memory_order_relaxed);
		}
	}
	return (a < b) ? a : b;
}

/*! \brief The cap over \a tenants, rounded up (a part of 0 would refuse a newcomer). */
static unsigned fair_part(const k8s_share_t *share, unsigned tenants)
{
	tenants = (tenants > 0) ? tenants : 1;
	return (share->cap + tenants - 1) / tenants;
}

bool k8s_share_try(k8s_share_t *share, k8s_tenant_t tenant, unsigned units,
                   k8s_share_ref_t *ref)
{
	ref->units = 0;
	share_buckets(share, tenant, ref->bucket);
	unsigned held = buckets_add(share, ref->bucket, units, true);
	unsigned used = atomic_fetch_add_explicit(&share->used, units, memory_order_relaxed);
	// Below the cap anyone takes; past it, a tenant within its part, up to the headroom.
	// (Workers racing pass a limit by what they take at once, no more.)
	unsigned tenants = atomic_load_explicit(&share->tenants, memory_order_relaxed);
	bool ok = used + units <= share->cap ||
	          (used + units <= share->room && held + units <= fair_part(share, tenants));
	if (!ok) {
		atomic_fetch_sub_explicit(&share->used, units, memory_order_relaxed);
		(void)buckets_add(share, ref->bucket, units, false);
		return false;
	}
	ref->units = units;
	return true;
}

void k8s_share_refused(k8s_share_t *share)
{
	atomic_fetch_add_explicit(&share->refused, 1, memory_order_relaxed);
}

bool k8s_share_take(k8s_share_t *share, k8s_tenant_t tenant, unsigned units,
                    k8s_share_ref_t *ref)
{
	if (!k8s_share_try(share, tenant, units, ref)) {
		k8s_share_refused(share);
		return false;
	}
	return true;
}

void k8s_share_put(k8s_share_t *share, k8s_share_ref_t *ref)
{
	if (ref->units == 0) {
		return;
	}
	(void)buckets_add(share, ref->bucket, ref->units, false);
	atomic_fetch_sub_explicit(&share->used, ref->units, memory_order_relaxed);
	ref->units = 0;
}

unsigned k8s_share_held(const k8s_share_t *share, k8s_tenant_t tenant)
{
	uint16_t bucket[2];
	share_buckets(share, tenant, bucket);
	unsigned a = atomic_load_explicit(&share->count[bucket[0]], memory_order_relaxed);
	unsigned b = atomic_load_explicit(&share->count[bucket[1]], memory_order_relaxed);
	return (a < b) ? a : b;
}

unsigned k8s_share_used(const k8s_share_t *share)
{
	return atomic_load_explicit(&share->used, memory_order_relaxed);
}

unsigned k8s_share_fair(const k8s_share_t *share)
{
	return fair_part(share, atomic_load_explicit(&share->tenants, memory_order_relaxed));
}

void k8s_share_log(k8s_share_t *share, const k8s_log_t *log, uint64_t now_ms)
{
	uint64_t refused = atomic_load_explicit(&share->refused, memory_order_relaxed);
	uint64_t logged = atomic_load_explicit(&share->logged, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&share->log_ms, memory_order_relaxed);
	if (refused == logged || (last != 0 && now_ms < last + LOG_EVERY_MS)) {
		return;
	}
	// One thread wins the period; the others see its time.
	if (!atomic_compare_exchange_strong(&share->log_ms, &last, now_ms)) {
		return;
	}
	logged = atomic_exchange(&share->logged, refused);
	unsigned tenants = atomic_load_explicit(&share->tenants, memory_order_relaxed);
	k8s_logf(log, LOG_WARNING, "%s, %s full, %" PRIu64 " refused since the last line (%u "
	         "held, cap %u and headroom to %u, %u tenants, a tenant's part %u)", share->owner,
	         share->pool, refused - logged, k8s_share_used(share), share->cap, share->room,
	         tenants, fair_part(share, tenants));
}

/* The process's pools. */

static struct {
	pthread_once_t once;
	k8s_share_t tcp_dups;
	k8s_share_t sockets;
	k8s_share_t tcp_bytes;
} process = { .once = PTHREAD_ONCE_INIT };

/*! \brief The TCP answers' bytes: hostile upstreams that announce 64 KiB and trickle hold 4 MiB. */
#define TCP_BYTES_CAP (4U << 20)

static void process_init(void)
{
	struct rlimit lim;
	rlim_t files = 1024;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
		files = lim.rlim_cur;
	}
	files /= K8S_SHARE_FDS_PART;
	unsigned fds = (files < 16) ? 16 : (files > 65536) ? 65536 : files;
	k8s_share_init(&process.tcp_dups, fds, "tcp_duplicates", "process");
	k8s_share_init(&process.sockets, fds, "upstream_sockets", "process");
	k8s_share_init(&process.tcp_bytes, TCP_BYTES_CAP, "tcp_answer_bytes", "process");
}

k8s_share_t *k8s_share_tcp_dups(void)
{
	(void)pthread_once(&process.once, process_init);
	return &process.tcp_dups;
}

k8s_share_t *k8s_share_sockets(void)
{
	(void)pthread_once(&process.once, process_init);
	return &process.sockets;
}

k8s_share_t *k8s_share_tcp_bytes(void)
{
	(void)pthread_once(&process.once, process_init);
	return &process.tcp_bytes;
}

void k8s_share_log_process(const k8s_log_t *log, uint64_t now_ms)
{
	(void)pthread_once(&process.once, process_init);
	k8s_share_log(&process.tcp_dups, log, now_ms);
	k8s_share_log(&process.sockets, log, now_ms);
	k8s_share_log(&process.tcp_bytes, log, now_ms);
}

/* The series. */

/*!
 * \brief The registered pools: \a members serialises registration with the source's add
 * and remove (a scrape holds the sources' lock, then \a list); \a list guards the list.
 */
static pthread_mutex_t members = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_share_t *registered;
static size_t registered_count;

enum { S_USED = 0, S_CAP, S_ROOM, S_TENANTS, S_REFUSED, S_COUNT };

static const struct {
	const char *name;
	const char *type;
	const char *help;
} families[S_COUNT] = {
	{ MOD_K8S_METRIC_SHARE_USED, "gauge",
	  "Units a pool of the resolver holds now (waiting clients, names, asks, flights, descriptors, bytes)." },
	{ MOD_K8S_METRIC_SHARE_CAPACITY, "gauge",
	  "A pool's cap: past it, only tenants within their fair part take, up to its headroom." },
	{ MOD_K8S_METRIC_SHARE_LIMIT, "gauge",
	  "The most a pool holds: its cap and the headroom kept for tenants within their part." },
	{ MOD_K8S_METRIC_SHARE_TENANTS, "gauge",
	  "Tenants (namespaces, client addresses, upstreams) holding units of a pool now." },
	{ MOD_K8S_METRIC_SHARE_REFUSED_TOTAL, "counter",
	  "Units a pool refused: the tenant was past its fair part, or the pool full." },
};

static double share_value(const k8s_share_t *s, int family)
{
	switch (family) {
	case S_USED:    return k8s_share_used(s);
	case S_CAP:     return s->cap;
	case S_ROOM:    return s->room;
	case S_TENANTS: return atomic_load_explicit(&s->tenants, memory_order_relaxed);
	default:        return atomic_load_explicit(&s->refused, memory_order_relaxed);
	}
}

static void sample(k8s_metrics_out_t *out, int family, const k8s_share_t *s)
{
	// Pools of one name and owner (two forwarders of equal labels) are summed.
	for (const k8s_share_t *p = registered; p != NULL && p != s; p = p->next) {
		if (strcmp(p->pool, s->pool) == 0 && strcmp(p->owner, s->owner) == 0) {
			return;  // Written with the first of them.
		}
	}
	double value = share_value(s, family);
	for (const k8s_share_t *p = s->next; p != NULL; p = p->next) {
		if (strcmp(p->pool, s->pool) == 0 && strcmp(p->owner, s->owner) == 0) {
			value += share_value(p, family);
		}
	}
	char labels[160];
	snprintf(labels, sizeof(labels), "pool=\"%s\",owner=\"%s\"", s->pool, s->owner);
	k8s_metrics_sample(out, families[family].name, labels, value);
}

static void collect(void *ctx, k8s_metrics_out_t *out)
{
	(void)ctx;
	(void)pthread_once(&process.once, process_init);
	const k8s_share_t *own[] = { &process.tcp_dups, &process.sockets, &process.tcp_bytes };
	pthread_mutex_lock(&list_lock);
	for (int f = 0; f < S_COUNT; f++) {
		k8s_metrics_family(out, families[f].name, families[f].type, families[f].help);
		for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
			char labels[160];
			snprintf(labels, sizeof(labels), "pool=\"%s\",owner=\"%s\"", own[i]->pool,
			         own[i]->owner);
			k8s_metrics_sample(out, families[f].name, labels, share_value(own[i], f));
		}
		for (const k8s_share_t *s = registered; s != NULL; s = s->next) {
			sample(out, f, s);
		}
	}
	pthread_mutex_unlock(&list_lock);
}

static k8s_metrics_source_t source = { .collect = collect };

void k8s_share_register(k8s_share_t *share)
{
	pthread_mutex_lock(&members);
	pthread_mutex_lock(&list_lock);
	share->next = registered;
	registered = share;
	bool first = (registered_count++ == 0);
	pthread_mutex_unlock(&list_lock);
	if (first) {
		k8s_metrics_source_add(&source);
	}
	pthread_mutex_unlock(&members);
}

void k8s_share_unregister(k8s_share_t *share)
{
	pthread_mutex_lock(&members);
	pthread_mutex_lock(&list_lock);
	bool found = false;
	for (k8s_share_t **p = &registered; *p != NULL; p = &(*p)->next) {
		if (*p == share) {
			*p = share->next;
			found = true;
			break;
		}
	}
	bool last = found && (--registered_count == 0);
	pthread_mutex_unlock(&list_lock);
	if (last) {
		k8s_metrics_source_remove(&source);
	}
	pthread_mutex_unlock(&members);
}
