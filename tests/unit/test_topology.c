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
 * The topology tracker alone: Node changes pushed in (as the store pushes
 * them), the topology federation names use out, with its log lines.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "store/topology.h"

static k8s_table_t table;
static k8s_topology_tracker_t tracker;

/*! \brief The last line logged, and how many. */
static struct {
	unsigned count;
	char line[512];
} logged;

static void capture(void *ctx, int priority, const char *msg)
{
	(void)ctx;
	(void)priority;
	logged.count++;
	snprintf(logged.line, sizeof(logged.line), "%s", msg);
}

static const k8s_log_t log_capture = { capture, NULL };

/*! \brief A node as the decoder makes it (labels lowercase DNS names, or NULL). */
static k8s_node_t *node_new(const char *name, const char *zone, const char *region)
{
	k8s_node_t *node = calloc(1, sizeof(*node));
	assert_non_null(node);
	node->meta.kind = K8S_NODE;
	node->meta.ns = "";
	node->meta.name = strdup(name);
	node->zone = (zone != NULL) ? strdup(zone) : NULL;
	node->region = (region != NULL) ? strdup(region) : NULL;
	return node;
}

static void node_free(k8s_node_t *node)
{
	if (node != NULL) {
		free((char *)node->meta.name);
		free((char *)node->zone);
		free((char *)node->region);
		free(node);
	}
}

/*! \brief The nodes held, by name, as the store holds them (the tracker borrows them). */
#define HELD_MAX 8192
static k8s_node_t *held[HELD_MAX];
static size_t held_count;

static size_t held_find(const char *name)
{
	for (size_t i = 0; i < held_count; i++) {
		if (strcmp(held[i]->meta.name, name) == 0) {
			return i;
		}
	}
	return held_count;
}

/*! \brief Adds or replaces a node (zone NULL: without labels), as the store's upsert. */
static void put(const char *name, const char *zone, const char *region)
{
	k8s_node_t *node = node_new(name, zone, region);
	size_t i = held_find(name);
	k8s_node_t *old = (i < held_count) ? held[i] : NULL;
	if (old == NULL) {
		assert_true(held_count < HELD_MAX);
		held_count++;
	}
	held[i] = node;
	k8s_topology_tracker_update(&tracker, &log_capture, (old != NULL) ? &old->meta : NULL,
	                            &node->meta);
	node_free(old);
}

/*! \brief Deletes a node, as the store's remove (or a relist that no longer returns it). */
static void del(const char *name)
{
	size_t i = held_find(name);
	assert_true(i < held_count);
	k8s_node_t *old = held[i];
	held[i] = held[--held_count];
	k8s_topology_tracker_update(&tracker, &log_capture, &old->meta, NULL);
	node_free(old);
}

static void commit(void)
{
	k8s_topology_tracker_commit(&tracker, &table, &log_capture);
	k8s_table_commit(&table);
}

/*! \brief True if the table's topology is this zone and region (NULL, NULL: none). */
static bool topology_is(const char *zone, const char *region)
{
	const k8s_topology_t *have = k8s_table_topology(&table);
	if (zone == NULL) {
		return have == NULL;
	}
	k8s_topology_t *want = k8s_topology_new(zone, region);
	assert_non_null(want);
	bool equal = have != NULL && have->size == want->size &&
	             memcmp(have->labels, want->labels, want->size) == 0;
	free(want);
	return equal;
}

static int setup_named(const char *node_name)
{
	urcu_memb_register_thread();
	memset(&logged, 0, sizeof(logged));
	held_count = 0;
	assert_int_equal(k8s_table_init(&table), KNOT_EOK);
	assert_int_equal(k8s_topology_tracker_init(&tracker, node_name), KNOT_EOK);
	return 0;
}

static int setup(void **state)
{
	return setup_named(NULL);
}

static int setup_node_c(void **state)
{
	return setup_named("node-c");
}

static int teardown(void **state)
{
	// As the store: the tracker goes with the objects it borrows.
	k8s_topology_tracker_deinit(&tracker);
	for (size_t i = 0; i < held_count; i++) {
		node_free(held[i]);
	}
	held_count = 0;
	k8s_table_commit(&table);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	urcu_memb_unregister_thread();
	return 0;
}

static void the_first_node_by_name_with_both_labels_is_chosen(void **state)
{
	put("node-c", "zone-c", "region-1");
	put("node-a", NULL, NULL);
	put("node-b", "zone-b", "region-1");
	put("node-0", "zone-0", NULL);  // One label is none.
	assert_true(k8s_topology_tracker_dirty(&tracker));
	assert_true(topology_is(NULL, NULL));  // Published at the commit only.
	commit();
	assert_false(k8s_topology_tracker_dirty(&tracker));
	assert_true(topology_is("zone-b", "region-1"));
	assert_string_equal(logged.line, "federation topology is zone zone-b, region region-1 (node node-b)");

	// A node before it that gains both labels wins; one after it changes nothing.
	put("node-a", "zone-a", "region-2");
	commit();
	assert_true(topology_is("zone-a", "region-2"));
	unsigned before = logged.count;
	put("node-d", "zone-d", "region-1");
	commit();
	assert_true(topology_is("zone-a", "region-2"));
	assert_int_equal(logged.count, before);  // Logged on change only.
}

