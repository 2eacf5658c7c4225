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
 * \brief The hand-over slots between knotd's workers and a module thread that answers
 * late (forward.c for names outside our zones, coldwait.c for cold upstream names).
 *
 * A slot is FREE, FILLING (a worker claimed it by compare-and-swap and copies the query
 * in) or READY (published with a release store, the thread woken through an eventfd);
 * the thread takes a READY slot and sets it FREE again. A worker never waits and never
 * allocates: it tries each slot once at most (a busy one by a load, not a write), and
 * with no FREE slot the hand-over fails. Before it, the query's tenant takes its units of
 * the owner's waiting queries and, over TCP, of the process's TCP duplicates (share.h).
 * A TCP connection is dup()ed into the slot; whoever holds the slot last closes that
 * duplicate.
 *
 * The slots are the owner's array: each element starts with a k8s_slot_t, and
 * k8s_slots_t knows them by their base and size (their payloads differ).
 */

#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "resolver/share.h"

/*!
 * \brief What a handed-over query holds until it is answered: one unit of the owner's
 * waiting queries (its pool, share.h), and over TCP one of the process's TCP duplicates
 * (each forwarder's and each cold waiter's together: descriptors are knotd's), both
 * charged to the client's tenant.
 */
typedef struct {
	k8s_share_t *waiting;       /*!< The owner's pool \a waiting_ref counts in (NULL: none). */
	k8s_share_ref_t waiting_ref;
	k8s_share_ref_t tcp_ref;    /*!< Held: with one of the process's TCP duplicates. */
} k8s_hold_t;

/*!
 * \brief Takes \a hold for a query of \a tenant (over \a tcp: with a TCP duplicate);
 * \a waiting may be NULL. False, holding nothing, when a pool refuses. Never waits
 * (atomic adds only): a worker's call.
 */
bool k8s_hold_take(k8s_share_t *waiting, k8s_tenant_t tenant, bool tcp, k8s_hold_t *hold);

/*! \brief Gives back what \a hold took (once; nothing if it took nothing). */
void k8s_hold_put(k8s_hold_t *hold);

/*! \brief What every slot starts with: its state and the client the answer goes to. */
typedef struct {
	atomic_int state;
	int fd;                          /*!< knotd's UDP socket, or our dup() of the TCP connection. */
	bool tcp;
	uint16_t len;                    /*!< The query's wire length in the owner's payload. */
	struct sockaddr_storage remote;  /*!< The client (UDP; kept for TCP where the owner reads it). */
	struct sockaddr_storage local;   /*!< The late answer's source over UDP (AF_UNSPEC: the kernel's). */
	uint64_t received_ns;            /*!< Claimed then (dnsmetrics.h): the answer's duration. */
	k8s_tenant_t tenant;             /*!< Who the query is charged to (share.h). */
	k8s_hold_t hold;                 /*!< Given back with the TCP duplicate's close. */
} k8s_slot_t;

/*! \brief The slots, their wake-up and the thread's stop flag. */
typedef struct {
	void *base;            /*!< The first slot of the owner's array. */
	size_t count;
	size_t size;           /*!< Bytes from one slot to the next. */
	atomic_uint next;      /*!< Where the next worker starts looking. */
	atomic_bool stop;
	int wake_fd;           /*!< An eventfd: the thread polls it, workers write it. */
	atomic_bool wake_sent; /*!< wake_fd written since the thread last looked: no more writes. */
	k8s_share_t *waiting;  /*!< The owner's waiting queries (NULL: no pool). */
} k8s_slots_t;

/*!
 * \brief Sets up \a count slots of \a size bytes at \a base, all FREE (zeroed memory),
 * and the eventfd; a query holds a unit of \a waiting for its tenant (NULL: no pool)
 * until it is answered. Returns KNOT_EOK, or KNOT_ENOMEM without an eventfd.
 */
int k8s_slots_init(k8s_slots_t *slots, void *base, size_t count, size_t size,
                   k8s_share_t *waiting);

/*!
 * \brief Claims a FREE slot for a query of \a len bytes from \a fd (dup()ed for
 * \a tcp) and \a remote, sent to \a local (NULL or a wildcard if unknown: the kernel
 * chooses the UDP answer's source then), charged to \a tenant: a worker's first step. The
 * slot's hold takes the tenant's units first (k8s_hold_take()). Returns the slot, FILLING,
 * with its header set and the owner's payload to fill, or NULL if a pool refuses, the
 * slots tried are busy or the dup() failed.
 */
k8s_slot_t *k8s_slots_claim(k8s_slots_t *slots, int fd, bool tcp, size_t len,
                            const struct sockaddr_storage *remote,
                            const struct sockaddr_storage *local, k8s_tenant_t tenant);

/*! \brief Publishes a claimed slot to the thread, and wakes it. */
void k8s_slots_publish(k8s_slots_t *slots, k8s_slot_t *slot);

/*! \brief The \a i th slot if it is READY (the thread's read of it), else NULL. */
k8s_slot_t *k8s_slots_ready(k8s_slots_t *slots, size_t i);

/*!
 * \brief Frees a READY slot for the workers. With \a close_fd, its TCP duplicate is
 * closed and its hold given back; without, the caller took both.
 */
void k8s_slots_release(k8s_slot_t *slot, bool close_fd);

/*!
 * \brief Wakes the thread (its poll on \a wake_fd returns), unless it was woken and
 * has not looked yet: one write per batch of hand-overs, not one per query.
 */
void k8s_slots_wake(k8s_slots_t *slots);

/*!
 * \brief The thread is about to look at the slots: the next hand-over wakes it again.
 * Called at the top of each turn of its loop, before it reads the slots.
 */
void k8s_slots_looking(k8s_slots_t *slots);

/*! \brief Reads the eventfd's count after a wake-up, so that the next poll waits. */
void k8s_slots_woken(k8s_slots_t *slots);

/*! \brief Whether the thread is asked to stop. */
bool k8s_slots_stopping(k8s_slots_t *slots);

/*!
 * \brief Stops the owner's \a thread (the flag, a wake-up, a join), then closes the
 * TCP duplicates of the queries still waiting (they get no answer), gives their holds
 * back and closes the eventfd.
 */
void k8s_slots_stop(k8s_slots_t *slots, pthread_t thread);

/*! \brief Closes the eventfd of slots whose thread never started. */
void k8s_slots_deinit(k8s_slots_t *slots);
