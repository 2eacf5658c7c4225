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
 * The query log (module/ops/querylog.c): a rule of any words and format, then the line of
 * any query and answer (a client's hostile query, an upstream's relayed answer), and the
 * kind of the answer (module/lib/dnsanswer.c) read from its wire.
 *
 * Input: four parts separated by 0xff bytes: the log line's words (separated by NUL; the
 * last may be a format), its classes (separated by NUL), the query's wire, the answer's.
 * What must hold: a rule is added or refused with a reason; a line is NUL-terminated,
 * within its buffer and as long as said, whatever the wires hold.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dnsanswer.h"
#include "ops/querylog.h"
#include "fz_check.h"

#define WORDS 8

/*! \brief Splits \a part at NUL bytes into \a words (copies in \a buf). */
static size_t words_of(const uint8_t *part, size_t len, char *buf, const char **words)
{
	memcpy(buf, part, len);
	buf[len] = '\0';
	size_t n = 0;
	for (size_t i = 0; i <= len && n < WORDS; ) {
		words[n++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	return (len == 0) ? 0 : n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part[4] = { data, NULL, NULL, NULL };
	size_t len[4] = { size, 0, 0, 0 };
	for (int i = 1; i < 4; i++) {
		const uint8_t *sep = memchr(part[i - 1], 0xff, len[i - 1]);
		if (sep == NULL) {
			return 0;
		}
		part[i] = sep + 1;
		len[i] = len[i - 1] - (part[i] - part[i - 1]);
		len[i - 1] = sep - part[i - 1];
	}
	if (len[0] > 4096 || len[1] > 256) {
		return 0;
	}
	char wbuf[4097], cbuf[257];
	const char *words[WORDS], *classes[WORDS];
	size_t wn = words_of(part[0], len[0], wbuf, words);
	size_t cn = words_of(part[1], len[1], cbuf, classes);

	k8s_querylog_t *ql = k8s_querylog_new(10, &(k8s_log_t){ 0 });
	if (ql == NULL) {
		return 0;
	}
	char msg[256] = "";
	int ret = k8s_querylog_line(ql, words, wn, classes, cn, msg, sizeof(msg));
	CHECK(ret == KNOT_EOK || ret == KNOT_ENOMEM || msg[0] != '\0');

	(void)k8s_response_class(k8s_response_type(part[3], len[3]));
	struct sockaddr_storage remote = { .ss_family = AF_INET6 };
	k8s_querylog_entry_t e = {
		.query = part[2], .query_size = len[2], .answer = part[3], .answer_size = len[3],
		.remote = &remote, .tcp = (size & 1), .duration_ns = size * 1234567ull,
	};
	for (size_t cap = 1; cap <= K8S_QUERYLOG_LINE_MAX; cap *= 8) {
		char *line = malloc(cap);
		if (line == NULL) {
			break;
		}
		size_t n = k8s_querylog_format(ql, &e, line, cap);
		CHECK(n < cap && strlen(line) == n);
		free(line);
	}
	k8s_querylog_free(ql);
	return 0;
}
