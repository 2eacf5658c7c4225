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
 * The query log (querylog.h): CoreDNS's log plugin's rules and formats (its replacer's
 * parse, placeholder for placeholder), the answer read from the wire, the rate, and the
 * log the process publishes.
 */

#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-memb.h>

#include "lib/dnsanswer.h"
#include "ops/dnsmetrics.h"
#include "ops/querylog.h"
#include "lib/tsan_rcu.h"

/* CoreDNS's placeholders (plugin/pkg/replacer); anything else in braces is text. */
enum {
	P_TYPE, P_NAME, P_CLASS, P_PROTO, P_SIZE, P_REMOTE, P_PORT, P_LOCAL, P_ID, P_OPCODE,
	P_DO, P_BUFSIZE, P_RCODE, P_RSIZE, P_DURATION, P_RFLAGS, P_COUNT,
	P_METADATA = P_COUNT,  // {/label}: mod-k8s has no metadata, always "-".
	P_TEXT,
};

static const char *const placeholders[P_COUNT] = {
	"{type}", "{name}", "{class}", "{proto}", "{size}", "{remote}", "{port}", "{local}",
	"{>id}", "{>opcode}", "{>do}", "{>bufsize}", "{rcode}", "{rsize}", "{duration}",
	"{>rflags}",
};

typedef struct {
	uint16_t kind;    /*!< P_* */
	uint16_t len;     /*!< P_TEXT: the text's length in the rule's format. */
	uint16_t off;     /*!< P_TEXT: where it starts. */
} node_t;

typedef struct {
	knot_dname_t scope[KNOT_DNAME_MAXLEN];  /*!< Lowercase. */
	unsigned classes;                       /*!< K8S_RESPONSE_CLASS_* bits. */
	char *format;
	node_t *nodes;
	size_t node_count;
} rule_t;

struct k8s_querylog {
	rule_t rules[K8S_QUERYLOG_RULES_MAX];
	size_t rule_count;
	unsigned rate;
	k8s_log_t log;
	struct k8s_querylog *under;   /*!< Published before this one (the registry's order). */
	bool held;
	atomic_uint_fast64_t second;  /*!< The rate's current second (CLOCK_MONOTONIC). */
	atomic_uint_fast64_t written; /*!< Lines written in it. */
	atomic_uint_fast64_t dropped; /*!< Lines past the rate, not yet told. */
};

k8s_querylog_t *k8s_querylog_current;

/* The logs held, the latest on top: one is in use, the others wait for a reload's end. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_querylog_t *registry;

k8s_querylog_t *k8s_querylog_new(unsigned rate, const k8s_log_t *log)
{
	k8s_querylog_t *ql = calloc(1, sizeof(*ql));
	if (ql == NULL) {
		return NULL;
	}
	ql->rate = (rate == 0) ? 1 : (rate > K8S_QUERYLOG_RATE_MAX ? K8S_QUERYLOG_RATE_MAX : rate);
	ql->log = *log;
	return ql;
}

void k8s_querylog_free(k8s_querylog_t *ql)
{
	if (ql == NULL) {
		return;
	}
	for (size_t i = 0; i < ql->rule_count; i++) {
		free(ql->rules[i].format);
		free(ql->rules[i].nodes);
	}
	free(ql);
}

/*! \brief Replaces every \a from in \a text by \a to; false if it outgrows \a size. */
static bool replace_all(char *text, size_t size, const char *from, const char *to)
{
	size_t from_len = strlen(from), to_len = strlen(to);
	char *pos = text;
	while ((pos = strstr(pos, from)) != NULL) {
		size_t len = strlen(text);
		if (len - from_len + to_len >= size) {
			return false;
		}
		memmove(pos + to_len, pos + from_len, strlen(pos + from_len) + 1);
		memcpy(pos, to, to_len);
		pos += to_len;
	}
	return true;
}

static bool node_add(rule_t *r, size_t cap, uint16_t kind, size_t off, size_t len)
{
	if (r->node_count >= cap) {
		return false;
	}
	r->nodes[r->node_count++] = (node_t){ .kind = kind, .off = off, .len = len };
	return true;
}

/*!
 * \brief Compiles the rule's format as CoreDNS's replacer parses one: at each `}`, the
 * text from the last `{` before it is a placeholder if it is one, {/...} metadata,
 * else text up to the `}`.
 */
