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
 * Preloaded into knotd by tests/integration/ops/test_health.py: while the file named by
 * $MODK8S_STALL_THREAD exists, the thread whose name (pthread_setname_np, 15 characters
 * at most) is the file's first line stalls in its next poll() until the file is gone, as
 * a thread wedged in its loop would: the module's watcher ("k8s-watch"), forwarder
 * ("k8s-forward"), endpoints ("k8s-http"). The other threads run on.
 */

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/*! \brief The calling thread's name, read once: the module's threads name themselves first. */
static const char *thread_name(void)
{
	static __thread char name[17];
	if (name[0] == '\0' && prctl(PR_GET_NAME, name, 0, 0, 0) != 0) {
		name[0] = '\0';
	}
	return name;
}

/*! \brief True while the flag file exists and names the calling thread. */
static int named_to_stall(const char *flag)
{
	FILE *f = fopen(flag, "r");
	if (f == NULL) {
		return 0;
	}
	char wanted[64] = "";
	int named = fgets(wanted, sizeof(wanted), f) != NULL &&
	            strncmp(wanted, thread_name(), strcspn(wanted, "\n")) == 0 &&
	            strcspn(wanted, "\n") == strlen(thread_name());
	fclose(f);
	return named;
}

__attribute__((visibility("default")))
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	const char *flag = getenv("MODK8S_STALL_THREAD");
	if (flag != NULL && access(flag, F_OK) == 0) {
		while (named_to_stall(flag)) {
			struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	int (*real)(struct pollfd *, nfds_t, int) =
		(int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	return (real != NULL) ? real(fds, nfds, timeout) : (errno = ENOSYS, -1);
}
