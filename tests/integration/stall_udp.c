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
 * Preloaded into knotd by tests/integration/ops/test_health.py: knotd's UDP workers
 * stall in their receive call while the file named by $MODK8S_STALL_UDP exists, as
 * workers stuck in a query would, and the rest of the process (the module's
 * threads) runs on; while the file named by $MODK8S_SLOW_UDP exists, each receive call
 * takes one datagram and waits 5 ms first: a worker that answers 200 queries a second
 * at most, so that a modest flood overflows its socket and knotd drops queries. Only
 * sockets bound to port $MODK8S_STALL_PORT (knotd's listener) stall or slow down.
 */

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*! \brief Stalls while the stall flag exists; returns true if the socket is to be slow. */
static bool stall(int fd)
{
	const char *flag = getenv("MODK8S_STALL_UDP");
	const char *slow = getenv("MODK8S_SLOW_UDP");
	const char *port = getenv("MODK8S_STALL_PORT");
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (port == NULL || getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
		return false;
	}
	in_port_t bound = (addr.ss_family == AF_INET6) ? ((struct sockaddr_in6 *)&addr)->sin6_port
	                  : (addr.ss_family == AF_INET) ? ((struct sockaddr_in *)&addr)->sin_port : 0;
	if (ntohs(bound) != atoi(port)) {
		return false;
	}
	while (flag != NULL && access(flag, F_OK) == 0) {
		struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	if (slow != NULL && access(slow, F_OK) == 0) {
		struct timespec pause = { .tv_nsec = 5 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		return true;
	}
	return false;
}

__attribute__((visibility("default")))
int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int len, int flags, struct timespec *timeout)
{
	if (stall(fd) && len > 1) {
		len = 1;
	}
	int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *) =
		(int (*)(int, struct mmsghdr *, unsigned int, int, struct timespec *))dlsym(RTLD_NEXT, "recvmmsg");
	return (real != NULL) ? real(fd, msgs, len, flags, timeout) : (errno = ENOSYS, -1);
}

__attribute__((visibility("default")))
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	(void)stall(fd);
	ssize_t (*real)(int, struct msghdr *, int) =
		(ssize_t (*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");
	return (real != NULL) ? real(fd, msg, flags) : (errno = ENOSYS, -1);
}
