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

#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "ops/dnsmetrics.h"
#include "resolver/slots.h"

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY };

/*! \brief Slots a worker tries before it gives up (never waiting). */
#define CLAIM_TRIES 8

static k8s_slot_t *slot_at(k8s_slots_t *slots, size_t i)
{
	return (k8s_slot_t *)((uint8_t *)slots->base + i * slots->size);
}

int k8s_slots_init(k8s_slots_t *slots, void *base, size_t count, size_t size,
                   k8s_share_t *waiting)
{
	slots->base = base;
	slots->waiting = waiting;
	slots->count = count;
	slots->size = size;
	atomic_init(&slots->next, 0);
	atomic_init(&slots->stop, false);
	slots->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return (slots->wake_fd < 0) ? KNOT_ENOMEM : KNOT_EOK;
}

k8s_slot_t *k8s_slots_claim(k8s_slots_t *slots, int fd, bool tcp, size_t len,
                            const struct sockaddr_storage *remote,
                            const struct sockaddr_storage *local)
{
	// The client's shares first: one address's flood is refused here, at no cost.
	k8s_hold_t hold;
	if (!k8s_hold_take(slots->waiting, remote, tcp, &hold)) {
		return NULL;
	}
	unsigned start = atomic_fetch_add_explicit(&slots->next, 1, memory_order_relaxed);
	for (unsigned k = 0; k < CLAIM_TRIES; k++) {
		k8s_slot_t *slot = slot_at(slots, (start + k) % slots->count);
		int expected = SLOT_FREE;
		if (!atomic_compare_exchange_strong(&slot->state, &expected, SLOT_FILLING)) {
			continue;
		}
		slot->fd = tcp ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : fd;
		if (slot->fd < 0) {
			atomic_store(&slot->state, SLOT_FREE);
			break;
		}
		slot->hold = hold;
		slot->tcp = tcp;
		slot->len = len;
		slot->received_ns = k8s_dnsmetrics_clock();
		if (remote != NULL) {
			slot->remote = *remote;
		} else {
			slot->remote.ss_family = AF_UNSPEC;  // No stale client's family.
		}
		// A TCP answer goes on the connection, whatever its source.
		if (local != NULL && !tcp) {
			slot->local = *local;
		} else {
			slot->local.ss_family = AF_UNSPEC;
		}
		return slot;
	}
	k8s_hold_put(&hold);
	return NULL;
}

void k8s_slots_publish(k8s_slots_t *slots, k8s_slot_t *slot)
{
	atomic_store_explicit(&slot->state, SLOT_READY, memory_order_release);
	k8s_slots_wake(slots);
}

k8s_slot_t *k8s_slots_ready(k8s_slots_t *slots, size_t i)
{
	k8s_slot_t *slot = slot_at(slots, i);
	return (atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_READY) ? slot
	                                                                                 : NULL;
}

void k8s_slots_release(k8s_slot_t *slot, bool close_fd)
{
	if (close_fd) {
		if (slot->tcp) {
			close(slot->fd);
		}
		k8s_hold_put(&slot->hold);
	}
	atomic_store_explicit(&slot->state, SLOT_FREE, memory_order_release);
}

static void wake_write(k8s_slots_t *slots)
{
	uint64_t one = 1;
	(void)!write(slots->wake_fd, &one, sizeof(one));
}

void k8s_slots_wake(k8s_slots_t *slots)
{
	// Sequentially consistent after the slot's READY store: a thread that clears the
	// flag later (k8s_slots_looking) reads the slots after that and sees it.
	if (!atomic_exchange(&slots->wake_sent, true)) {
		wake_write(slots);
	}
}

void k8s_slots_looking(k8s_slots_t *slots)
{
	(void)atomic_exchange(&slots->wake_sent, false);
}

void k8s_slots_woken(k8s_slots_t *slots)
{
	uint64_t value;
	(void)!read(slots->wake_fd, &value, sizeof(value));
}

bool k8s_slots_stopping(k8s_slots_t *slots)
{
	return atomic_load(&slots->stop);
}

void k8s_slots_stop(k8s_slots_t *slots, pthread_t thread)
{
	atomic_store(&slots->stop, true);
	wake_write(slots);
	pthread_join(thread, NULL);
	for (size_t i = 0; i < slots->count; i++) {
		k8s_slot_t *slot = k8s_slots_ready(slots, i);
		if (slot != NULL) {
			k8s_slots_release(slot, true);
		}
	}
	k8s_slots_deinit(slots);
}

void k8s_slots_deinit(k8s_slots_t *slots)
{
	if (slots->wake_fd >= 0) {
		close(slots->wake_fd);
		slots->wake_fd = -1;
	}
}

void k8s_share_init(k8s_share_t *share, unsigned cap)
{
	for (size_t i = 0; i < K8S_SHARE_BUCKETS; i++) {
		atomic_init(&share->count[i], 0);
	}
	share->cap = (cap > 0) ? cap : 1;
	if (getrandom(&share->key, sizeof(share->key), GRND_NONBLOCK) != sizeof(share->key)) {
		share->key = (uintptr_t)share ^ 0x9e3779b97f4a7c15ULL;  // Still per process.
	}
}

