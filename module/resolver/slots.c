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
#include <unistd.h>

#include <libknot/errcode.h>

#include "ops/dnsmetrics.h"
#include "resolver/slots.h"

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY };

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
                            const struct sockaddr_storage *local, k8s_tenant_t tenant)
{
	// The tenant's shares first: a flood past its part is refused here, at no cost.
	k8s_hold_t hold;
	if (!k8s_hold_take(slots->waiting, tenant, tcp, &hold)) {
		return NULL;
	}
	unsigned start = atomic_fetch_add_explicit(&slots->next, 1, memory_order_relaxed);
	// Every slot once at most (never waiting): its pool let the tenant in, so one is free
	// but when workers race for the last; a busy one is passed by a load, not a write.
	for (size_t k = 0; k < slots->count; k++) {
		k8s_slot_t *slot = slot_at(slots, (start + k) % slots->count);
		int expected = SLOT_FREE;
		if (atomic_load_explicit(&slot->state, memory_order_relaxed) != SLOT_FREE ||
		    !atomic_compare_exchange_strong(&slot->state, &expected, SLOT_FILLING)) {
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
		slot->tenant = tenant;
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

bool k8s_hold_take(k8s_share_t *waiting, k8s_tenant_t tenant, bool tcp, k8s_hold_t *hold)
{
	memset(hold, 0, sizeof(*hold));
	hold->waiting = waiting;
	if (waiting != NULL && !k8s_share_take(waiting, tenant, 1, &hold->waiting_ref)) {
		return false;
	}
	if (tcp && !k8s_share_take(k8s_share_tcp_dups(), tenant, 1, &hold->tcp_ref)) {
		k8s_hold_put(hold);
		return false;
	}
	return true;
}

void k8s_hold_put(k8s_hold_t *hold)
{
	if (hold->waiting != NULL) {
		k8s_share_put(hold->waiting, &hold->waiting_ref);
	}
	k8s_share_put(k8s_share_tcp_dups(), &hold->tcp_ref);
}
