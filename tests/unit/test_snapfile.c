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
 * and every kind of bad file is refused with its reason, never half-read; its directory is
 * made private and refused when anyone else may write in it; its key is made once, with
 * mode 0600, and refused when anyone else may read or write it; a snapshot not keyed with
 * the directory's key is refused.
 */

#include <pthread.h>
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
#define NAME     "0123456789abcdef.snapshot"
static const char PAYLOAD[] = "{\"services\":[]}";

static char storage[64];   /* The zone's storage: a private directory of the test's. */
static char dir_path[300];  /* The snapshots' directory in it. */
static char path[400];      /* The snapshot file. */
static char key_path[400];
static k8s_snapdir_t dir = { .fd = -1 };

static void write_default(void)
{
	k8s_snaphdr_t hdr = { .settings_hash = SETTINGS, .created_s = NOW - 10, .sources = 3,
	                      .counts = { 5, 0, 7 } };
	assert_int_equal(k8s_snapfile_write(&dir, NAME, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1),
	                 KNOT_EOK);
}

static int setup(void **state)
{
	snprintf(storage, sizeof(storage), "/tmp/test_snapfile.XXXXXX");
	if (mkdtemp(storage) == NULL) {
		return -1;
	}
	snprintf(dir_path, sizeof(dir_path), "%s/" K8S_SNAP_DIR, storage);
	snprintf(path, sizeof(path), "%s/" NAME, dir_path);
	snprintf(key_path, sizeof(key_path), "%s/" K8S_SNAP_KEY_FILE, dir_path);
	char why[256] = "";
	if (k8s_snapdir_open(&dir, dir_path, why, sizeof(why)) != KNOT_EOK) {
		print_error("the snapshots' directory: %s\n", why);
		return -1;
	}
	write_default();
	return 0;
}

static int teardown(void **state)
{
	k8s_snapdir_close(&dir);
	char command[600];
	snprintf(command, sizeof(command), "chmod -R u+rwx %s 2>/dev/null; rm -rf %s", storage,
	         storage);
	return system(command) == 0 ? 0 : -1;
}