/*! \brief The address as 64 bits: IPv4 (mapped too) tagged, an IPv6 address's /64. */
static uint64_t share_addr(const struct sockaddr_storage *addr)
{
	uint64_t v = 0;
	if (addr == NULL) {
		return v;
	} else if (addr->ss_family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (!IN6_IS_ADDR_V4MAPPED(a6)) {
			memcpy(&v, a6->s6_addr, sizeof(v));
			return v;
		}
		uint32_t v4;
		memcpy(&v4, a6->s6_addr + 12, sizeof(v4));
		return (1ULL << 63) | v4;
	} else if (addr->ss_family == AF_INET) {
		return (1ULL << 63) | ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
	}
	return v;
}

static void share_buckets(const k8s_share_t *share, const struct sockaddr_storage *addr,
                          uint16_t bucket[2])
{
	// splitmix64's finalizer over the keyed address: one multiply-xorshift hash.
	uint64_t h = share_addr(addr) ^ share->key;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	bucket[0] = h % K8S_SHARE_BUCKETS;
	bucket[1] = (h >> 32) % K8S_SHARE_BUCKETS;
	if (bucket[1] == bucket[0]) {
		bucket[1] = (bucket[0] + 1) % K8S_SHARE_BUCKETS;
	}
}

bool k8s_share_take(k8s_share_t *share, const struct sockaddr_storage *addr,
                    k8s_share_ref_t *ref)
{
	share_buckets(share, addr, ref->bucket);
	unsigned a = atomic_fetch_add_explicit(&share->count[ref->bucket[0]], 1,
	                                       memory_order_relaxed);
	unsigned b = atomic_fetch_add_explicit(&share->count[ref->bucket[1]], 1,
	                                       memory_order_relaxed);
	// Over the cap: both given back. Workers racing on one address pass the cap by one
	// each at most.
	ref->held = ((a < b) ? a : b) < share->cap;
	if (!ref->held) {
		atomic_fetch_sub_explicit(&share->count[ref->bucket[0]], 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&share->count[ref->bucket[1]], 1, memory_order_relaxed);
	}
	return ref->held;
}

void k8s_share_put(k8s_share_t *share, k8s_share_ref_t *ref)
{
	if (ref->held) {
		atomic_fetch_sub_explicit(&share->count[ref->bucket[0]], 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&share->count[ref->bucket[1]], 1, memory_order_relaxed);
		ref->held = false;
	}
}

unsigned k8s_share_held(k8s_share_t *share, const struct sockaddr_storage *addr)
{
	uint16_t bucket[2];
	share_buckets(share, addr, bucket);
	unsigned a = atomic_load_explicit(&share->count[bucket[0]], memory_order_relaxed);
	unsigned b = atomic_load_explicit(&share->count[bucket[1]], memory_order_relaxed);
	return (a < b) ? a : b;
}

/*
 * The process's TCP duplicates: every hand-over's count together, as the descriptors
 * they use are knotd's; set up once, from knotd's limit when the first owner starts.
 */
static struct {
	pthread_once_t once;
	atomic_uint held;
	unsigned max;
	k8s_share_t per_addr;
} tcp_dups = { .once = PTHREAD_ONCE_INIT };

static void tcp_dups_init(void)
{
	struct rlimit lim;
	rlim_t files = 1024;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
		files = lim.rlim_cur;
	}
	files /= K8S_TCP_DUPS_PART;
	tcp_dups.max = (files < 16) ? 16 : (files > 65536) ? 65536 : files;
	k8s_share_init(&tcp_dups.per_addr, tcp_dups.max / K8S_SHARE_PART);
}

unsigned k8s_tcp_dups_max(void)
{
	(void)pthread_once(&tcp_dups.once, tcp_dups_init);
	return tcp_dups.max;
}

unsigned k8s_tcp_dups_held(void)
{
	return atomic_load(&tcp_dups.held);
}

bool k8s_hold_take(k8s_share_t *waiting, const struct sockaddr_storage *remote, bool tcp,
                   k8s_hold_t *hold)
{
	memset(hold, 0, sizeof(*hold));
	hold->waiting = waiting;
	if (waiting != NULL && !k8s_share_take(waiting, remote, &hold->waiting_ref)) {
		return false;
	}
	if (!tcp) {
		return true;
	}
	unsigned max = k8s_tcp_dups_max();
	if (atomic_fetch_add(&tcp_dups.held, 1) >= max) {
		atomic_fetch_sub(&tcp_dups.held, 1);
	} else if (!k8s_share_take(&tcp_dups.per_addr, remote, &hold->tcp_ref)) {
		atomic_fetch_sub(&tcp_dups.held, 1);
	} else {
		return true;
	}
	k8s_hold_put(hold);
	return false;
}

void k8s_hold_put(k8s_hold_t *hold)
{
	if (hold->waiting != NULL) {
		k8s_share_put(hold->waiting, &hold->waiting_ref);
	}
	if (hold->tcp_ref.held) {
		k8s_share_put(&tcp_dups.per_addr, &hold->tcp_ref);
		atomic_fetch_sub(&tcp_dups.held, 1);
	}
}
