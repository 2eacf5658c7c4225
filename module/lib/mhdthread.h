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
 * \brief A libmicrohttpd daemon (MHD_USE_EPOLL, no thread of libmicrohttpd's own)
 * driven by a thread of ours: the daemon's epoll descriptor and a wake-up eventfd
 * polled, MHD_run() after each wait, and a tick of the owner's before each wait
 * (for deadlines of its own). Every libmicrohttpd callback runs in this thread.
 * Shared by the operations endpoint (httpd.c) and the programming one (fedapi.c).
 */

#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/beat.h"
#include "lib/log.h"

/*! The longest wait between two MHD_run() (a net under MHD_get_timeout()). */
#define K8S_MHDTHREAD_MAX_WAIT_MS  1000

/*!
 * \brief Called in the thread before each wait with the time (k8s_now_ms()):
 * returns the ms until it must be called again, or -1 if it does not care.
 */
typedef int64_t (*k8s_mhdthread_tick_t)(void *arg, uint64_t now_ms);

/*! \brief Called in the thread as it starts (true) and before it ends (false). */
typedef void (*k8s_mhdthread_hook_t)(bool starting);

typedef struct {
	struct MHD_Daemon *daemon;
	k8s_mhdthread_tick_t tick;    /*!< Or NULL. */
	k8s_mhdthread_hook_t hook;    /*!< Or NULL. */
	void *arg;                    /*!< The tick's. */
	const k8s_log_t *log;         /*!< A failed poll is logged here (NULL: not logged). */
	int wake_fd;                  /*!< eventfd: stop. */
	atomic_bool stopping;
	pthread_t thread;
	bool started;
	k8s_beat_t beat;              /*!< A round of the loop (/health). */
} k8s_mhdthread_t;

/*!
 * \brief The daemon flags (MHD_USE_EPOLL, and MHD_USE_IPv6 for an IPv6 address), the
 * address (out in \a listen) and the port (host order, out in \a port) to listen on for
 * the configured \a conf: both endpoints' start. "::" listens on both families
 * (MHD_USE_DUAL_STACK), or on 0.0.0.0 where the kernel has no IPv6.
 */
unsigned k8s_mhdthread_flags(const struct sockaddr_storage *conf, struct sockaddr_storage *listen,
                             uint16_t *port);

/*!
 * \brief Starts the thread that drives `daemon` (started with MHD_USE_EPOLL); the
 * thread then owns it. On failure the daemon is stopped too. \a name: its heartbeat's
 * (lib/beat.h), which /health names if a round of its loop never ends.
 *
 * \return True if the thread runs.
 */
bool k8s_mhdthread_start(k8s_mhdthread_t *t, struct MHD_Daemon *daemon,
                         k8s_mhdthread_tick_t tick, k8s_mhdthread_hook_t hook, void *arg,
                         const k8s_log_t *log, const char *name);

/*!
 * \brief Stops and joins the thread, then the daemon; nothing for a zeroed `t` or one
 * stopped already.
 */
void k8s_mhdthread_stop(k8s_mhdthread_t *t);
