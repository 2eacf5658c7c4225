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

/* The contract of log.h: k8s_logf() formats, hands the sink one message, and is a no-op without a sink. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "lib/log.h"

typedef struct {
	int calls;
	int priority;
	char msg[1024];
} sink_t;

static void sink(void *ctx, int priority, const char *msg)
{
	sink_t *s = ctx;
	s->calls++;
	s->priority = priority;
	strncpy(s->msg, msg, sizeof(s->msg) - 1);
}

static void formats_the_message_and_passes_the_priority(void **state)
{
	sink_t s = { 0 };
	k8s_log_t log = { sink, &s };

	k8s_logf(&log, LOG_WARNING, "watch %s failed, retrying in %d s (%s)", "services", 3, "HTTP 410");

	assert_int_equal(s.calls, 1);
	assert_int_equal(s.priority, LOG_WARNING);
	assert_string_equal(s.msg, "watch services failed, retrying in 3 s (HTTP 410)");
}

static void does_nothing_without_a_log(void **state)
{
	k8s_logf(NULL, LOG_ERR, "lost %d", 1);

	k8s_log_t no_sink = { NULL, NULL };
	k8s_logf(&no_sink, LOG_ERR, "lost %d", 2);
}

static void cuts_a_long_message_to_511_characters(void **state)
{
	sink_t s = { 0 };
	k8s_log_t log = { sink, &s };
	char longer[700];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';

	k8s_logf(&log, LOG_INFO, "%s", longer);

	assert_int_equal(s.calls, 1);
	assert_int_equal(strlen(s.msg), 511);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats_the_message_and_passes_the_priority),
		cmocka_unit_test(does_nothing_without_a_log),
		cmocka_unit_test(cuts_a_long_message_to_511_characters),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