/*! Reads the test file with default expectations; returns the result and the reason. */
static int read_back(uint64_t settings, int64_t max_age, char *why, size_t why_len)
{
	k8s_snaphdr_t hdr;
	k8s_snapmap_t map;
	int ret = k8s_snapfile_read(&dir, NAME, settings, NOW, max_age, &hdr, &map, why, why_len);
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
	char tmp[500];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_not_equal(access(tmp, F_OK), 0); // Renamed, not left aside.
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
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
	fseek(f, size - K8S_SNAP_MAC_LEN - 4, SEEK_SET);
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
	expect_refused(flip_payload_byte, SETTINGS, 0, "key check failed");
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
	assert_int_equal(k8s_snapfile_write(&dir, NAME, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1),
	                 KNOT_EOK);
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
	char tmp[500], victim[500];
	path_with(tmp, sizeof(tmp), ".tmp");
	path_with(victim, sizeof(victim), ".victim");
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	assert_int_equal(symlink(victim, tmp), 0);

	k8s_snaphdr_t hdr = { .settings_hash = SETTINGS, .created_s = NOW - 10, .sources = 3,
	                      .counts = { 5, 0, 7 } };
	int ret = k8s_snapfile_write(&dir, NAME, &hdr, PAYLOAD, sizeof(PAYLOAD) - 1);
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
	char real[500];
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

/* The directory and its key. */

static void read_key(const char *file, uint8_t key[K8S_SNAP_KEY_LEN])
{
	FILE *f = fopen(file, "rb");
	assert_non_null(f);
	assert_int_equal(fread(key, 1, K8S_SNAP_KEY_LEN + 1, f), K8S_SNAP_KEY_LEN);
	fclose(f);
}

static void the_directory_is_made_private_with_a_key_of_mode_0600(void **state)
{
	struct stat st;
	assert_int_equal(lstat(dir_path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(lstat(key_path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, K8S_SNAP_KEY_LEN);
	uint8_t key[K8S_SNAP_KEY_LEN];
	read_key(key_path, key);
	assert_memory_equal(key, dir.key, K8S_SNAP_KEY_LEN);
	// Opened again (a restart), the same key: the snapshot reads back.
	k8s_snapdir_close(&dir);
	char why[256];
	assert_int_equal(k8s_snapdir_open(&dir, dir_path, why, sizeof(why)), KNOT_EOK);
	assert_memory_equal(key, dir.key, K8S_SNAP_KEY_LEN);
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_EOK);
	// Made whatever the umask: exactly 0700 and 0600.
	char other[400];
	snprintf(other, sizeof(other), "%s/other", storage);
	mode_t old = umask(0);
	k8s_snapdir_t d;
	assert_int_equal(k8s_snapdir_open(&d, other, why, sizeof(why)), KNOT_EOK);
	umask(old);
	assert_int_equal(fstat(d.fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_memory_not_equal(d.key, dir.key, K8S_SNAP_KEY_LEN);  // A key per directory.
	k8s_snapdir_close(&d);
	assert_int_equal(d.fd, -1);
}

/*! Expects the directory refused with \a reason, and its key untouched. */
static void expect_dir_refused(const char *reason)
{
	k8s_snapdir_t d;
	char why[256] = "";
	assert_int_equal(k8s_snapdir_open(&d, dir_path, why, sizeof(why)), KNOT_EMALF);
	assert_int_equal(d.fd, -1);
	if (strstr(why, reason) == NULL) {
		fail_msg("refused for '%s', not '%s'", why, reason);
	}
}

static void a_directory_others_may_write_in_is_refused(void **state)
{
	static const mode_t modes[] = { 0770, 0730, 0707, 0777, 01777, 02770 };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(chmod(dir_path, modes[i]), 0);
		expect_dir_refused("writable by group or others");
		// Opened before the change: the check before each read and write sees it.
		char why[256] = "";
		assert_false(k8s_snapdir_owned(&dir, why, sizeof(why)));
		assert_non_null(strstr(why, "writable by group or others"));
	}
	// Readable by others is not what the check is for: their writes are.
	assert_int_equal(chmod(dir_path, 0755), 0);
	char why[256] = "";
	assert_true(k8s_snapdir_owned(&dir, why, sizeof(why)));
	k8s_snapdir_t d;
	assert_int_equal(k8s_snapdir_open(&d, dir_path, why, sizeof(why)), KNOT_EOK);
	k8s_snapdir_close(&d);
}

static void a_directory_of_another_user_is_refused(void **state)
{
	uid_t other = (geteuid() == 65534) ? 65533 : 65534;
	if (chown(dir_path, other, (gid_t)-1) != 0) {
		skip();  // Only root may give a directory away.
	}
	expect_dir_refused("owned by uid");
	char why[256] = "";
	assert_false(k8s_snapdir_owned(&dir, why, sizeof(why)));
}

static void a_directory_that_is_a_link_or_a_file_is_refused(void **state)
{
	char real[400];
	snprintf(real, sizeof(real), "%s/real", storage);
	assert_int_equal(rename(dir_path, real), 0);
	assert_int_equal(symlink(real, dir_path), 0);
	expect_dir_refused("a symbolic link");
	assert_int_equal(unlink(dir_path), 0);
	FILE *f = fopen(dir_path, "w");
	assert_non_null(f);
	fclose(f);
	expect_dir_refused("not a directory");
	assert_int_equal(unlink(dir_path), 0);
	assert_int_equal(rename(real, dir_path), 0);
}

static void a_key_anyone_else_may_read_or_write_is_refused(void **state)
{
	static const mode_t modes[] = { 0640, 0604, 0620, 0602, 0660, 0644 };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(chmod(key_path, modes[i]), 0);
		expect_dir_refused(K8S_SNAP_KEY_FILE " is readable or writable by group or others");
	}
	assert_int_equal(chmod(key_path, 0400), 0);  // Narrower than 0600 is fine.
	k8s_snapdir_t d;
	char why[256] = "";
	assert_int_equal(k8s_snapdir_open(&d, dir_path, why, sizeof(why)), KNOT_EOK);
	assert_memory_equal(d.key, dir.key, K8S_SNAP_KEY_LEN);
	k8s_snapdir_close(&d);
}

static void a_key_of_another_user_a_link_or_of_another_size_is_refused(void **state)
{
	uid_t other = (geteuid() == 65534) ? 65533 : 65534;
	if (chown(key_path, other, (gid_t)-1) == 0) {
		expect_dir_refused(K8S_SNAP_KEY_FILE " is owned by uid");
		assert_int_equal(chown(key_path, geteuid(), (gid_t)-1), 0);
	}
	char real[400];
	snprintf(real, sizeof(real), "%s/real.key", storage);
	assert_int_equal(rename(key_path, real), 0);
	assert_int_equal(symlink(real, key_path), 0);
	expect_dir_refused(K8S_SNAP_KEY_FILE " is a symbolic link");
	assert_int_equal(unlink(key_path), 0);
	assert_int_equal(rename(real, key_path), 0);
	assert_int_equal(truncate(key_path, 16), 0);
	expect_dir_refused(K8S_SNAP_KEY_FILE " is not 32 bytes");
}

static void a_snapshot_keyed_with_another_key_is_refused(void **state)
{
	// The key replaced (another knotd's file copied here, or the key lost and made again).
	assert_int_equal(unlink(key_path), 0);
	k8s_snapdir_close(&dir);
	char why[256] = "";
	assert_int_equal(k8s_snapdir_open(&dir, dir_path, why, sizeof(why)), KNOT_EOK);
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_EMALF);
	assert_non_null(strstr(why, "key check failed"));
	// Written again with it: read.
	write_default();
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_EOK);
}

static void a_snapshot_of_version_2_is_refused_by_its_version(void **state)
{
	// Version 2 ended with an FNV-1a checksum, unkeyed.
	unsigned char file[32 + 8 + 8];
	memcpy(file, MOD_K8S_SNAP_MAGIC, 8);
	k8s_snap_put_le(file + 8, 2, 4);
	k8s_snap_put_le(file + 12, 0, 4);
	k8s_snap_put_le(file + 16, SETTINGS, 8);
	k8s_snap_put_le(file + 24, NOW - 10, 8);
	k8s_snap_put_le(file + 32, 0, 8);
	k8s_snap_put_le(file + 40, k8s_fnv64(file, 40, K8S_FNV64_INIT), 8);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(file, 1, sizeof(file), f), sizeof(file));
	fclose(f);
	char why[128], reason[64];
	assert_int_equal(read_back(SETTINGS, 0, why, sizeof(why)), KNOT_EMALF);
	snprintf(reason, sizeof(reason), "version 2, expected %u", K8S_SNAP_VERSION);
	assert_string_equal(why, reason);
}

