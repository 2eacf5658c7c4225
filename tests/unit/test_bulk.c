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
 * The contract of bulk.h: in a session, small blocks come zeroed and aligned from
 * chunks; a chunk is unmapped with the last of its blocks, freed in any order and
 * from any thread, and never while the session still fills it. Under ASan the
 * chunks stay, poisoned where no live block is, and ASan catches an access past
 * a block; under MSan the same calls are calloc() and free(), and the chunk
 * counts below are expected to stay at zero there.
 */

#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "lib/bulk.h"

#define BLOCK 100
#ifdef TEST_ASAN
// BLOCK rounded up to 16 bytes after a redzone of 16, and a last redzone in the chunk.
#define PER_CHUNK ((K8S_BULK_CHUNK - 32) / 128)
#else
#define PER_CHUNK (K8S_BULK_CHUNK / 112)  // BLOCK rounded up to 16 bytes.
#endif

/*! Chunks expected where the build has them. */
static size_t chunks(size_t n)
{
	return k8s_bulk_enabled() ? n : 0;
}

static bool zeroed(const uint8_t *mem, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		if (mem[i] != 0) {
			return false;
		}
	}
	return true;
}

static void outside_a_session_blocks_are_callocs(void **state)
{
	void *mem = k8s_bulk_calloc(BLOCK);
	assert_non_null(mem);
	assert_true(zeroed(mem, BLOCK));
	assert_int_equal(k8s_bulk_chunks(), 0);
	k8s_bulk_free(mem);
	k8s_bulk_free(NULL);
}

static void a_session_packs_zeroed_aligned_blocks_into_one_chunk(void **state)
{
	k8s_bulk_begin();
	uint8_t *a = k8s_bulk_calloc(BLOCK);
	uint8_t *b = k8s_bulk_calloc(1);
	uint8_t *c = k8s_bulk_calloc(0);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	for (uint8_t *mem = a; mem != NULL; mem = (mem == a) ? b : (mem == b) ? c : NULL) {
		assert_int_equal((uintptr_t)mem % alignof(max_align_t), 0);
	}
	assert_true(zeroed(a, BLOCK));
	assert_true(b + 16 <= c || c + 16 <= b);
	assert_true(a + BLOCK <= b || b + 1 <= a);
	if (k8s_bulk_enabled()) {
		uintptr_t base = (uintptr_t)a & ~(K8S_BULK_CHUNK - 1);
		assert_int_equal((uintptr_t)b & ~(K8S_BULK_CHUNK - 1), base);
	}
	memset(a, 0xff, BLOCK);  // Its neighbour stays zero.
	assert_true(zeroed(b, 1));
	k8s_bulk_end();

	k8s_bulk_free(b);
	k8s_bulk_free(a);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_free(c);
	assert_int_equal(k8s_bulk_chunks(), 0);
}

static void a_chunk_lives_while_the_session_fills_it(void **state)
{
	k8s_bulk_begin();
	void *a = k8s_bulk_calloc(BLOCK);
	k8s_bulk_free(a);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	void *b = k8s_bulk_calloc(BLOCK);
	assert_non_null(b);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_free(b);
	k8s_bulk_end();
	assert_int_equal(k8s_bulk_chunks(), 0);
}

static void each_chunk_goes_with_its_last_block_in_any_order(void **state)
{
	// A fourth chunk for the last, whose index is even (so that it stays below).
	size_t count = 3 * PER_CHUNK + 1 + PER_CHUNK % 2;
	void **blocks = calloc(count, sizeof(*blocks));
	assert_non_null(blocks);
	k8s_bulk_begin();
	for (size_t i = 0; i < count; i++) {
		blocks[i] = k8s_bulk_calloc(BLOCK);
		assert_non_null(blocks[i]);
	}
	assert_int_equal(k8s_bulk_chunks(), chunks(4));
	k8s_bulk_end();

	// The odd blocks first: no chunk is empty yet.
	for (size_t i = 1; i < count; i += 2) {
		k8s_bulk_free(blocks[i]);
	}
	assert_int_equal(k8s_bulk_chunks(), chunks(4));
	// Then the even ones backwards: the last chunks go first.
	for (size_t i = (count - 1) & ~(size_t)1; ; i -= 2) {
		k8s_bulk_free(blocks[i]);
		if (i == 0) {
			break;
		}
	}
	assert_int_equal(k8s_bulk_chunks(), 0);
	free(blocks);
}

static void large_blocks_are_their_own_and_freed_alike(void **state)
{
	k8s_bulk_begin();
	uint8_t *large = k8s_bulk_calloc(K8S_BULK_LARGE + 1);
	assert_non_null(large);
	assert_true(zeroed(large, K8S_BULK_LARGE + 1));
	assert_int_equal(k8s_bulk_chunks(), 0);
	void *small = k8s_bulk_calloc(BLOCK);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_end();
	k8s_bulk_free(large);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_free(small);
	assert_int_equal(k8s_bulk_chunks(), 0);
}

