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
 * The groups' own settings from forward-options and forward-cache (groupconf.h), read
 * as CoreDNS's forward and cache plugins read their lines (plugin/forward/setup.go,
 * plugin/cache/setup.go: the same defaults, the same refusals).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/groupconf.h"

/*! \brief Words of one value at most. */
#define WORDS_MAX 64
/*! \brief Longest value read. */
#define VALUE_MAX 1024

/*! \brief The words of \a text: `{`, `}` and `;` are words of their own. */
static size_t words_split(char *buf, char **words, size_t max)
{
	size_t n = 0;
	char *p = buf;
	while (*p != '\0') {
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			*p++ = '\0';
			continue;
		}
		if (n == max) {
			return max + 1;
		}
		if (*p == '{' || *p == '}' || *p == ';') {
			// Its own word: moved before the rest, which starts after it.
			static const char *marks[] = { "{", "}", ";" };
			words[n++] = (char *)marks[(*p == '{') ? 0 : (*p == '}') ? 1 : 2];
			*p++ = '\0';
			continue;
		}
		words[n++] = p;
		while (*p != '\0' && strchr(" \t\n{};", *p) == NULL) {
			p++;
		}
	}
	return n;
}

bool k8s_fwd_duration_ms(const char *text, uint64_t *ms)
{
	if (strcmp(text, "0") == 0) {
		*ms = 0;
		return true;
	}
	static const struct {
		const char *unit;
		double ms;
	} units[] = {
		{ "ns", 1e-6 }, { "us", 1e-3 }, { "\xc2\xb5s", 1e-3 }, { "ms", 1 }, { "s", 1e3 },
		{ "m", 60e3 }, { "h", 3600e3 },
	};
	double total = 0;
	const char *p = text;
	if (*p == '\0') {
		return false;
	}
	while (*p != '\0') {
		// Digits, an optional fraction: Go's form (no sign, exponent or hex).
		double value = 0, scale = 1;
		bool digits = false, dot = false;
		for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
			if (*p == '.') {
				dot = true;
				continue;
			}
			digits = true;
			if (dot) {
				scale /= 10;
				value += (*p - '0') * scale;
			} else {
				value = value * 10 + (*p - '0');
			}
			if (value > 1e12) {
				return false;
			}
		}
		if (!digits) {
			return false;
		}
		size_t best = 0, best_len = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t len = strlen(units[i].unit);
			if (strncmp(p, units[i].unit, len) == 0 && len > best_len) {
				best = i;
				best_len = len;
			}
		}
		if (best_len == 0) {
			return false;
		}
		total += value * units[best].ms;
		p += best_len;
		if (total > 86400e3) {
			return false;
		}
	}
	*ms = (uint64_t)total + ((double)(uint64_t)total < total);
	return true;
}

/*! \brief A whole number of \a text within [min, max]. */
static bool number(const char *text, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || errno != 0 || value < min || value > max) {
		return false;
	}
	*out = value;
	return true;
}

/*! \brief CoreDNS's capacity: 256 shards of CAPACITY / 256 entries, 4 each at least. */
static uint32_t capacity(long cap)
{
	long shard = cap / 256;
	return 256 * (uint32_t)(shard < 4 ? 4 : shard);
}

typedef struct {
	char **w;
	size_t n;
	char *msg;
	size_t msglen;
} parse_t;

__attribute__((format(printf, 2, 3)))
static int refuse(parse_t *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->msg, p->msglen, fmt, ap);
	va_end(ap);
	return KNOT_EINVAL;
}

/*! \brief One line of forward-options (words \a w[0..n)). */
static int options_line(parse_t *p, char **w, size_t n, k8s_fwd_settings_t *set)
{
	long value;
	uint64_t ms;
	if (strcmp(w[0], "policy") == 0 && n == 2) {
		if (strcmp(w[1], "random") == 0) {
			set->policy = K8S_FWD_RANDOM;
		} else if (strcmp(w[1], "round_robin") == 0) {
			set->policy = K8S_FWD_ROUND_ROBIN;
		} else if (strcmp(w[1], "sequential") == 0) {
			set->policy = K8S_FWD_SEQUENTIAL;
		} else {
			return refuse(p, "unknown policy '%s' (random, round_robin, sequential)", w[1]);
		}
	} else if (strcmp(w[0], "max_fails") == 0 && n == 2 && number(w[1], 0, 1000000, &value)) {
		set->max_fails = value;
	} else if (strcmp(w[0], "expire") == 0 && n == 2 && k8s_fwd_duration_ms(w[1], &ms)) {
		set->expire_ms = ms;
	} else if (strcmp(w[0], "force_tcp") == 0 && n == 1) {
		set->force_tcp = true;
	} else if (strcmp(w[0], "prefer_udp") == 0 && n == 1) {
		set->prefer_udp = true;
	} else {
		return refuse(p, "'%s': not policy, max_fails N, expire DURATION, force_tcp or "
		              "prefer_udp", w[0]);
	}
	if (set->force_tcp && set->prefer_udp) {
		return refuse(p, "force_tcp and prefer_udp together");  // CoreDNS refuses it too.
	}
	return KNOT_EOK;
}

