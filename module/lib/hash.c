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


#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif

#include "lib/hash.h"

uint64_t k8s_hash_key[2];

/*! \brief Draws the key when the module is loaded, before any table exists. */
__attribute__((constructor))
static void hash_key_init(void)
{
#ifdef RUNNING_ON_VALGRIND
	// bench/run's callgrind only: a fixed key makes a mix's probe runs the same from
	// run to run. Never in production: honoured only under valgrind.
	const char *fixed = getenv("MODK8S_BENCH_HASH_KEY");
	if (fixed != NULL && RUNNING_ON_VALGRIND) {
		uint64_t word = strtoull(fixed, NULL, 0);
		k8s_hash_key[0] = (word ^ 0x243f6a8885a308d3ULL) | 1;
		k8s_hash_key[1] = (word * 0x9e3779b97f4a7c15ULL ^ 0x13198a2e03707344ULL) | 1;
		return;
	}
#endif
	if (getrandom(k8s_hash_key, sizeof(k8s_hash_key), GRND_NONBLOCK) != sizeof(k8s_hash_key)) {
		// Without an entropy source yet (early boot): what differs between runs.
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		k8s_hash_key[0] ^= (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uintptr_t)&ts;
		k8s_hash_key[1] ^= (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uintptr_t)&hash_key_init;
	}
	// Odd words, as Go's runtime makes them: a multiplication by an even one loses bits.
	for (int i = 0; i < 2; i++) {
		k8s_hash_key[i] |= 1;
	}
}

uint64_t k8s_fnv64(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