static int format_compile(rule_t *r)
{
	const char *s = r->format;
	size_t cap = 2 * strlen(s) + 1;
	r->nodes = calloc(cap, sizeof(node_t));
	if (r->nodes == NULL) {
		return KNOT_ENOMEM;
	}
	size_t base = 0, total = strlen(s);
	while (base < total) {
		const char *close = strchr(s + base, '}');
		if (close == NULL) {
			break;
		}
		size_t j = close - s;
		ssize_t i = -1;
		for (size_t k = j; k > base; k--) {
			if (s[k - 1] == '{') {
				i = k - 1;
				break;
			}
		}
		if (i < 0) {
			(void)node_add(r, cap, P_TEXT, base, j + 1 - base);
			base = j + 1;
			continue;
		}
		uint16_t kind = P_TEXT;
		size_t vlen = j + 1 - i;
		for (unsigned p = 0; p < P_COUNT; p++) {
			if (strlen(placeholders[p]) == vlen && memcmp(s + i, placeholders[p], vlen) == 0) {
				kind = p;
			}
		}
		if (kind == P_TEXT && vlen >= 3 && s[i + 1] == '/') {
			kind = P_METADATA;
		}
		if (kind == P_TEXT) {
			(void)node_add(r, cap, P_TEXT, base, j + 1 - base);
		} else {
			if ((size_t)i > base) {
				(void)node_add(r, cap, P_TEXT, base, i - base);
			}
			(void)node_add(r, cap, kind, 0, 0);
		}
		base = j + 1;
	}
	if (base < total) {
		(void)node_add(r, cap, P_TEXT, base, total - base);
	}
	return KNOT_EOK;
}

static unsigned class_of(const char *word)
{
	static const struct {
		const char *name;
		unsigned bits;
	} classes[] = {
		{ "all", K8S_RESPONSE_CLASS_ALL },
		{ "success", K8S_RESPONSE_CLASS_SUCCESS },
		{ "denial", K8S_RESPONSE_CLASS_DENIAL },
		{ "error", K8S_RESPONSE_CLASS_ERROR },
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcmp(word, classes[i].name) == 0) {
			return classes[i].bits;
		}
	}
	return 0;
}

int k8s_querylog_line(k8s_querylog_t *ql, const char *const *args, size_t arg_count,
                      const char *const *classes, size_t class_count, char *msg, size_t msglen)
{
	unsigned bits = 0;
	for (size_t i = 0; i < class_count; i++) {
		unsigned c = class_of(classes[i]);
		if (c == 0) {
			snprintf(msg, msglen, "'%s' is no class (all, success, denial, error)", classes[i]);
			return KNOT_EINVAL;
		}
		bits |= c;
	}
	bits = (bits == 0) ? K8S_RESPONSE_CLASS_ALL : bits;

	// As CoreDNS: no word, the root; one, a name; more, names and a format if the last
	// holds a brace.
	char format[K8S_QUERYLOG_FORMAT_MAX] = K8S_QUERYLOG_COMMON;
	size_t names = arg_count;
	if (arg_count > 1 && strchr(args[arg_count - 1], '{') != NULL) {
		names--;
		if (strlen(args[names]) >= sizeof(format)) {
			snprintf(msg, msglen, "format longer than %d characters", K8S_QUERYLOG_FORMAT_MAX - 1);
			return KNOT_EINVAL;
		}
		strcpy(format, args[names]);
		if (!replace_all(format, sizeof(format), "{common}", K8S_QUERYLOG_COMMON) ||
		    !replace_all(format, sizeof(format), "{combined}", K8S_QUERYLOG_COMBINED)) {
			snprintf(msg, msglen, "format longer than %d characters", K8S_QUERYLOG_FORMAT_MAX - 1);
			return KNOT_EINVAL;
		}
	}
	const char *root = ".";
	const char *const *scopes = (names > 0) ? args : &root;
	size_t scope_count = (names > 0) ? names : 1;
	if (ql->rule_count + scope_count > K8S_QUERYLOG_RULES_MAX) {
		snprintf(msg, msglen, "more than %d names in all", K8S_QUERYLOG_RULES_MAX);
		return KNOT_EINVAL;
	}
	for (size_t i = 0; i < scope_count; i++) {
		rule_t *r = &ql->rules[ql->rule_count];
		if (knot_dname_from_str(r->scope, scopes[i], sizeof(r->scope)) == NULL) {
			snprintf(msg, msglen, "'%s' is no domain name", scopes[i]);
			return KNOT_EINVAL;
		}
		knot_dname_to_lower(r->scope);
		r->classes = bits;
		r->format = strdup(format);
		if (r->format == NULL || format_compile(r) != KNOT_EOK) {
			free(r->format);
			free(r->nodes);
			memset(r, 0, sizeof(*r));
			snprintf(msg, msglen, "out of memory");
			return KNOT_ENOMEM;
		}
		ql->rule_count++;
	}
	return KNOT_EOK;
}

