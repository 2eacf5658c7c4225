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
 * The warm restart's snapshot file (module/store/snapfile.c): what was written reads back,
 * and every kind of bad file is refused with its reason, never half-read.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "store/snapfile.h"

#define SETTINGS 0x1234abcdULL
#define NOW      1800000000LL
static const char PAYLOAD[] = "{\"services\":[]}";

static char path[256];

static int setup(void **state)
{
	snprintf(path, sizeof(path), "/tmp/test_snapfile.%d", (int)getpid());
	k8s_snaphdr_t hdr = { .settings_hash = SETTINGS, .created_s = NOW - 10, .sources = 3,
	                      .counts = { 5, 0, 7 } };
	return k8s_snapfile_write(path, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1);
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

/*! Reads the test file with default expectations; returns the result and the reason. */
static int read_back(uint64_t settings, int64_t max_age, char *why, size_t why_len)
{
	k8s_snaphdr_t hdr;
	k8s_snapmap_t map;
	int ret = k8s_snapfile_read(path, settings, NOW, max_age, &hdr, &map, why, why_len);
	if (ret == KNOT_EOK) {
		assert_int_equal(map.len, sizeof(PAYLOAD) - 1);
		assert_memory_equal(map.payload, PAYLOAD, map.len);
		assert_int_equal(hdr.sources, 3);
		assert_int_equal(hdr.counts[0], 5);
		assert_int_equal(hdr.counts[2], 7);
		assert_int_equal(hdr.created_s, NOW - 10);
	} else {
		assert_null(map.map);
		assert_null(map.payload);
	}
	k8s_snapfile_unmap(&map);
	return ret;
}

static void what_was_written_reads_back(void **state)
{
	char why[128];
	assert_int_equal(read_back(SETTINGS, 3600, why, sizeof(why)), KNOT_EOK);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_not_equal(access(tmp, F_OK), 0); // Renamed, not left aside.
}

static void a_missing_snapshot_is_enoent(void **state)
{
	unlink(path);
	char why[128];
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_ENOENT);
}

/*! Changes the file with \a edit and expects a refusal naming \a reason. */
static void expect_refused(void (*edit)(FILE *, long), uint64_t settings, int64_t max_age,
                           const char *reason)
{
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	if (edit != NULL) {
		edit(f, size);
	}
	fclose(f);
	char why[128];
	assert_int_equal(read_back(settings, max_age, why, sizeof(why)), KNOT_EMALF);
	assert_non_null(strstr(why, reason));
}

static void cut_in_payload(FILE *f, long size)
{
	assert_int_equal(ftruncate(fileno(f), size - 10), 0);
}

static void cut_in_header(FILE *f, long size)
{
	assert_int_equal(ftruncate(fileno(f), 20), 0);
}

static void flip_payload_byte(FILE *f, long size)
{
	fseek(f, size - 12, SEEK_SET);
	fputc('X', f);
}

static void bump_version(FILE *f, long size)
{
	fseek(f, 8, SEEK_SET);
	fputc(K8S_SNAP_VERSION + 1, f);
}

static void foreign_magic(FILE *f, long size)
{
	fseek(f, 0, SEEK_SET);
	fputs("GARBAGE!", f);
}

static void a_truncated_snapshot_is_refused(void **state)
{
	expect_refused(cut_in_payload, SETTINGS, 0, "truncated");
}

static void cut_to_nothing(FILE *f, long size)
{
	assert_int_equal(ftruncate(fileno(f), 0), 0);
}

static void a_snapshot_cut_in_its_header_is_refused(void **state)
{
	expect_refused(cut_in_header, SETTINGS, 0, "truncated");
	// An empty file cannot be mapped: refused all the same.
	expect_refused(cut_to_nothing, SETTINGS, 0, "truncated");
}

static void a_corrupt_snapshot_is_refused(void **state)
{
	expect_refused(flip_payload_byte, SETTINGS, 0, "checksum");
}

static void a_foreign_version_is_refused(void **state)
{
	char reason[64];
	snprintf(reason, sizeof(reason), "version %u, expected %u", K8S_SNAP_VERSION + 1,
	         K8S_SNAP_VERSION);
	expect_refused(bump_version, SETTINGS, 0, reason);
}

static void a_file_of_something_else_is_refused(void **state)
{
	expect_refused(foreign_magic, SETTINGS, 0, "not a snapshot");
}

static void a_snapshot_of_other_settings_is_refused(void **state)
{
	expect_refused(NULL, SETTINGS + 1, 0, "other watch settings");
}

