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
 * allocates: with no FREE slot among the few it tries, the hand-over fails. A TCP
 * connection is dup()ed into the slot; whoever holds the slot last closes that duplicate.
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

/*
 * A client address's share: how many of a resource (queries waiting, TCP duplicates) it
 * holds, counted without locks so that a worker checks it before its hand-over. An
 * address is an IPv4 address or an IPv6 /64 (one host's privacy addresses together);
 * each has two of K8S_SHARE_BUCKETS counters, chosen by a hash with a random key, and
 * its count is the smaller (a count-min sketch): another address in one of its buckets
 * does not count against it unless it shares both.
 */

/*! \brief Counters of a share table (16 KiB). */
#define K8S_SHARE_BUCKETS 4096

typedef struct {
	atomic_uint count[K8S_SHARE_BUCKETS];
	uint64_t key;   /*!< The hash's key: which addresses share a bucket is not guessable. */
	unsigned cap;   /*!< What one address may hold. */
} k8s_share_t;

/*! \brief What a holder keeps to give its share back: its address's two buckets. */
typedef struct {
	uint16_t bucket[2];
	bool held;
} k8s_share_ref_t;

/*! \brief An empty table whose addresses may each hold \a cap (at least 1). */
void k8s_share_init(k8s_share_t *share, unsigned cap);

/*!
 * \brief Takes one for \a addr, unless it holds its cap already; \a ref records it.
 * Never waits (atomic adds only): a worker's call.
 */
bool k8s_share_take(k8s_share_t *share, const struct sockaddr_storage *addr,
                    k8s_share_ref_t *ref);

/*! \brief Gives back what \a ref took (nothing if it took nothing). */
void k8s_share_put(k8s_share_t *share, k8s_share_ref_t *ref);

/*! \brief What \a addr holds now (its smaller counter), for tests and logs. */
unsigned k8s_share_held(k8s_share_t *share, const struct sockaddr_storage *addr);

/*!
 * \brief What a handed-over query holds until it is answered: one of its address's
 * waiting queries in the owner's table, and over TCP one of the process's TCP
 * duplicates (each forwarder's and each cold waiter's count together: descriptors are
 * knotd's), which are K8S_TCP_DUPS_PART of knotd's descriptor limit in all and a
 * K8S_SHARE_PART of that per address.
 */
typedef struct {
	k8s_share_t *waiting;       /*!< The owner's table \a waiting_ref counts in (NULL: none). */
	k8s_share_ref_t waiting_ref;
	k8s_share_ref_t tcp_ref;    /*!< Held: with one of the process's TCP duplicates. */
} k8s_hold_t;

/*! \brief The TCP duplicates of all hand-overs together: 1/4 of knotd's descriptor limit. */
#define K8S_TCP_DUPS_PART 4
/*! \brief The part of a total (waiting queries, TCP duplicates) one address may hold: 1/4. */
#define K8S_SHARE_PART 4

/*!
 * \brief Takes \a hold for a query from \a remote (over \a tcp: with a TCP duplicate),
 * \a waiting may be NULL. False, holding nothing, when a share or the TCP duplicates
 * are used up. Never waits (atomic adds only): a worker's call.
 */
bool k8s_hold_take(k8s_share_t *waiting, const struct sockaddr_storage *remote, bool tcp,
                   k8s_hold_t *hold);

/*! \brief Gives back what \a hold took (once; nothing if it took nothing). */
void k8s_hold_put(k8s_hold_t *hold);

/*! \brief The process's cap on TCP duplicates (knotd's descriptor soft limit / 4, 16-65,536). */
unsigned k8s_tcp_dups_max(void);

/*! \brief TCP duplicates held now, all hand-overs together (tests, logs). */
unsigned k8s_tcp_dups_held(void);

/*! \brief What every slot starts with: its state and the client the answer goes to. */
typedef struct {
	atomic_int state;
	int fd;                          /*!< knotd's UDP socket, or our dup() of the TCP connection. */
	bool tcp;
	uint16_t len;                    /*!< The query's wire length in the owner's payload. */
	struct sockaddr_storage remote;  /*!< The client (UDP; kept for TCP where the owner reads it). */
	struct sockaddr_storage local;   /*!< The late answer's source over UDP (AF_UNSPEC: the kernel's). */
	uint64_t received_ns;            /*!< Claimed then (dnsmetrics.h): the answer's duration. */
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
	k8s_share_t *waiting;  /*!< The owner's waiting queries per address (NULL: no cap). */
} k8s_slots_t;

/*!
 * \brief Sets up \a count slots of \a size bytes at \a base, all FREE (zeroed memory),
 * and the eventfd; a query holds one of \a waiting for its address (NULL: no cap) until
 * it is answered. Returns KNOT_EOK, or KNOT_ENOMEM without an eventfd.
 */
int k8s_slots_init(k8s_slots_t *slots, void *base, size_t count, size_t size,
                   k8s_share_t *waiting);

/*!
 * \brief Claims a FREE slot for a query of \a len bytes from \a fd (dup()ed for
 * \a tcp) and \a remote, sent to \a local (NULL or a wildcard if unknown: the kernel
 * chooses the UDP answer's source then): a worker's first step. The slot's hold takes the client's
 * shares first (k8s_hold_take()). Returns the slot, FILLING, with its header set and the
 * owner's payload to fill, or NULL if a share is used up, the few slots tried are busy
 * or the dup() failed.
 */
k8s_slot_t *k8s_slots_claim(k8s_slots_t *slots, int fd, bool tcp, size_t len,
                            const struct sockaddr_storage *remote,
                            const struct sockaddr_storage *local);

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