/* The answer and its query, from the wire. */

typedef struct {
	const uint8_t *qname;   /*!< In the query's wire, checked. */
	uint16_t qtype, qclass;
	bool do_bit;
	uint16_t payload;       /*!< The EDNS payload asked, 0 without OPT. */
} question_t;

/*! \brief The end of the record at \a pos, or NULL; its type and class, its TTL field. */
static const uint8_t *rr_next(const uint8_t *pos, const uint8_t *end, uint16_t *type,
                              uint16_t *rclass, uint32_t *ttl)
{
	int size = knot_dname_wire_check(pos, end, NULL);
	// A query's later names may point back (compression): skip a pointer as a name.
	if (size <= 0 && end - pos >= 2 && (pos[0] & 0xc0) == 0xc0) {
		size = 2;
	}
	if (size <= 0 || end - pos - size < 10) {
		return NULL;
	}
	pos += size;
	*type = knot_wire_read_u16(pos);
	*rclass = knot_wire_read_u16(pos + 2);
	*ttl = knot_wire_read_u32(pos + 4);
	uint16_t rdlen = knot_wire_read_u16(pos + 8);
	pos += 10;
	return (end - pos >= rdlen) ? pos + rdlen : NULL;
}

static bool question_read(const uint8_t *wire, size_t len, question_t *q)
{
	memset(q, 0, sizeof(*q));
	if (len < KNOT_WIRE_HEADER_SIZE || knot_wire_get_qdcount(wire) != 1) {
		return false;
	}
	const uint8_t *pos = wire + KNOT_WIRE_HEADER_SIZE, *end = wire + len;
	int size = knot_dname_wire_check(pos, end, NULL);
	if (size <= 0 || end - pos - size < 4) {
		return false;
	}
	q->qname = pos;
	q->qtype = knot_wire_read_u16(pos + size);
	q->qclass = knot_wire_read_u16(pos + size + 2);
	pos += size + 4;
	unsigned skip = knot_wire_get_ancount(wire) + knot_wire_get_nscount(wire);
	unsigned extra = knot_wire_get_arcount(wire);
	for (unsigned i = 0; pos != NULL && i < skip + extra; i++) {
		uint16_t type, rclass;
		uint32_t ttl;
		pos = rr_next(pos, end, &type, &rclass, &ttl);
		if (pos != NULL && i >= skip && type == KNOT_RRTYPE_OPT) {
			q->payload = rclass;
			q->do_bit = (ttl & 0x8000) != 0;
		}
	}
	return true;
}

/* The line. */

typedef struct {
	char *buf;
	size_t size;
	size_t len;
} out_t;

static void put(out_t *o, const char *text, size_t len)
{
	if (o->len + 1 >= o->size) {
		return;
	}
	size_t room = o->size - 1 - o->len;
	len = (len < room) ? len : room;
	memcpy(o->buf + o->len, text, len);
	o->len += len;
	o->buf[o->len] = '\0';
}

static void puts_(out_t *o, const char *text)
{
	put(o, text, strlen(text));
}

__attribute__((format(printf, 2, 3)))
static void putf(out_t *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0) {
		put(o, tmp, ((size_t)n < sizeof(tmp)) ? (size_t)n : sizeof(tmp) - 1);
	}
}

/*! \brief An address as CoreDNS writes one (RFC 3986: IPv6 in brackets), or "-". */
static void put_addr(out_t *o, const struct sockaddr_storage *ss)
{
	char text[INET6_ADDRSTRLEN];
	if (ss != NULL && ss->ss_family == AF_INET &&
	    inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, text, sizeof(text))) {
		puts_(o, text);
	} else if (ss != NULL && ss->ss_family == AF_INET6 &&
	           inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, text,
	                     sizeof(text))) {
		putf(o, "[%s]", text);
	} else {
		puts_(o, "-");
	}
}

static unsigned port_of(const struct sockaddr_storage *ss)
{
	if (ss != NULL && ss->ss_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	} else if (ss != NULL && ss->ss_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	}
	return 0;
}

