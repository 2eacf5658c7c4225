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
 * \brief The connections of a libmicrohttpd daemon driven by mhdthread.c, from their
 * accept to their close (NOTIFY_CONNECTION): a deadline for each request, and a cap
 * past which one connection gives way. Shared by the operations endpoint (httpd.c)
 * and the programming one (fedapi.c). Only the serving thread touches them, as every
 * libmicrohttpd callback runs in it.
 *
 * - The deadline: a connection not done within `request_ms` of its accept, or of its
 *   previous request's end (k8s_mhdconns_completed()), however steadily it trickles,
 *   is closed by k8s_mhdconns_expire() (the serving thread's tick). The clock stops
 *   while the owner says its answer is being sent (k8s_mhdconn_t.answering): the
 *   owner chooses whether the answer is within the deadline.
 * - The cap: a connection counts against `max` from its accept until the owner
 *   uncaps it (k8s_mhdconn_uncap(), e.g. once its client is verified) or it closes.
 *   Past `max`, k8s_mhdconns_make_room() closes the one k8s_mhdconns_victim() names.
 *
 * A connection is closed by shutting its socket down: libmicrohttpd sees the end of it
 * and reports it closed (k8s_mhdconns_notify()), which frees it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <urcu/list.h>

/*! \brief Which connection gives way past the cap (of those that count against it). */
typedef enum {
	K8S_MHDCONNS_OLDEST,           /*!< The oldest. */
	K8S_MHDCONNS_OLDEST_OF_MOST,   /*!< The oldest of the address that holds the most. */
} k8s_mhdconns_way_t;

typedef struct k8s_mhdconns k8s_mhdconns_t;

/*! \brief A connection, from its accept to its close. */
typedef struct {
	struct cds_list_head node;     /*!< In k8s_mhdconns_t.list. */
	k8s_mhdconns_t *set;           /*!< The one it is in. */
	int fd;
	struct sockaddr_storage addr;  /*!< The client's (its port is not compared). */
	uint64_t since_ms;             /*!< Accept, or the end of the previous request. */
	bool capped;                   /*!< Counts against the cap. */
	bool answering;                /*!< Its request is in, its answer being sent: no deadline. */
	bool closing;                  /*!< Shut down by us; libmicrohttpd has yet to see it. */
} k8s_mhdconn_t;

struct k8s_mhdconns {
	struct cds_list_head list;     /*!< Open connections (k8s_mhdconn_t), oldest first. */
	size_t capped;                 /*!< Of them, capped and not closing. */
	size_t max;                    /*!< Capped connections at most; past it one gives way. */
	k8s_mhdconns_way_t way;
	uint64_t request_ms;           /*!< The deadline. */
};

/*! \brief An empty set (nothing to free: every connection is freed as it closes). */
void k8s_mhdconns_init(k8s_mhdconns_t *cs, size_t max, k8s_mhdconns_way_t way,
                       uint64_t request_ms);

/*!
 * \brief MHD_OPTION_NOTIFY_CONNECTION's work: STARTED tracks the connection (its
 * socket is shut down, not served, if it cannot be), CLOSED frees it.
 *
 * \return The connection STARTED tracks (capped, not yet made room for: the owner
 *         calls k8s_mhdconns_make_room() when it is ready to), else NULL.
 */
k8s_mhdconn_t *k8s_mhdconns_notify(k8s_mhdconns_t *cs, struct MHD_Connection *connection,
                                   void **ctx, enum MHD_ConnectionNotificationCode code);

/*! \brief The tracked connection of a libmicrohttpd one, or NULL. */
k8s_mhdconn_t *k8s_mhdconn_of(struct MHD_Connection *connection);

/*!
 * \brief MHD_OPTION_NOTIFY_COMPLETED's work: a connection kept alive has as long for
 * its next request as a new one.
 */
void k8s_mhdconns_completed(struct MHD_Connection *connection);

/*! \brief Tracks a new connection (capped, its clock started at \a now_ms), or NULL. */
k8s_mhdconn_t *k8s_mhdconns_add(k8s_mhdconns_t *cs, int fd, const struct sockaddr *addr,
                                uint64_t now_ms);

/*! \brief Stops tracking \a c and frees it (libmicrohttpd closed it). */
void k8s_mhdconns_remove(k8s_mhdconn_t *c);

/*! \brief \a c no longer counts against the cap. */
void k8s_mhdconn_uncap(k8s_mhdconn_t *c);

/*! \brief Closes \a c (once): its socket is shut down. */
void k8s_mhdconn_close(k8s_mhdconn_t *c);

/*!
 * \brief Which capped connection, not closing, gives way past the cap. K8S_MHDCONNS_OLDEST:
 * the oldest (smallest since_ms, the first tracked of equals). K8S_MHDCONNS_OLDEST_OF_MOST:
 * the oldest of the address that holds the most of them, the new one counted (of
 * addresses that hold as many, the oldest of their connections). Either way the new
 * connection, tracked last and its clock started last, is chosen only when it is alone.
 *
 * \return It, or NULL if none is capped.
 */
k8s_mhdconn_t *k8s_mhdconns_victim(const k8s_mhdconns_t *cs);

/*! \brief Closes k8s_mhdconns_victim()'s choices while the cap is passed; returns how many. */
size_t k8s_mhdconns_make_room(k8s_mhdconns_t *cs);

/*!
 * \brief Closes every connection past its deadline at \a now_ms (their count added to
 * \a closed if not NULL).
 *
 * \return The ms until the next deadline, or -1 if no clock runs.
 */
int64_t k8s_mhdconns_expire(k8s_mhdconns_t *cs, uint64_t now_ms, size_t *closed);
