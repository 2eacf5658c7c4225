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

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/mhdthread.h"

/*! \brief Whether the kernel has IPv6 sockets (not booted with ipv6.disable=1). */
static bool has_ipv6(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return errno != EAFNOSUPPORT;
	}
	close(fd);
	return true;
}

unsigned k8s_mhdthread_flags(const struct sockaddr_storage *conf, struct sockaddr_storage *listen,
                             uint16_t *port)
{
	*listen = *conf;
	if (conf->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)conf;
		*port = ntohs(in6->sin6_port);
		if (!IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr)) {
			return MHD_USE_EPOLL | MHD_USE_IPv6;
		}
		// "::" is every address of both families, as a Go server's ":PORT" (CoreDNS's
		// :9153): the kubelet probes a pod at its first family's address, IPv6 in an
		// IPv6-only cluster. Without IPv6 in the kernel, IPv4's 0.0.0.0.
		if (has_ipv6()) {
			return MHD_USE_EPOLL | MHD_USE_DUAL_STACK;
		}
		struct sockaddr_in *in = (struct sockaddr_in *)listen;
		memset(listen, 0, sizeof(*listen));
		in->sin_family = AF_INET;
		in->sin_port = in6->sin6_port;
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		return MHD_USE_EPOLL;
	}
	*port = ntohs(((const struct sockaddr_in *)conf)->sin_port);
	return MHD_USE_EPOLL;
}

static void *serve(void *arg)
{
	k8s_mhdthread_t *t = arg;
	// Named for top -H and the tests' fault injection (15 characters at most).
	(void)pthread_setname_np(pthread_self(), "k8s-http");
	if (t->hook != NULL) {
		t->hook(true);
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	struct pollfd fds[2] = {
		{ .fd = info->epoll_fd, .events = POLLIN },
		{ .fd = t->wake_fd, .events = POLLIN },
	};
	while (!atomic_load(&t->stopping)) {
		k8s_beat(&t->beat);  // Waits K8S_MHDTHREAD_MAX_WAIT_MS at most: a round a second.
		int64_t wait = K8S_MHDTHREAD_MAX_WAIT_MS;
		if (t->tick != NULL) {
			int64_t due = t->tick(t->arg, k8s_now_ms());
			if (due >= 0 && due < wait) {
				wait = due;
			}
		}
		MHD_UNSIGNED_LONG_LONG mhd_wait = 0;
		if (MHD_get_timeout(t->daemon, &mhd_wait) == MHD_YES &&
		    mhd_wait < (MHD_UNSIGNED_LONG_LONG)wait) {
			wait = (int64_t)mhd_wait;
		}
		if (poll(fds, 2, (int)wait) < 0 && errno != EINTR) {
			k8s_logf(t->log, LOG_ERR, "libmicrohttpd's thread, poll failed (%s)",
			         strerror(errno));
			break;
		}
		(void)MHD_run(t->daemon);
	}
	if (t->hook != NULL) {
		t->hook(false);
	}
	return NULL;
}

bool k8s_mhdthread_start(k8s_mhdthread_t *t, struct MHD_Daemon *daemon,
                         k8s_mhdthread_tick_t tick, k8s_mhdthread_hook_t hook, void *arg,
                         const k8s_log_t *log, const char *name)
{
	*t = (k8s_mhdthread_t){
		.daemon = daemon, .tick = tick, .hook = hook, .arg = arg, .log = log,
	};
	atomic_init(&t->stopping, false);
	k8s_beat_start(&t->beat, true, "%s", name);
	t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->wake_fd < 0 || MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD) == NULL ||
	    pthread_create(&t->thread, NULL, serve, t) != 0) {
		k8s_mhdthread_stop(t);
		return false;
	}
	t->started = true;
	return true;
}

void k8s_mhdthread_stop(k8s_mhdthread_t *t)
{
	if (t->daemon == NULL) {
		return;  // Never given a daemon (a zeroed one), or stopped already.
	}
	if (t->started) {
		atomic_store(&t->stopping, true);
		uint64_t one = 1;
		(void)!write(t->wake_fd, &one, sizeof(one));
		pthread_join(t->thread, NULL);
		t->started = false;
	}
	k8s_beat_stop(&t->beat);
	MHD_stop_daemon(t->daemon);
	t->daemon = NULL;
	if (t->wake_fd >= 0) {
		close(t->wake_fd);
		t->wake_fd = -1;
	}
}