static void *free_all(void *arg)
{
	void **blocks = arg;
	for (size_t i = 0; blocks[i] != NULL; i++) {
		k8s_bulk_free(blocks[i]);
	}
	return NULL;
}

static void another_thread_frees_and_unmaps(void **state)
{
	void *blocks[4] = { NULL };
	k8s_bulk_begin();
	for (size_t i = 0; i < 3; i++) {
		blocks[i] = k8s_bulk_calloc(BLOCK);
	}
	char *copy = k8s_bulk_strdup("svc-000001.gen-0001");
	k8s_bulk_end();
	assert_string_equal(copy, "svc-000001.gen-0001");
	assert_int_equal(k8s_bulk_chunks(), chunks(1));

	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, free_all, blocks), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_free(copy);
	assert_int_equal(k8s_bulk_chunks(), 0);
}

static void *alloc_block(void *arg)
{
	(void)arg;
	return k8s_bulk_calloc(BLOCK);
}

static void a_session_on_one_thread_leaves_the_others_alone(void **state)
{
	k8s_bulk_begin();
	void *mine = k8s_bulk_calloc(BLOCK);
	void *theirs = NULL;
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, alloc_block, NULL), 0);
	assert_int_equal(pthread_join(thread, &theirs), 0);
	assert_non_null(theirs);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));  // Theirs is a calloc().
	k8s_bulk_end();
	k8s_bulk_free(theirs);
	assert_int_equal(k8s_bulk_chunks(), chunks(1));
	k8s_bulk_free(mine);
	assert_int_equal(k8s_bulk_chunks(), 0);
}

#ifdef TEST_ASAN
static void under_asan_only_a_live_blocks_bytes_are_addressable(void **state)
{
	k8s_bulk_begin();
	uint8_t *a = k8s_bulk_calloc(BLOCK);
	uint8_t *b = k8s_bulk_calloc(BLOCK);
	assert_int_equal(k8s_bulk_chunks(), 1);
	assert_int_equal(__asan_region_is_poisoned(a, BLOCK), NULL);
	// Past its end, before its start, and the chunk's unused tail.
	assert_true(__asan_address_is_poisoned(a + BLOCK));
	assert_true(__asan_address_is_poisoned(a + BLOCK + 12));
	assert_true(__asan_address_is_poisoned(a - 1));
	assert_true(__asan_address_is_poisoned(b + BLOCK));
	assert_true(__asan_address_is_poisoned(b + 2 * BLOCK));
	k8s_bulk_free(a);
	assert_true(__asan_address_is_poisoned(a));
	assert_true(__asan_address_is_poisoned(a + BLOCK - 1));
	assert_int_equal(__asan_region_is_poisoned(b, BLOCK), NULL);
	k8s_bulk_end();
	k8s_bulk_free(b);
	assert_int_equal(k8s_bulk_chunks(), 0);
}

/*! \brief Reads the byte past a bulk block in a child, whose ASan report comes back. */
static void asan_reports_a_read_past_a_bulk_block(void **state)
{
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], STDERR_FILENO);
		k8s_bulk_begin();
		volatile uint8_t *mem = k8s_bulk_calloc(24);
		uint8_t past = mem[24];  // ASan ends the child here.
		_exit(past == 0 ? 0 : 1);
	}
	close(out[1]);
	char report[16384];
	size_t len = 0;
	ssize_t got;
	while (len < sizeof(report) - 1 &&
	       (got = read(out[0], report + len, sizeof(report) - 1 - len)) > 0) {
		len += got;
	}
	report[len] = '\0';
	close(out[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(report, "ERROR: AddressSanitizer: use-after-poison"));
	assert_non_null(strstr(report, "READ of size 1"));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outside_a_session_blocks_are_callocs),
		cmocka_unit_test(a_session_packs_zeroed_aligned_blocks_into_one_chunk),
		cmocka_unit_test(a_chunk_lives_while_the_session_fills_it),
		cmocka_unit_test(each_chunk_goes_with_its_last_block_in_any_order),
		cmocka_unit_test(large_blocks_are_their_own_and_freed_alike),
		cmocka_unit_test(another_thread_frees_and_unmaps),
		cmocka_unit_test(a_session_on_one_thread_leaves_the_others_alone),
#ifdef TEST_ASAN
		cmocka_unit_test(under_asan_only_a_live_blocks_bytes_are_addressable),
		cmocka_unit_test(asan_reports_a_read_past_a_bulk_block),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