/*! \brief success|denial CAPACITY [TTL [MINTTL]]: TTL more than 0, MINTTL 0 or more. */
static int cache_kind(parse_t *p, char **w, size_t n, uint32_t *cap, uint32_t *max,
                      uint32_t *min)
{
	long value;
	if (n < 2 || n > 4 || !number(w[1], 0, 1L << 30, &value)) {
		return refuse(p, "%s CAPACITY [TTL [MINTTL]]", w[0]);
	}
	*cap = capacity(value);
	if (n > 2) {
		if (!number(w[2], 1, 86400 * 365, &value)) {
			return refuse(p, "%s TTL: more than 0 seconds", w[0]);
		}
		*max = value;
	}
	if (n > 3) {
		if (!number(w[3], 0, 86400 * 365, &value)) {
			return refuse(p, "%s MINTTL: 0 seconds or more", w[0]);
		}
		*min = value;
	}
	return KNOT_EOK;
}

/*! \brief One line of forward-cache. */
static int cache_line(parse_t *p, char **w, size_t n, k8s_fwd_settings_t *set)
{
	uint64_t ms;
	if (strcmp(w[0], "success") == 0) {
		return cache_kind(p, w, n, &set->success_cap, &set->success_max, &set->success_min);
	} else if (strcmp(w[0], "denial") == 0) {
		return cache_kind(p, w, n, &set->denial_cap, &set->denial_max, &set->denial_min);
	} else if (strcmp(w[0], "servfail") == 0 && n == 2 && k8s_fwd_duration_ms(w[1], &ms)) {
		if (ms > 300000) {
			return refuse(p, "caching SERVFAIL responses over 5 minutes is not permitted");
		}
		set->servfail_ttl = (ms + 999) / 1000;
		return KNOT_EOK;
	} else if (strcmp(w[0], "disable") == 0 && n == 2 && strcmp(w[1], "success") == 0) {
		set->no_success = true;
		return KNOT_EOK;
	} else if (strcmp(w[0], "disable") == 0 && n == 2 && strcmp(w[1], "denial") == 0) {
		set->no_denial = true;
		return KNOT_EOK;
	}
	return refuse(p, "'%s': not success, denial, servfail DURATION or disable "
	              "success|denial", w[0]);
}

/*! \brief The settings of \a zone in the list, a new entry of CoreDNS's defaults if none. */
static k8s_fwd_zone_settings_t *zone_entry(parse_t *p, const knot_dname_t *zone,
                                           k8s_fwd_zone_settings_t *list, size_t *count)
{
	for (size_t i = 0; i < *count; i++) {
		const knot_dname_t *z = list[i].zone;
		if ((z == NULL) == (zone == NULL) && (z == NULL || knot_dname_is_equal(z, zone))) {
			return &list[i];
		}
	}
	if (*count >= K8S_FWD_SETTINGS_MAX) {
		refuse(p, "more than %d zones with settings", K8S_FWD_SETTINGS_MAX);
		return NULL;
	}
	k8s_fwd_zone_settings_t *e = &list[(*count)++];
	memset(e, 0, sizeof(*e));
	if (zone != NULL && (e->zone = knot_dname_copy(zone, NULL)) == NULL) {
		(*count)--;
		refuse(p, "out of memory");
		return NULL;
	}
	return e;
}