static void a_snapshot_older_than_max_age_is_refused(void **state)
{
	expect_refused(NULL, SETTINGS, 5, "older than snapshot-max-age");
}

static void write_created(int64_t created_s)
{
	k8s_snaphdr_t hdr = { .settings_hash = SETTINGS, .created_s = created_s, .sources = 3,
	                      .counts = { 5, 0, 7 } };
	assert_int_equal(k8s_snapfile_write(path, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1), KNOT_EOK);
}

static void a_negative_creation_time_is_refused(void **state)
{
	// INT64_MIN made "now - created" overflow to a negative age that passed max-age.
	write_created(INT64_MIN);
	expect_refused(NULL, SETTINGS, 3600, "negative creation time");
	write_created(-1);
	expect_refused(NULL, SETTINGS, 3600, "negative creation time");
	expect_refused(NULL, SETTINGS, 0, "negative creation time");
}

static void a_creation_time_far_in_the_future_is_refused(void **state)
{
	write_created(INT64_MAX);
	expect_refused(NULL, SETTINGS, 3600, "created in the future");
	write_created(NOW + 61);
	expect_refused(NULL, SETTINGS, 0, "created in the future");
}

/*! A file of a name beside the snapshot's; \a suffix says which. */
static void path_with(char *out, size_t len, const char *suffix)
{
	snprintf(out, len, "%s%s", path, suffix);
}

static void a_link_planted_at_the_temporary_name_is_not_followed(void **state)
{
	char tmp[300], victim[300];
	path_with(tmp, sizeof(tmp), ".tmp");
	path_with(victim, sizeof(victim), ".victim");
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	assert_int_equal(symlink(victim, tmp), 0);

	k8s_snaphdr_t hdr = { .settings_hash = SETTINGS, .created_s = NOW - 10, .sources = 3,
	                      .counts = { 5, 0, 7 } };
	int ret = k8s_snapfile_write(path, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1);
	char text[32] = "";
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	unlink(victim);
	unlink(tmp);
	assert_string_equal(text, "precious");
	// The link is replaced by a file of our own, so the snapshot is written all the same.
	assert_int_equal(ret, KNOT_EOK);
	char why[128];
	assert_int_equal(read_back(SETTINGS, 3600, why, sizeof(why)), KNOT_EOK);
}

static void a_snapshot_that_is_a_symbolic_link_is_refused(void **state)
{
	char real[300];
	path_with(real, sizeof(real), ".real");
	assert_int_equal(rename(path, real), 0);
	assert_int_equal(symlink(real, path), 0);
	char why[128];
	int ret = read_back(SETTINGS, 0, why, sizeof(why));
	unlink(real);
	assert_int_equal(ret, KNOT_EMALF);
	assert_non_null(strstr(why, "symbolic link"));
}

static void a_snapshot_writable_by_others_is_refused(void **state)
{
	assert_int_equal(chmod(path, 0602), 0);
	expect_refused(NULL, SETTINGS, 0, "writable by group or others");
	assert_int_equal(chmod(path, 0660), 0);
	expect_refused(NULL, SETTINGS, 0, "writable by group or others");
	assert_int_equal(chmod(path, 0644), 0);
	char why[128];
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_EOK);
}

static void a_snapshot_owned_by_another_user_is_refused(void **state)
{
	uid_t other = (geteuid() == 65534) ? 65533 : 65534;
	if (chown(path, other, (gid_t)-1) != 0) {
		skip();  // Only root may give a file away.
	}
	expect_refused(NULL, SETTINGS, 0, "owned by uid");
}

static void fnv64_matches_the_reference_values(void **state)
{
	// Published FNV-1a 64 test vectors.
	assert_true(k8s_fnv64("", 0, K8S_FNV64_INIT) == 0xcbf29ce484222325ULL);
	assert_true(k8s_fnv64("a", 1, K8S_FNV64_INIT) == 0xaf63dc4c8601ec8cULL);
	assert_true(k8s_fnv64("foobar", 6, K8S_FNV64_INIT) == 0x85944171f73967e8ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(what_was_written_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(a_missing_snapshot_is_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(a_truncated_snapshot_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_cut_in_its_header_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_corrupt_snapshot_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_foreign_version_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_file_of_something_else_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_of_other_settings_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_older_than_max_age_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_negative_creation_time_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_creation_time_far_in_the_future_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_link_planted_at_the_temporary_name_is_not_followed,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_that_is_a_symbolic_link_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_writable_by_others_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_owned_by_another_user_is_refused, setup,
		                                teardown),
		cmocka_unit_test(fnv64_matches_the_reference_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