/*! \brief The answer's header flags as CoreDNS's {>rflags}: qr,aa,tc,rd,ra,z,ad,cd. */
static void put_flags(out_t *o, const uint8_t *wire)
{
	const struct {
		bool on;
		const char *name;
	} flags[] = {
		{ knot_wire_get_qr(wire), "qr" }, { knot_wire_get_aa(wire), "aa" },
		{ knot_wire_get_tc(wire), "tc" }, { knot_wire_get_rd(wire), "rd" },
		{ knot_wire_get_ra(wire), "ra" }, { knot_wire_get_z(wire), "z" },
		{ knot_wire_get_ad(wire), "ad" }, { knot_wire_get_cd(wire), "cd" },
	};
	bool first = true;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (flags[i].on) {
			puts_(o, first ? "" : ",");
			puts_(o, flags[i].name);
			first = false;
		}
	}
}

/*!
 * \brief Seconds as Go's strconv 'f' with the shortest precision writes a duration of
 * whole nanoseconds: the fraction's trailing zeros left out ("0.000123s", "2s").
 */
static void put_duration(out_t *o, uint64_t ns)
{
	char frac[16];
	snprintf(frac, sizeof(frac), "%09u", (unsigned)(ns % 1000000000));
	size_t len = strlen(frac);
	while (len > 0 && frac[len - 1] == '0') {
		frac[--len] = '\0';
	}
	putf(o, "%llu", (unsigned long long)(ns / 1000000000));
	if (len > 0) {
		puts_(o, ".");
		puts_(o, frac);
	}
	puts_(o, "s");
}

static void put_value(out_t *o, unsigned kind, const k8s_querylog_entry_t *e,
                      const question_t *q, bool have_q)
{
	char text[KNOT_DNAME_TXT_MAXLEN + 1];
	const uint8_t *a = e->answer;
	bool have_a = (a != NULL && e->answer_size >= KNOT_WIRE_HEADER_SIZE);
	switch (kind) {
	case P_RCODE:
		if (!have_a) {
			puts_(o, "-");
		} else {
			puts_(o, k8s_rcode_name(knot_wire_get_rcode(a), text, sizeof(text)));
		}
		return;
	case P_RSIZE:
		putf(o, "%zu", e->answer_size);
		return;
	case P_DURATION:
		put_duration(o, e->duration_ns);
		return;
	case P_RFLAGS:
		if (have_a) {
			put_flags(o, a);
		} else {
			puts_(o, "-");
		}
		return;
	case P_METADATA:
		puts_(o, "-");
		return;
	}
	if (!have_q) {
		puts_(o, "-");
		return;
	}
	switch (kind) {
	case P_TYPE:
		if (knot_rrtype_to_string(q->qtype, text, sizeof(text)) < 0) {
			snprintf(text, sizeof(text), "TYPE%u", q->qtype);
		}
		puts_(o, text);
		break;
	case P_NAME: {
		knot_dname_storage_t lower;
		memcpy(lower, q->qname, knot_dname_size(q->qname));
		knot_dname_to_lower(lower);
		puts_(o, knot_dname_to_str(text, lower, sizeof(text)) ? text : "-");
		break;
	}
	case P_CLASS:
		if (knot_rrclass_to_string(q->qclass, text, sizeof(text)) < 0) {
			snprintf(text, sizeof(text), "CLASS%u", q->qclass);
		}
		puts_(o, text);
		break;
	case P_PROTO:
		puts_(o, e->tcp ? "tcp" : "udp");
		break;
	case P_SIZE:
		putf(o, "%zu", e->query_size);
		break;
	case P_REMOTE:
		put_addr(o, e->remote);
		break;
	case P_PORT:
		putf(o, "%u", port_of(e->remote));
		break;
	case P_LOCAL:
		put_addr(o, e->local);
		break;
	case P_ID:
		putf(o, "%u", knot_wire_get_id(e->query));
		break;
	case P_OPCODE:
		putf(o, "%u", knot_wire_get_opcode(e->query));
		break;
	case P_DO:
		puts_(o, q->do_bit ? "true" : "false");
		break;
	case P_BUFSIZE:
		// CoreDNS's request size: 65535 over TCP, else the payload asked, 512 at least.
		putf(o, "%u", e->tcp ? 65535u : (q->payload < 512 ? 512u : q->payload));
		break;
	default:
		puts_(o, "-");
	}
}

/*! \brief The first rule whose scope holds the query's name (the root's for no name). */
static const rule_t *rule_of(const k8s_querylog_t *ql, const question_t *q, bool have_q)
{
	knot_dname_storage_t lower = "";
	if (have_q) {
		memcpy(lower, q->qname, knot_dname_size(q->qname));
		knot_dname_to_lower(lower);
	}
	for (size_t i = 0; i < ql->rule_count; i++) {
		if (knot_dname_in_bailiwick(lower, ql->rules[i].scope) >= 0) {
			return &ql->rules[i];
		}
	}
	return NULL;
}

