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
 * The federation-member option: "NAME kubeconfig=PATH [context=CTX]
 * [zone=ZONE] [region=REGION] [source=PREFIX[,PREFIX...]]", one value per
 * member cluster.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dnsname.h"
#include "federation/fedserve.h"

/*! \brief Copies a word of \a len bytes into \a out (NUL-terminated); false if too long. */
static bool word_copy(const char *word, size_t len, char *out, size_t max)
{
	if (len >= max) {
		return false;
	}
	memcpy(out, word, len);
	out[len] = '\0';
	return true;
}

/*! \brief Reads one "ADDRESS[/LENGTH]" of \a len bytes; false if it is none or has host bits. */
static bool prefix_read(const char *text, size_t len, k8s_fedprefix_t *p)
{
	char addr[INET6_ADDRSTRLEN + 4];
	if (!word_copy(text, len, addr, sizeof(addr))) {
		return false;
	}
	char *slash = strchr(addr, '/');
	if (slash != NULL) {
		*slash = '\0';
	}
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, addr, p->bytes) == 1) {
		p->family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, p->bytes) == 1) {
		p->family = AF_INET6;
	} else {
		return false;
	}
	unsigned max = (p->family == AF_INET) ? 32 : 128;
	unsigned bits = max;
	if (slash != NULL) {
		const char *digits = slash + 1;
		size_t n = strlen(digits);
		if (n == 0 || n > 3 || strspn(digits, "0123456789") != n) {
			return false;
		}
		bits = (unsigned)atoi(digits);
	}
	if (bits > max) {
		return false;
	}
	p->len = bits;
	// Host bits set would say something else than what matches: refused, not masked.
	for (unsigned b = bits; b < max; b++) {
		if (p->bytes[b / 8] & (0x80 >> (b % 8))) {
			return false;
		}
	}
	return true;
}

/*! \brief Reads the comma-separated prefixes of key source. */
static int sources_read(const char *val, size_t len, k8s_fedmember_t *m, char *err, size_t errlen)
{
	if (m->source_count > 0) {
		snprintf(err, errlen, "source given twice");
		return KNOT_EINVAL;
	}
	const char *end = val + len;
	while (val <= end) {
		const char *comma = memchr(val, ',', end - val);
		size_t item = (comma != NULL ? comma : end) - val;
		if (m->source_count == K8S_FED_MAX_SOURCES) {
			snprintf(err, errlen, "more than %d source prefixes", K8S_FED_MAX_SOURCES);
			return KNOT_EINVAL;
		}
		if (!prefix_read(val, item, &m->sources[m->source_count])) {
			snprintf(err, errlen, "source '%.*s' is no ADDRESS[/LENGTH] without host bits",
			         (int)item, val);
			return KNOT_EINVAL;
		}
		m->source_count++;
		val += item + 1;
	}
	return KNOT_EOK;
}

/*! \brief Reads one key=value word into the member. */
static int field_read(const char *word, size_t len, k8s_fedmember_t *m, char *err, size_t errlen)
{
	const char *eq = memchr(word, '=', len);
	if (eq == NULL || eq == word + len - 1) {
		snprintf(err, errlen, "'%.*s' is not KEY=VALUE", (int)len, word);
		return KNOT_EINVAL;
	}
	size_t key_len = eq - word;
	const char *val = eq + 1;
	size_t val_len = len - key_len - 1;
	char **str = NULL;
	char *label = NULL;
	if (key_len == 10 && memcmp(word, "kubeconfig", 10) == 0) {
		str = &m->kubeconfig;
	} else if (key_len == 7 && memcmp(word, "context", 7) == 0) {
		str = &m->context;
	} else if (key_len == 4 && memcmp(word, "zone", 4) == 0) {
		label = m->zone;
	} else if (key_len == 6 && memcmp(word, "region", 6) == 0) {
		label = m->region;
	} else if (key_len == 6 && memcmp(word, "source", 6) == 0) {
		return sources_read(val, val_len, m, err, errlen);
	} else {
		snprintf(err, errlen, "unknown key '%.*s'", (int)key_len, word);
		return KNOT_EINVAL;
	}
	if (label != NULL) {
		if (!k8s_dns_label_valid(val, val_len, false) || !word_copy(val, val_len, label, 64)) {
			snprintf(err, errlen, "%.*s is no lowercase DNS label", (int)key_len, word);
			return KNOT_EINVAL;
		}
		return KNOT_EOK;
	}
	if (*str != NULL) {
		snprintf(err, errlen, "%.*s given twice", (int)key_len, word);
		return KNOT_EINVAL;
	}
	*str = strndup(val, val_len);
	return (*str != NULL) ? KNOT_EOK : KNOT_ENOMEM;
}

int k8s_fedmember_parse(const char *text, k8s_fedmember_t *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	int ret = KNOT_EOK;
	bool named = false;
	const char *pos = text;
	while (ret == KNOT_EOK) {
		pos += strspn(pos, " \t");
		size_t len = strcspn(pos, " \t");
		if (len == 0) {
			break;
		}
		if (!named) {
			// The name is what the source-cluster option carries: one lowercase label.
			if (!k8s_dns_label_valid(pos, len, false)) {
				snprintf(err, errlen, "the name is no lowercase DNS label");
				ret = KNOT_EINVAL;
			} else {
				m->name[0] = len;
				memcpy(m->name + 1, pos, len);
				named = true;
			}
		} else {
			ret = field_read(pos, len, m, err, errlen);
		}
		pos += len;
	}
	if (ret == KNOT_EOK && !named) {
		snprintf(err, errlen, "no member name");
		ret = KNOT_EINVAL;
	}
	if (ret == KNOT_EOK && m->kubeconfig == NULL) {
		snprintf(err, errlen, "no kubeconfig=PATH");
		ret = KNOT_EINVAL;
	}
	if (ret != KNOT_EOK) {
		k8s_fedmember_free(m);
	}
	return ret;
}

void k8s_fedmember_free(k8s_fedmember_t *m)
{
	free(m->kubeconfig);
	free(m->context);
	m->kubeconfig = NULL;
	m->context = NULL;
}
