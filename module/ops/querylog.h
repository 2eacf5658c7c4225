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

/*!
 * \file
 *
 * \brief The query log: a line per answer, as CoreDNS's log plugin writes it.
 *
 * Rules as CoreDNS's `log [NAMES...] [FORMAT] { class CLASSES... }` lines make them: a
 * name scope, a format of CoreDNS's placeholders ({remote}, {>id}, {type}, {rcode},
 * {duration}...) and the classes of answers written (success, denial, error; all by
 * default). An answer takes the first rule whose scope holds its name, and is written if
 * its class is one of that rule's. Every answer knotd or a module thread sends passes
 * here (the END hooks, the late answers), so the one log of a process sees them all.
 *
 * Writing is rate-limited (`rate` lines a second): past it lines are counted, not
 * written, and the count is written once the second is over. The log is process-wide:
 * the instance that publishes one last is the one in use (a reload's new instance).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>
#include <urcu/system.h>

#include "lib/log.h"

/*! \brief Rules of one log at most (CoreDNS's NAMES of every line together). */
#define K8S_QUERYLOG_RULES_MAX 64
/*! \brief Longest format (after {common} and {combined} are written out). */
#define K8S_QUERYLOG_FORMAT_MAX 1024
/*! \brief Longest line written; a longer one is cut there. */
#define K8S_QUERYLOG_LINE_MAX 2048
/*! \brief Lines a second at most (query-log-rate's range). */
#define K8S_QUERYLOG_RATE_MAX 1000000

/*! \brief CoreDNS's default format, {common}. */
#define K8S_QUERYLOG_COMMON "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} " \
	"{>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration}"
/*! \brief {combined}: {common} and the opcode. */
#define K8S_QUERYLOG_COMBINED K8S_QUERYLOG_COMMON " \"{>opcode}\""

typedef struct k8s_querylog k8s_querylog_t;

/*! \brief A new log writing through \a log, \a rate lines a second at most; NULL: no memory. */
k8s_querylog_t *k8s_querylog_new(unsigned rate, const k8s_log_t *log);

/*! \brief Frees a log that is not published (k8s_querylog_unpublish() first). */
void k8s_querylog_free(k8s_querylog_t *ql);

/*!
 * \brief Adds the rules of one CoreDNS log line: \a args are its words after `log`
 * (NAMES..., then a FORMAT if the last holds a `{`), \a classes the words after `class`
 * in its block (none: every class). As CoreDNS: no word is the root with the common
 * format; one word is a name.
 *
 * \return KNOT_EOK, or KNOT_EINVAL with the reason in \a msg (a name that is not one, an
 *         unknown class, too many rules, a format too long); KNOT_ENOMEM.
 */
int k8s_querylog_line(k8s_querylog_t *ql, const char *const *args, size_t arg_count,
                      const char *const *classes, size_t class_count, char *msg, size_t msglen);

/*! \brief An answer sent, to write. */
typedef struct {
	const uint8_t *query;            /*!< The client's query, as it came. */
	size_t query_size;
	const uint8_t *answer;           /*!< The answer, as sent. */
	size_t answer_size;
	const struct sockaddr_storage *remote;
	const struct sockaddr_storage *local;  /*!< The address asked, or NULL. */
	bool tcp;
	uint64_t duration_ns;            /*!< From the query's receipt to the answer. */
} k8s_querylog_entry_t;

/*!
 * \brief The line of \a e by the first rule of \a ql whose scope holds its name, into
 * \a out (NUL-terminated, cut at \a size); 0 if no rule writes it, else its length.
 * What k8s_querylog_answer() writes, less the rate.
 */
size_t k8s_querylog_format(const k8s_querylog_t *ql, const k8s_querylog_entry_t *e,
                           char *out, size_t size);

/*! \brief The published log, or NULL (written by k8s_querylog_publish(), under RCU). */
extern k8s_querylog_t *k8s_querylog_current;

/*! \brief True when a log is published: a check on every answer, one load. */
static inline bool k8s_querylog_on(void)
{
	return CMM_LOAD_SHARED(k8s_querylog_current) != NULL;
}

/*!
 * \brief Writes \a e through the published log, if any, within its rate (any thread, no
 * lock; under an RCU read-side section of its own).
 */
void k8s_querylog_answer(const k8s_querylog_entry_t *e);

/*! \brief Makes \a ql the process's log (the previous one stays held, unused). */
void k8s_querylog_publish(k8s_querylog_t *ql);

/*!
 * \brief Withdraws \a ql: the log published before it, if still held, is in use again;
 * waits for the readers (an RCU grace period), after which \a ql may be freed.
 */
void k8s_querylog_unpublish(k8s_querylog_t *ql);
