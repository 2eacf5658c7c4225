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
 * The kept names' due jobs in their tenants' turns (module/forward/keeper_turn.c): a
 * flooding tenant's names queue behind each other, a newcomer's go at its turn, a name
 * asked for the first time before a refresh, a refresh before a retry.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "forward/keeper_priv.h"

#define JOBS 64

typedef struct {
	target_t *targets[JOBS];
	size_t count;
	job_t *started[JOBS];     /*!< In the order start() saw them. */
	size_t started_count;
	size_t flights;           /*!< What admit() may still give. */
	size_t per_tenant_max;    /*!< A tenant's part: more of its jobs are refused. */
	k8s_tenant_t tenants[JOBS];
	size_t held[JOBS];
} world_t;

static job_t *job(world_t *w, k8s_tenant_t tenant, turn_class_t turn)
{
	target_t *t = calloc(1, sizeof(*t) + 1);
	assert_non_null(t);
	t->tenant = tenant;
	t->jobs[0].target = t;
	t->jobs[0].turn = turn;
	w->targets[w->count++] = t;
	return &t->jobs[0];
}

static size_t *held_of(world_t *w, k8s_tenant_t tenant)
{
	for (size_t i = 0; i < JOBS; i++) {
		if (w->tenants[i] == tenant || w->tenants[i] == 0) {
			w->tenants[i] = tenant;
			return &w->held[i];
		}
	}
	fail();
	return NULL;
}

static bool admit(void *ctx, job_t *j)
{
	world_t *w = ctx;
	size_t *held = held_of(w, j->target->tenant);
	if (w->flights == 0 || (w->per_tenant_max > 0 && *held >= w->per_tenant_max)) {
		return false;
	}
	w->flights--;
	(*held)++;
	return true;
}

static void start(void *ctx, job_t *j)
{
	world_t *w = ctx;
	assert_null(j->queue);  // Out of its queue before it starts.
	w->started[w->started_count++] = j;
}

static void world_free(world_t *w, turns_t *turns)
{
	turns_deinit(turns);
	for (size_t i = 0; i < w->count; i++) {
		free(w->targets[i]);
	}
}

static void a_flooding_tenant_queues_behind_itself_and_a_newcomer_goes_at_its_turn(void **state)
{
	(void)state;
	world_t w = { .flights = 4 };
	turns_t turns;
	turns_init(&turns);
	job_t *flood[20], *mine;
	for (int i = 0; i < 20; i++) {
		flood[i] = job(&w, 1, TURN_FRESH);
		assert_true(turns_push(&turns, flood[i]));
	}
	mine = job(&w, 2, TURN_FRESH);
	assert_true(turns_push(&turns, mine));
	assert_int_equal(turns.count, 21);

	// Four flights: the flood's first, the newcomer's at its turn, then the flood's.
	turns_run(&turns, admit, start, &w);
	assert_int_equal(w.started_count, 4);
	assert_ptr_equal(w.started[0], flood[0]);
	assert_ptr_equal(w.started[1], mine);
	assert_ptr_equal(w.started[2], flood[1]);
	assert_ptr_equal(w.started[3], flood[2]);
	assert_int_equal(turns.count, 17);
	world_free(&w, &turns);
}

static void a_first_resolution_goes_before_a_refresh_and_a_refresh_before_a_retry(void **state)
{
	(void)state;
	world_t w = { .flights = 3 };
	turns_t turns;
	turns_init(&turns);
	job_t *retry = job(&w, 1, TURN_RETRY);
	job_t *refresh = job(&w, 2, TURN_REFRESH);
	job_t *fresh = job(&w, 3, TURN_FRESH);
	assert_true(turns_push(&turns, retry));
	assert_true(turns_push(&turns, refresh));
	assert_true(turns_push(&turns, fresh));
	turns_run(&turns, admit, start, &w);
	assert_int_equal(w.started_count, 3);
	assert_ptr_equal(w.started[0], fresh);
	assert_ptr_equal(w.started[1], refresh);
	assert_ptr_equal(w.started[2], retry);
	assert_int_equal(turns.count, 0);
	world_free(&w, &turns);
}

static void a_tenant_past_its_part_waits_while_others_still_start(void **state)
{
	(void)state;
	world_t w = { .flights = 10, .per_tenant_max = 2 };
	turns_t turns;
	turns_init(&turns);
	for (int i = 0; i < 5; i++) {
		assert_true(turns_push(&turns, job(&w, 1, TURN_FRESH)));
	}
	job_t *other = job(&w, 2, TURN_RETRY);
	assert_true(turns_push(&turns, other));
	turns_run(&turns, admit, start, &w);
	// Two of the tenant's, then the other's retry: a refused tenant holds no one back.
	assert_int_equal(w.started_count, 3);
	assert_ptr_equal(w.started[2], other);
	assert_int_equal(turns.count, 3);
	// Taken out by its owner (a name forgotten): its queue goes with its last job.
	for (size_t i = 0; i < w.count; i++) {
		turns_remove(&turns, &w.targets[i]->jobs[0]);
	}
	assert_int_equal(turns.count, 0);
	assert_int_equal(turns.queues.count, 0);
	world_free(&w, &turns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_flooding_tenant_queues_behind_itself_and_a_newcomer_goes_at_its_turn),
		cmocka_unit_test(a_first_resolution_goes_before_a_refresh_and_a_refresh_before_a_retry),
		cmocka_unit_test(a_tenant_past_its_part_waits_while_others_still_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
