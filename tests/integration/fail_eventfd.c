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
 * Preloaded into knotd by tests/integration/faults/test_fault_reload.py: eventfd()
 * fails while the file named by $MODK8S_FAIL_EVENTFD exists. Only the
 * module's upstream resolver makes an eventfd (knotd and libcurl make none),
 * so a zone whose new settings need one fails to load, on demand.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

__attribute__((visibility("default")))
int eventfd(unsigned int count, int flags)
{
	const char *flag = getenv("MODK8S_FAIL_EVENTFD");
	if (flag != NULL && access(flag, F_OK) == 0) {
		errno = EMFILE;
		return -1;
	}
	int (*real)(unsigned int, int) = (int (*)(unsigned int, int))dlsym(RTLD_NEXT, "eventfd");
	return (real != NULL) ? real(count, flags) : (errno = ENOSYS, -1);
}
