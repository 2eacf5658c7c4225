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

#include "config.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/bulk.h"

/*
 * Under ASan the chunks stay (so that the sanitizer runs cover them), with
 * ASan's poison where no live block is: a chunk's unused tail, a redzone after
 * each block, and a block once freed. LeakSanitizer scans the chunks as roots,
 * since what their blocks point to is allocated elsewhere. MSan has no such
 * interface: there, sessions are calloc().
 */
#if defined(__SANITIZE_ADDRESS__)
#define BULK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BULK_ASAN 1
#elif __has_feature(memory_sanitizer)
#define BULK_OFF 1
#endif
#endif

#ifdef BULK_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#define POISON(addr, size)   ASAN_POISON_MEMORY_REGION(addr, size)
#define UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#define REDZONE              alignof(max_align_t)  /*!< Before each block: its size, poisoned. */
#else
#define POISON(addr, size)
#define UNPOISON(addr, size)
#define REDZONE              0
#endif

// Under valgrind, each block is a heap block to memcheck and the rest of a chunk no man's land.
#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MALLOCLIKE_BLOCK(addr, size, redzone, zeroed)
#define VALGRIND_FREELIKE_BLOCK(addr, redzone)
#define VALGRIND_MAKE_MEM_NOACCESS(addr, size)
#endif

#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))
#define PAGE ((size_t)4096)

/*! The head of a chunk, at its start: what it holds, plus one while a session fills it. */
typedef struct {
	atomic_size_t refs;
} chunk_t;

#define CHUNK_HEAD ALIGN_UP(sizeof(chunk_t), alignof(max_align_t))

/*! The calling thread's session: the chunk it fills. */
static __thread struct {
	bool open;
	chunk_t *chunk;
	size_t used;      /*!< Bytes of \a chunk handed out, its head included. */
} session;

/*! The chunks mapped, sorted by address: k8s_bulk_free() tells a chunk's blocks by them. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static chunk_t **registry;
static size_t registry_count, registry_cap;
static atomic_size_t chunks_mapped;

/*! Index of the first registered chunk at or above \a c (registry_lock held). */
static size_t registry_pos(const chunk_t *c)
{
	size_t lo = 0, hi = registry_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)registry[mid] < (uintptr_t)c) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static bool registry_add(chunk_t *c)
{
	pthread_mutex_lock(&registry_lock);
	if (registry_count == registry_cap) {
		size_t cap = (registry_cap > 0) ? 2 * registry_cap : 16;
		chunk_t **grown = realloc(registry, cap * sizeof(*grown));
		if (grown == NULL) {
			pthread_mutex_unlock(&registry_lock);
			return false;
		}
		registry = grown;
		registry_cap = cap;
	}
	size_t pos = registry_pos(c);
	for (size_t i = registry_count; i > pos; i--) {
		registry[i] = registry[i - 1];
	}
	registry[pos] = c;
	registry_count++;
	atomic_fetch_add(&chunks_mapped, 1);
	pthread_mutex_unlock(&registry_lock);
	return true;
}

static bool registry_has(const chunk_t *c)
{
	pthread_mutex_lock(&registry_lock);
	size_t pos = registry_pos(c);
	bool found = pos < registry_count && registry[pos] == c;
	pthread_mutex_unlock(&registry_lock);
	return found;
}

static void registry_remove(const chunk_t *c)
{
	pthread_mutex_lock(&registry_lock);
	size_t pos = registry_pos(c);
	if (pos < registry_count && registry[pos] == c) {
		registry_count--;
		for (size_t i = pos; i < registry_count; i++) {
			registry[i] = registry[i + 1];
		}
		atomic_fetch_sub(&chunks_mapped, 1);
	}
	if (registry_count == 0) {  // Nothing left for the module's unloading to lose.
		free(registry);
		registry = NULL;
		registry_cap = 0;
	}
	pthread_mutex_unlock(&registry_lock);
}

