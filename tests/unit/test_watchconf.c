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
 * Watch settings (module/watch/watchconf.c): one table says what every field is, and
 * comparing, copying and freeing follow it, so two zones share a watcher exactly
 * when every setting is equal and a copy owns every string.
 *
 * Linked with --wrap for malloc, realloc and strdup: fail_at makes the n-th
 * allocation fail, to check that a copy that runs out of memory leaves nothing.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "api/kubeconfig.h"
#include "watch/watchconf.h"

static unsigned allocations, fail_at;

static bool fails(void)
{
	return fail_at > 0 && ++allocations == fail_at;
}

void *__real_malloc(size_t size);
void *__real_realloc(void *ptr, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_realloc(void *ptr, size_t size);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t size)
{
	return fails() ? NULL : __real_malloc(size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
	return fails() ? NULL : __real_realloc(ptr, size);
}

char *__wrap_strdup(const char *s)
{
	return fails() ? NULL : __real_strdup(s);
}

static const char *const NAMESPACES[] = { "shop", "kube-system" };

/*! \brief Settings with every field set, none to its zero value. */
static k8s_watcher_conf_t sample(void)
{
	return (k8s_watcher_conf_t) {
		.kubeconfig = "/etc/kubeconfig", .context = "prod", .sa_dir = "/sa",
		.namespaces = NAMESPACES, .namespace_count = 2, .labels = "app=web",
		.namespace_labels = "team=x", .cluster_id = "east", .node_name = "node-a",
		.endpoint_pod_names = true, .no_endpoints = true, .stall_s = 90,
		.absent_retry_s = 60, .watch_list = true, .snapshot = "/var/lib/knot/mod-k8s.snapshot",
		.snapshot_max_age_s = 3600,
	};
}

static void a_copy_is_equal_and_owns_its_strings(void **state)
{
	k8s_watcher_conf_t conf = sample(), copy;
	assert_int_equal(k8s_watcher_conf_copy(&copy, &conf), KNOT_EOK);
	assert_true(k8s_watcher_conf_equal(&copy, &conf));
	assert_ptr_not_equal(copy.kubeconfig, conf.kubeconfig);
	assert_ptr_not_equal(copy.namespaces, conf.namespaces);
	assert_ptr_not_equal(copy.snapshot, conf.snapshot);
	k8s_watcher_conf_free(&copy);
	assert_null(copy.kubeconfig);
	assert_int_equal(copy.namespace_count, 0);
}

static void every_field_takes_part_in_the_comparison(void **state)
{
	k8s_watcher_conf_t conf = sample();
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		k8s_watcher_conf_t other;
		assert_int_equal(k8s_watcher_conf_copy(&other, &conf), KNOT_EOK);
		switch (f->kind) {
		case K8S_WCONF_STR:
			assert_int_equal(k8s_watcher_conf_set_str(&other, f, "other"), KNOT_EOK);
			break;
		case K8S_WCONF_STRLIST:
			assert_int_equal(k8s_watcher_conf_add_str(&other, f, "other"), KNOT_EOK);
			break;
		case K8S_WCONF_BOOL:
			k8s_watcher_conf_set_bool(&other, f, false);
			break;
		case K8S_WCONF_UINT:
			k8s_watcher_conf_set_uint(&other, f, 1);
			break;
		default:
			fail();
		}
		assert_false(k8s_watcher_conf_equal(&other, &conf));
		k8s_watcher_conf_free(&other);
	}
}

static void unset_strings_compare_equal_only_to_unset(void **state)
{
	k8s_watcher_conf_t conf = sample(), other = conf;
	other.cluster_id = NULL;
	assert_false(k8s_watcher_conf_equal(&other, &conf));
	assert_false(k8s_watcher_conf_equal(&conf, &other));
	k8s_watcher_conf_t empty = { 0 }, empty2 = { 0 };
	assert_true(k8s_watcher_conf_equal(&empty, &empty2));
}

static void a_copy_of_no_service_account_dir_holds_the_default(void **state)
{
	k8s_watcher_conf_t conf = { 0 }, copy;
	assert_int_equal(k8s_watcher_conf_copy(&copy, &conf), KNOT_EOK);
	assert_string_equal(copy.sa_dir, K8S_SA_DIR_DEFAULT);
	assert_null(copy.kubeconfig);
	assert_null(copy.namespaces);
	k8s_watcher_conf_free(&copy);
}

/*! A field without a row would be neither compared nor copied: the rows leave only padding
 * (a missing pointer or count shows; a bool or an unsigned may hide in padding, as an
 * unsigned after snapshot_max_age_s does: ARCHITECTURE.md, "How to add an option"). */