/*! \brief The rule that writes \a e's line (its question read into \a q), or NULL. */
static const rule_t *line_rule(const k8s_querylog_t *ql, const k8s_querylog_entry_t *e,
                               question_t *q, bool *have_q)
{
	*have_q = (e->query != NULL) && question_read(e->query, e->query_size, q);
	const rule_t *r = rule_of(ql, q, *have_q);
	if (r == NULL) {
		return NULL;
	}
	k8s_response_t type = (e->answer != NULL) ? k8s_response_type(e->answer, e->answer_size)
	                                           : K8S_RESPONSE_OTHER;
	return (r->classes & k8s_response_class(type)) != 0 ? r : NULL;
}

/*! \brief \a e's line by rule \a r into \a buf (\a size > 0); its length. */
static size_t line_put(const rule_t *r, const k8s_querylog_entry_t *e, const question_t *q,
                       bool have_q, char *buf, size_t size)
{
	buf[0] = '\0';
	out_t o = { .buf = buf, .size = size };
	for (size_t i = 0; i < r->node_count; i++) {
		const node_t *n = &r->nodes[i];
		if (n->kind == P_TEXT) {
			put(&o, r->format + n->off, n->len);
		} else {
			put_value(&o, n->kind, e, q, have_q);
		}
	}
	return o.len;
}

size_t k8s_querylog_format(const k8s_querylog_t *ql, const k8s_querylog_entry_t *e,
                           char *buf, size_t size)
{
	if (size == 0) {
		return 0;
	}
	buf[0] = '\0';
	question_t q;
	bool have_q;
	const rule_t *r = line_rule(ql, e, &q, &have_q);
	return (r != NULL) ? line_put(r, e, &q, have_q, buf, size) : 0;
}

/* The rate, and the process's log. */

static uint64_t now_second(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*! \brief Whether a line may go now; the count of the second before told once it is over. */
static bool rate_allows(k8s_querylog_t *ql)
{
	uint64_t now = now_second();
	uint_fast64_t second = atomic_load_explicit(&ql->second, memory_order_relaxed);
	if (now != second &&
	    atomic_compare_exchange_strong_explicit(&ql->second, &second, now,
	                                            memory_order_relaxed, memory_order_relaxed)) {
		atomic_store_explicit(&ql->written, 0, memory_order_relaxed);
		uint64_t dropped = atomic_exchange_explicit(&ql->dropped, 0, memory_order_relaxed);
		if (dropped > 0) {
			k8s_logf(&ql->log, LOG_NOTICE, "query log, %llu lines left out in the last "
			         "seconds (query-log-rate %u a second)", (unsigned long long)dropped,
			         ql->rate);
		}
	}
	if (atomic_fetch_add_explicit(&ql->written, 1, memory_order_relaxed) < ql->rate) {
		return true;
	}
	atomic_fetch_add_explicit(&ql->dropped, 1, memory_order_relaxed);
	return false;
}

void k8s_querylog_answer(const k8s_querylog_entry_t *e)
{
	urcu_memb_read_lock();
	k8s_querylog_t *ql = rcu_dereference(k8s_querylog_current);
	question_t q;
	bool have_q;
	const rule_t *r = (ql != NULL) ? line_rule(ql, e, &q, &have_q) : NULL;
	// Past the rate a line is counted, not written: not formatted either.
	if (r != NULL && rate_allows(ql) && ql->log.fn != NULL) {
		char line[K8S_QUERYLOG_LINE_MAX];
		if (line_put(r, e, &q, have_q, line, sizeof(line)) > 0) {
			ql->log.fn(ql->log.ctx, LOG_INFO, line);
		}
	}
	urcu_memb_read_unlock();
}

void k8s_querylog_publish(k8s_querylog_t *ql)
{
	pthread_mutex_lock(&registry_lock);
	ql->under = registry;
	ql->held = true;
	registry = ql;
	rcu_assign_pointer(k8s_querylog_current, ql);
	pthread_mutex_unlock(&registry_lock);
}

void k8s_querylog_unpublish(k8s_querylog_t *ql)
{
	if (ql == NULL || !ql->held) {
		return;
	}
	pthread_mutex_lock(&registry_lock);
	k8s_querylog_t **p = &registry;
	while (*p != ql) {
		p = &(*p)->under;
	}
	*p = ql->under;
	ql->held = false;
	rcu_assign_pointer(k8s_querylog_current, registry);
	pthread_mutex_unlock(&registry_lock);
	urcu_memb_synchronize_rcu();
}
