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
 * [zone=ZONE] [region=REGION]", one value per member cluster.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsname.h"
#include "fedserve.h"

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