static void a_node_losing_a_label_moves_the_choice_to_the_next(void **state)
{
	put("node-b", "zone-b", "region-1");
	put("node-c", "zone-c", "region-1");
	put("node-d", "zone-d", "region-1");
	commit();
	assert_true(topology_is("zone-b", "region-1"));

	put("node-b", "zone-b", NULL);
	commit();
	assert_true(topology_is("zone-c", "region-1"));
	put("node-c", NULL, "region-1");
	commit();
	assert_true(topology_is("zone-d", "region-1"));

	// The labels come back: node-b again.
	put("node-b", "zone-b", "region-1");
	commit();
	assert_true(topology_is("zone-b", "region-1"));

	// The chosen node's labels change: so does the topology.
	put("node-b", "zone-x", "region-9");
	commit();
	assert_true(topology_is("zone-x", "region-9"));
}

static void a_deleted_node_moves_the_choice_to_the_next_then_to_none(void **state)
{
	put("node-b", "zone-b", "region-1");
	put("node-c", "zone-c", "region-1");
	put("node-a", NULL, NULL);
	commit();
	del("node-b");
	commit();
	assert_true(topology_is("zone-c", "region-1"));
	del("node-a");  // Without labels: no change.
	assert_false(k8s_topology_tracker_dirty(&tracker));
	del("node-c");
	commit();
	assert_true(topology_is(NULL, NULL));
	assert_string_equal(logged.line, "no federation topology (no node has zone and region labels)");
}

static void the_configured_node_counts_whatever_the_others_have(void **state)
{
	put("node-b", "zone-b", "region-1");  // Before it by name, both labels: ignored.
	commit();
	assert_true(topology_is(NULL, NULL));
	assert_int_equal(logged.count, 0);  // Nothing changed: nothing logged.

	put("node-c", "zone-c", "region-1");
	commit();
	assert_true(topology_is("zone-c", "region-1"));
	assert_string_equal(logged.line, "federation topology is zone zone-c, region region-1 (node node-c)");

	put("node-c", NULL, NULL);
	commit();
	assert_true(topology_is(NULL, NULL));
	assert_string_equal(logged.line, "no federation topology (node node-c has no zone and region labels)");

	put("node-c", "zone-c", "region-2");
	commit();
	del("node-c");
	commit();
	assert_true(topology_is(NULL, NULL));
	assert_string_equal(logged.line, "no federation topology (node node-c not found)");
}

/*! \brief The choice as the store's read-back made it: a scan of every node held. */
static const k8s_node_t *chosen_by_scan(void)
{
	const k8s_node_t *first = NULL;
	for (size_t i = 0; i < held_count; i++) {
		const k8s_node_t *node = held[i];
		if (node->zone != NULL && node->region != NULL &&
		    (first == NULL || strcmp(node->meta.name, first->meta.name) < 0)) {
			first = node;
		}
	}
	return first;
}

/*! \brief Tiny deterministic generator (xorshift), so that a failure repeats. */
static uint32_t next_random(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

static void the_choice_is_the_scans_through_5000_nodes_in_any_order(void **state)
{
	uint32_t seed = 2026;
	char name[32], zone[32];
	for (unsigned step = 0; step < 20000; step++) {
		unsigned id = next_random(&seed) % 5000;
		snprintf(name, sizeof(name), "node-%04u", id);
		snprintf(zone, sizeof(zone), "zone-%04u", id);
		unsigned what = next_random(&seed) % 8;
		bool present = held_find(name) < held_count;
		if (what == 0 && present) {
			del(name);
		} else if (what == 1) {
			put(name, zone, NULL);
		} else {
			put(name, zone, (what % 2 == 0) ? "region-1" : "region-2");
		}
		if (step % 97 == 0 || step >= 19900) {
			commit();
			const k8s_node_t *want = chosen_by_scan();
			if (want == NULL) {
				assert_true(topology_is(NULL, NULL));
			} else if (!topology_is(want->zone, want->region)) {
				fail_msg("step %u: chose %s, the scan %s", step, logged.line,
				         want->meta.name);
			}
		}
	}
	// Then all go, in the order the store holds them.
	while (held_count > 0) {
		del(held[held_count / 2]->meta.name);
		if (held_count % 251 == 0) {
			commit();
			const k8s_node_t *want = chosen_by_scan();
			assert_true(want == NULL ? topology_is(NULL, NULL)
			                         : topology_is(want->zone, want->region));
		}
	}
	commit();
	assert_true(topology_is(NULL, NULL));
	assert_int_equal(tracker.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_first_node_by_name_with_both_labels_is_chosen, setup, teardown),
		cmocka_unit_test_setup_teardown(a_node_losing_a_label_moves_the_choice_to_the_next, setup, teardown),
		cmocka_unit_test_setup_teardown(a_deleted_node_moves_the_choice_to_the_next_then_to_none, setup, teardown),
		cmocka_unit_test_setup_teardown(the_configured_node_counts_whatever_the_others_have, setup_node_c, teardown),
		cmocka_unit_test_setup_teardown(the_choice_is_the_scans_through_5000_nodes_in_any_order, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