static void *open_concurrently(void *arg)
{
	k8s_snapdir_t *d = arg;
	char why[256] = "";
	return (void *)(intptr_t)k8s_snapdir_open(d, dir_path, why, sizeof(why));
}

static void watchers_that_open_a_new_directory_at_once_share_one_key(void **state)
{
	k8s_snapdir_close(&dir);
	char command[400];
	snprintf(command, sizeof(command), "rm -rf %s", dir_path);
	assert_int_equal(system(command), 0);
	enum { THREADS = 8 };
	pthread_t threads[THREADS];
	k8s_snapdir_t dirs[THREADS];
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_create(&threads[i], NULL, open_concurrently, &dirs[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		void *ret = NULL;
		pthread_join(threads[i], &ret);
		assert_int_equal((intptr_t)ret, KNOT_EOK);
	}
	uint8_t key[K8S_SNAP_KEY_LEN];
	read_key(key_path, key);
	for (int i = 0; i < THREADS; i++) {
		assert_memory_equal(dirs[i].key, key, K8S_SNAP_KEY_LEN);
		k8s_snapdir_close(&dirs[i]);
	}
	// No temporary key left behind.
	snprintf(command, sizeof(command), "test $(ls -A %s | wc -l) -eq 1", dir_path);
	assert_int_equal(system(command), 0);
	char why[256];
	assert_int_equal(k8s_snapdir_open(&dir, dir_path, why, sizeof(why)), KNOT_EOK);
}

static void the_mac_is_hmac_sha256(void **state)
{
	// Python's hmac.new(bytes(range(32)), b"The quick brown fox...", "sha256").
	static const uint8_t expected[K8S_SNAP_MAC_LEN] = {
		0xf8, 0x7a, 0xd2, 0x56, 0x15, 0x1f, 0xc7, 0xb4, 0xc5, 0xdf, 0xfa, 0x4a, 0xdb, 0x3e,
		0xbe, 0x91, 0x1a, 0x8e, 0xeb, 0x8a, 0x8e, 0xbd, 0xee, 0x3c, 0x2a, 0x4a, 0x8e, 0x5f,
		0x5e, 0xc0, 0x2c, 0x32,
	};
	uint8_t key[K8S_SNAP_KEY_LEN], mac[K8S_SNAP_MAC_LEN];
	for (int i = 0; i < K8S_SNAP_KEY_LEN; i++) {
		key[i] = (uint8_t)i;
	}
	static const char text[] = "The quick brown fox jumps over the lazy dog";
	assert_int_equal(k8s_snapfile_mac(key, text, sizeof(text) - 1, mac), KNOT_EOK);
	assert_memory_equal(mac, expected, sizeof(mac));
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
		cmocka_unit_test_setup_teardown(the_directory_is_made_private_with_a_key_of_mode_0600,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(a_directory_others_may_write_in_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_directory_of_another_user_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_directory_that_is_a_link_or_a_file_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_key_anyone_else_may_read_or_write_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_key_of_another_user_a_link_or_of_another_size_is_refused,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_keyed_with_another_key_is_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(a_snapshot_of_version_2_is_refused_by_its_version, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(watchers_that_open_a_new_directory_at_once_share_one_key,
		                                setup, teardown),
		cmocka_unit_test(the_mac_is_hmac_sha256),
		cmocka_unit_test(fnv64_matches_the_reference_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