/*! Faults \a len bytes in now, in one call: a huge page where the kernel gives one. */
static void populate(void *addr, size_t len)
{
#ifdef MADV_HUGEPAGE
	(void)madvise(addr, len, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	(void)madvise(addr, len, MADV_POPULATE_WRITE);  // EINVAL before Linux 5.14: faulted as used.
#endif
}

/*! A new chunk, aligned to its size, with the session's reference; NULL when none can be had. */
static chunk_t *chunk_new(void)
{
	size_t span = 2 * K8S_BULK_CHUNK;
	uint8_t *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		return NULL;
	}
	uint8_t *start = (uint8_t *)ALIGN_UP((uintptr_t)map, K8S_BULK_CHUNK);
	if (start > map) {
		munmap(map, start - map);
	}
	munmap(start + K8S_BULK_CHUNK, map + span - (start + K8S_BULK_CHUNK));

	chunk_t *c = (chunk_t *)start;
	if (!registry_add(c)) {
		munmap(start, K8S_BULK_CHUNK);
		return NULL;
	}
	populate(start, K8S_BULK_CHUNK);
	atomic_init(&c->refs, 1);
	VALGRIND_MAKE_MEM_NOACCESS(start + CHUNK_HEAD, K8S_BULK_CHUNK - CHUNK_HEAD);
	POISON(start + CHUNK_HEAD, K8S_BULK_CHUNK - CHUNK_HEAD);
#ifdef BULK_ASAN
	__lsan_register_root_region(start, K8S_BULK_CHUNK);
#endif
	return c;
}

static void chunk_put(chunk_t *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
		registry_remove(c);
#ifdef BULK_ASAN
		__lsan_unregister_root_region(c, K8S_BULK_CHUNK);
#endif
		// The next mapping at this address must not inherit the poison.
		UNPOISON(c, K8S_BULK_CHUNK);
		munmap(c, K8S_BULK_CHUNK);
	}
}

bool k8s_bulk_enabled(void)
{
#ifdef BULK_OFF
	return false;
#else
	return true;
#endif
}

void k8s_bulk_begin(void)
{
	session.open = k8s_bulk_enabled();
}

void k8s_bulk_end(void)
{
	if (session.chunk != NULL) {
		chunk_put(session.chunk);
	}
	session.open = false;
	session.chunk = NULL;
	session.used = 0;
}

void *k8s_bulk_calloc(size_t size)
{
	if (!session.open || size > K8S_BULK_LARGE) {
		void *mem = calloc(1, size);
		// A large block is mapped for itself: populate its whole pages.
		if (session.open && mem != NULL) {
			uint8_t *first = (uint8_t *)ALIGN_UP((uintptr_t)mem, PAGE);
			uint8_t *end = (uint8_t *)(((uintptr_t)mem + size) & ~(PAGE - 1));
			if (end > first) {
				populate(first, end - first);
			}
		}
		return mem;
	}
	// A block starts aligned after its redzone and ends at the next one (ASan).
	size_t need = REDZONE + ALIGN_UP((size > 0) ? size : 1, alignof(max_align_t));
	if (session.chunk == NULL || K8S_BULK_CHUNK - session.used < need + REDZONE) {
		chunk_t *c = chunk_new();
		if (c == NULL) {
			return calloc(1, size);
		}
		if (session.chunk != NULL) {
			chunk_put(session.chunk);
		}
		session.chunk = c;
		session.used = CHUNK_HEAD;
	}
	uint8_t *mem = (uint8_t *)session.chunk + session.used + REDZONE;
	session.used += need;
	atomic_fetch_add_explicit(&session.chunk->refs, 1, memory_order_relaxed);
	VALGRIND_MALLOCLIKE_BLOCK(mem, size, 0, 1);
#ifdef BULK_ASAN
	// The redzone keeps the size for k8s_bulk_free(), poisoned like the rest of it.
	size_t *size_note = (size_t *)(mem - REDZONE);
	UNPOISON(size_note, sizeof(*size_note));
	*size_note = size;
	POISON(size_note, sizeof(*size_note));
	UNPOISON(mem, size);
#endif
	return mem;
}

char *k8s_bulk_strdup(const char *str)
{
	size_t size = strlen(str) + 1;
	char *copy = k8s_bulk_calloc(size);
	return (copy != NULL) ? memcpy(copy, str, size) : NULL;
}

void k8s_bulk_free(void *ptr)
{
	if (ptr == NULL) {
		return;
	}
	// A block of a chunk reached this thread after its chunk was counted (RCU or the
	// watcher handed it over), so no chunk mapped means a malloc() block.
	chunk_t *c = (chunk_t *)((uintptr_t)ptr & ~(K8S_BULK_CHUNK - 1));
	if (atomic_load_explicit(&chunks_mapped, memory_order_acquire) == 0 ||
	    (void *)c == ptr || !registry_has(c)) {
		free(ptr);
		return;
	}
	VALGRIND_FREELIKE_BLOCK(ptr, 0);
#ifdef BULK_ASAN
	// A read or write of the block from now on is ASan's use-after-poison.
	size_t *size_note = (size_t *)((uint8_t *)ptr - REDZONE);
	UNPOISON(size_note, sizeof(*size_note));
	size_t size = *size_note;
	POISON(size_note, REDZONE + size);
#endif
	chunk_put(c);
}

size_t k8s_bulk_chunks(void)
{
	return atomic_load(&chunks_mapped);
}