int k8s_fwd_groupconf_parse(const char *text, bool cache, k8s_fwd_zone_settings_t *list,
                            size_t *count, char *msg, size_t msglen)
{
	char buf[VALUE_MAX + 1];
	char *w[WORDS_MAX];
	parse_t p = { .w = w, .msg = msg, .msglen = msglen };
	if (strlen(text) > VALUE_MAX) {
		return refuse(&p, "longer than %d characters", VALUE_MAX);
	}
	strcpy(buf, text);
	size_t n = words_split(buf, w, WORDS_MAX);
	if (n > WORDS_MAX) {
		return refuse(&p, "more than %d words", WORDS_MAX);
	} else if (n == 0 || strcmp(w[0], "{") == 0 || strcmp(w[0], ";") == 0 ||
	           strcmp(w[0], "}") == 0) {
		return refuse(&p, "no zone first");
	}
	knot_dname_storage_t zone;
	bool root = (strcmp(w[0], ".") == 0);
	if (!root && knot_dname_from_str(zone, w[0], sizeof(zone)) == NULL) {
		return refuse(&p, "'%s' is no domain name", w[0]);
	}
	if (!root) {
		knot_dname_to_lower(zone);
	}

	// The settings as CoreDNS's defaults, then the value's words on them.
	k8s_fwd_settings_t set = { 0 };
	size_t i = 1;
	if (!cache) {
		set.coredns = true;
		set.policy = K8S_FWD_RANDOM;
		set.max_fails = K8S_FWD_COREDNS_MAX_FAILS;
		set.expire_ms = K8S_FWD_COREDNS_EXPIRE_MS;
	} else if (n == 2 && strcmp(w[1], "off") == 0) {
		set.cache = K8S_FWD_CACHE_OFF;
		i = 2;
	} else {
		set.cache = K8S_FWD_CACHE_COREDNS;
		set.success_max = K8S_FWD_COREDNS_SUCCESS_MAX;
		set.denial_max = K8S_FWD_COREDNS_DENIAL_MAX;
		set.success_min = set.denial_min = K8S_FWD_COREDNS_MIN;
		set.success_cap = set.denial_cap = K8S_FWD_COREDNS_CAP;
		set.servfail_ttl = K8S_FWD_COREDNS_SERVFAIL;
		long ttl;
		if (i < n && strcmp(w[i], "{") != 0) {
			if (!number(w[i], 1, 86400 * 365, &ttl)) {
				return refuse(&p, "cache TTL '%s': more than 0 seconds", w[i]);
			}
			set.success_max = set.denial_max = ttl;
			i++;
		}
	}
	if (i < n) {
		if (strcmp(w[i], "{") != 0 || strcmp(w[n - 1], "}") != 0) {
			return refuse(&p, "after the zone%s, a block { ... } only",
			              cache ? " and its TTL" : "");
		}
		for (size_t start = i + 1; start < n - 1; ) {
			size_t end = start;
			while (end < n - 1 && strcmp(w[end], ";") != 0) {
				if (strcmp(w[end], "{") == 0 || strcmp(w[end], "}") == 0) {
					return refuse(&p, "a block inside the block");
				}
				end++;
			}
			if (end > start) {
				int ret = cache ? cache_line(&p, w + start, end - start, &set)
				                : options_line(&p, w + start, end - start, &set);
				if (ret != KNOT_EOK) {
					return ret;
				}
			}
			start = end + 1;
		}
	}

	k8s_fwd_zone_settings_t *e = zone_entry(&p, root ? NULL : zone, list, count);
	if (e == NULL) {
		return KNOT_EINVAL;
	}
	if (cache ? e->set.cache != K8S_FWD_CACHE_SHARED : e->set.coredns) {
		return refuse(&p, "zone %s given twice", w[0]);
	}
	if (cache) {
		set.coredns = e->set.coredns;
		set.policy = e->set.policy;
		set.force_tcp = e->set.force_tcp;
		set.prefer_udp = e->set.prefer_udp;
		set.max_fails = e->set.max_fails;
		set.expire_ms = e->set.expire_ms;
	} else {
		k8s_fwd_settings_t old = e->set;
		set.cache = old.cache;
		set.no_success = old.no_success;
		set.no_denial = old.no_denial;
		set.success_max = old.success_max;
		set.success_min = old.success_min;
		set.denial_max = old.denial_max;
		set.denial_min = old.denial_min;
		set.success_cap = old.success_cap;
		set.denial_cap = old.denial_cap;
		set.servfail_ttl = old.servfail_ttl;
	}
	e->set = set;
	return KNOT_EOK;
}