static void the_table_describes_every_field(void **state)
{
	bool covered[sizeof(k8s_watcher_conf_t)] = { false };
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		size_t size = (f->kind == K8S_WCONF_BOOL) ? sizeof(bool) :
		              (f->kind == K8S_WCONF_UINT) ? sizeof(unsigned) : sizeof(void *);
		for (size_t i = f->offset; i < f->offset + size; i++) {
			assert_false(covered[i]);
			covered[i] = true;
		}
		if (f->kind == K8S_WCONF_STRLIST) {
			for (size_t i = f->count_offset; i < f->count_offset + sizeof(size_t); i++) {
				assert_false(covered[i]);
				covered[i] = true;
			}
		}
	}
	// Padding is shorter than the alignment of what follows it (at most a pointer's).
	size_t gap = 0;
	for (size_t i = 0; i < sizeof(covered); i++) {
		gap = covered[i] ? 0 : gap + 1;
		assert_true(gap < _Alignof(void *));
	}
}

static void each_api_server_gets_its_own_snapshot_file_in_the_storage(void **state)
{
	// A Federated-DNS's member watchers differ by kubeconfig and context only.
	k8s_watcher_conf_t a = { .kubeconfig = "/etc/knot/foo.kubeconfig", .labels = "x=y" };
	k8s_watcher_conf_t b = { .kubeconfig = "/etc/knot/bar.kubeconfig", .labels = "x=y" };
	k8s_watcher_conf_t c = { .kubeconfig = "/etc/knot/foo.kubeconfig", .context = "admin" };
	k8s_watcher_conf_t a2 = { .kubeconfig = "/etc/knot/foo.kubeconfig", .labels = "z=w" };
	const char *dir = "/var/lib/knot/ignored-after-the-length";
	assert_int_equal(k8s_watcher_conf_set_snapshot(&a, dir, 13), KNOT_EOK);
	assert_int_equal(k8s_watcher_conf_set_snapshot(&b, dir, 13), KNOT_EOK);
	assert_int_equal(k8s_watcher_conf_set_snapshot(&c, dir, 13), KNOT_EOK);
	assert_int_equal(k8s_watcher_conf_set_snapshot(&a2, dir, 13), KNOT_EOK);
	assert_int_equal(strlen(a.snapshot), strlen("/var/lib/knot/mod-k8s/0123456789abcdef.snapshot"));
	assert_memory_equal(a.snapshot, "/var/lib/knot/mod-k8s/", 22);
	assert_string_not_equal(a.snapshot, b.snapshot);
	assert_string_not_equal(a.snapshot, c.snapshot);
	// Settings that are no API server's (labels) do not name the file: the fingerprint tells them.
	assert_string_equal(a.snapshot, a2.snapshot);
	// The storage it is in, as a Federated-DNS's members are given it (k8s_fed.c).
	assert_int_equal(k8s_watcher_conf_snapshot_storage(a.snapshot), 13);
	// Set again (a copy of other settings): replaced, not leaked.
	assert_int_equal(k8s_watcher_conf_set_snapshot(&a, "/srv", 4), KNOT_EOK);
	assert_memory_equal(a.snapshot, "/srv/mod-k8s/", 13);
	assert_int_equal(k8s_watcher_conf_snapshot_storage(a.snapshot), 4);
	assert_int_equal(k8s_watcher_conf_snapshot_storage("x.snapshot"), 0);
	assert_int_equal(k8s_watcher_conf_snapshot_storage("/x.snapshot"), 0);
	char longdir[5000];
	memset(longdir, 'd', sizeof(longdir));
	assert_int_equal(k8s_watcher_conf_set_snapshot(&b, longdir, sizeof(longdir)), KNOT_ERANGE);
	assert_int_equal(k8s_watcher_conf_set_snapshot(&b, longdir, 4096 - 20), KNOT_ERANGE);
	assert_memory_equal(b.snapshot, "/var/lib/knot/mod-k8s/", 22);
	free((char *)a.snapshot);
	free((char *)b.snapshot);
	free((char *)c.snapshot);
	free((char *)a2.snapshot);
}

static void a_copy_that_runs_out_of_memory_leaves_nothing(void **state)
{
	k8s_watcher_conf_t conf = sample();
	// Each string, the list and each name in it: every one may fail.
	for (fail_at = 1; ; fail_at++) {
		allocations = 0;
		k8s_watcher_conf_t copy;
		int ret = k8s_watcher_conf_copy(&copy, &conf);
		if (ret == KNOT_EOK) {
			assert_true(k8s_watcher_conf_equal(&copy, &conf));
			k8s_watcher_conf_free(&copy);
			break;
		}
		assert_int_equal(ret, KNOT_ENOMEM);
		k8s_watcher_conf_t empty = { 0 };
		assert_memory_equal(&copy, &empty, sizeof(copy));
	}
	assert_true(fail_at > 10);
	fail_at = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_copy_is_equal_and_owns_its_strings),
		cmocka_unit_test(every_field_takes_part_in_the_comparison),
		cmocka_unit_test(unset_strings_compare_equal_only_to_unset),
		cmocka_unit_test(a_copy_of_no_service_account_dir_holds_the_default),
		cmocka_unit_test(the_table_describes_every_field),
		cmocka_unit_test(a_copy_that_runs_out_of_memory_leaves_nothing),
		cmocka_unit_test(each_api_server_gets_its_own_snapshot_file_in_the_storage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
