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


#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "rewrite/blocks.h"
#include "rewrite/dnstext.h"
#include "rewrite/perr.h"

typedef struct {
	k8s_rw_block_t rules;
	size_t zone_count;              /*!< Its zones in the table below. */
	const char *zone_text[K8S_RW_BLOCK_ZONES_MAX];  /*!< Its zones' text (templates' default). */
} block_t;

struct k8s_rw_blocks {
	block_t block[K8S_RW_BLOCKS_MAX];  /*!< The root's first. */
	size_t count;
	uint8_t *zone[K8S_RW_BLOCK_ZONES_MAX];   /*!< Every block's zones, wire (the root's: "."). */
	char *zone_text[K8S_RW_BLOCK_ZONES_MAX];
	size_t zone_block[K8S_RW_BLOCK_ZONES_MAX];
	size_t zone_size[K8S_RW_BLOCK_ZONES_MAX];
	size_t zone_labels[K8S_RW_BLOCK_ZONES_MAX];
	size_t zone_count;
	/* The zones but the root's, most labels first: the first a name ends with is its
	 * block's (CoreDNS's longest suffix). */
	size_t longest_first[K8S_RW_BLOCK_ZONES_MAX];
};

/*! \brief A value's zones (wire) and the words after them. */
typedef struct {
	uint8_t zone[K8S_RW_BLOCK_ZONES_MAX][256];
	size_t count;                   /*!< 0: no prefix, the root's block. */
	const char *words;              /*!< The value after the prefix. */
} prefix_t;

/*! \brief Splits `ZONE[,ZONE...]:` off \a value; -1 with the reason if it names no zones. */
static int prefix_read(const char *value, prefix_t *p, k8s_perr_t *e)
{
	const char *start = value + strspn(value, " \t");
	size_t word = strcspn(start, " \t\n;");
	p->count = 0;
	p->words = value;
	if (word == 0 || start[word - 1] != ':') {
		return 0;
	}
	p->words = start + word;
	const char *z = start, *end = start + word - 1;
	while (z <= end) {
		const char *comma = memchr(z, ',', end - z);
		size_t len = (comma != NULL ? comma : end) - z;
		if (p->count == K8S_RW_BLOCK_ZONES_MAX) {
			return k8s_perr(e, "more than %d zones before ':'", K8S_RW_BLOCK_ZONES_MAX);
		}
		if (len == 0 || k8s_name_from_text(z, len, p->zone[p->count]) == 0) {
			return k8s_perr(e, "'%.*s' before ':' is not a list of zone names (ZONE,ZONE...:)",
			                (int)word, start);
		}
		for (size_t i = 0; i < p->count; i++) {
			if (knot_dname_is_equal(p->zone[i], p->zone[p->count])) {
				return k8s_perr(e, "zone '%.*s' named twice", (int)len, z);
			}
		}
		p->count++;
		z += len + 1;
	}
	return 0;
}

/*! \brief The table's index of \a zone, or zone_count. */
static size_t zone_find(const k8s_rw_blocks_t *b, const uint8_t *zone)
{
	size_t i = 0;
	while (i < b->zone_count && !knot_dname_is_equal(b->zone[i], zone)) {
		i++;
	}
	return i;
}

static int zone_add(k8s_rw_blocks_t *b, const uint8_t *zone, size_t block, k8s_perr_t *e)
{
	if (b->zone_count == K8S_RW_BLOCK_ZONES_MAX) {
		return k8s_perr(e, "more than %d zones of server blocks", K8S_RW_BLOCK_ZONES_MAX);
	}
	char text[K8S_NAME_TEXT_MAX];
	size_t size = knot_dname_size(zone);
	size_t i = b->zone_count;
	b->zone[i] = malloc(size);
	b->zone_text[i] = (k8s_name_to_text(zone, text, sizeof(text)) > 0) ? strdup(text) : NULL;
	if (b->zone[i] == NULL || b->zone_text[i] == NULL) {
		free(b->zone[i]);
		free(b->zone_text[i]);
		return k8s_perr(e, "no memory");
	}
	memcpy(b->zone[i], zone, size);
	b->zone_size[i] = size;
	b->zone_labels[i] = knot_dname_labels(zone, NULL);
	b->zone_block[i] = block;
	block_t *blk = &b->block[block];
	blk->zone_text[blk->zone_count++] = b->zone_text[i];
	b->zone_count++;
	return 0;
}

/*!
 * \brief The block of a value's zones: the one with exactly these zones, or a new one.
 * A zone already in a block with other zones is refused (CoreDNS: one block a zone).
 */
static int block_of(k8s_rw_blocks_t *b, const prefix_t *p, const char *value, size_t *out,
                    k8s_perr_t *e)
{
	if (p->count == 0) {
		*out = 0;
		return 0;
	}
	size_t first = zone_find(b, p->zone[0]);
	size_t found = (first < b->zone_count) ? b->zone_block[first] : b->count;
	for (size_t i = 0; i < p->count; i++) {
		size_t z = zone_find(b, p->zone[i]);
		size_t in = (z < b->zone_count) ? b->zone_block[z] : b->count;
		if (in != found || (found < b->count && b->block[found].zone_count != p->count)) {
			return k8s_perr(e, "'%s': a zone is in one server block only (its zones "
			                "named alike in each value)", value);
		}
	}
	if (found < b->count) {
		*out = found;
		return 0;
	}
	if (b->count == K8S_RW_BLOCKS_MAX) {
		return k8s_perr(e, "more than %d server blocks", K8S_RW_BLOCKS_MAX);
	}
	*out = b->count++;
	for (size_t i = 0; i < p->count; i++) {
		if (zone_add(b, p->zone[i], *out, e) != 0) {
			return -1;
		}
	}
	return 0;
}

void k8s_rw_blocks_free(k8s_rw_blocks_t *b)
{
	if (b == NULL) {
		return;
	}
	for (size_t i = 0; i < b->count; i++) {
		k8s_rewrite_free(b->block[i].rules.rewrite);
		k8s_templates_free(b->block[i].rules.templates);
	}
	for (size_t i = 0; i < b->zone_count; i++) {
		free(b->zone[i]);
		free(b->zone_text[i]);
	}
	free(b);
}

/*! \brief Each block's values of one option (rewrite, or \a templates). */
static int blocks_read(k8s_rw_blocks_t *b, const char *const *values, size_t count,
                       prefix_t *p, const char **words, size_t *which, bool templates,
                       k8s_perr_t *e)
{
	for (size_t i = 0; i < count; i++) {
		if (prefix_read(values[i], p, e) != 0 || block_of(b, p, values[i], &which[i], e) != 0) {
			return -1;
		}
		words[i] = p->words;
	}
	for (size_t blk = 0; blk < b->count; blk++) {
		size_t n = 0;
		const char *mine[K8S_TEMPLATES_MAX + K8S_REWRITE_RULES_MAX];
		for (size_t i = 0; i < count; i++) {
			// A value of the prefix alone names the block; it holds no rule.
			if (which[i] == blk && words[i][strspn(words[i], " \t")] != '\0') {
				mine[n++] = words[i];
			}
		}
		block_t *bl = &b->block[blk];
		if (n == 0) {
			continue;
		}
		if (templates) {
			// A template without zones is its block's, as CoreDNS's.
			bl->rules.templates = k8s_templates_new(mine, n, bl->zone_text, bl->zone_count,
			                                        e->err, e->err_len);
			if (bl->rules.templates == NULL) {
				return -1;
			}
		} else if ((bl->rules.rewrite = k8s_rewrite_new(mine, n, e->err, e->err_len)) == NULL) {
			return -1;
		}
	}
	return 0;
}

/*! \brief longest_first[]: the zones but the root's (index 0) by labels, most first. */
static void order_zones(k8s_rw_blocks_t *b)
{
	for (size_t i = 1; i < b->zone_count; i++) {
		size_t at = i - 1;
		while (at > 0 && b->zone_labels[b->longest_first[at - 1]] < b->zone_labels[i]) {
			b->longest_first[at] = b->longest_first[at - 1];
			at--;
		}
		b->longest_first[at] = i;
	}
}

k8s_rw_blocks_t *k8s_rw_blocks_new(const char *const *rewrites, size_t rewrite_count,
                                   const char *const *templates, size_t template_count,
                                   char *err, size_t err_len)
{
	k8s_perr_t e = { err, err_len };
	if (rewrite_count > K8S_REWRITE_RULES_MAX || template_count > K8S_TEMPLATES_MAX) {
		k8s_perr(&e, "more than %d rewrite rules or %d templates", K8S_REWRITE_RULES_MAX,
		         K8S_TEMPLATES_MAX);
		return NULL;
	}
	k8s_rw_blocks_t *b = calloc(1, sizeof(*b));
	prefix_t *p = malloc(sizeof(*p));
	const char **words = calloc(rewrite_count + template_count + 1, sizeof(*words));
	size_t *which = calloc(rewrite_count + template_count + 1, sizeof(*which));
	static const uint8_t root[1] = { 0 };
	if (b == NULL || p == NULL || words == NULL || which == NULL) {
		k8s_perr(&e, "no memory");
		k8s_rw_blocks_free(b);
		b = NULL;
	} else if ((b->count = 1, zone_add(b, root, 0, &e)) != 0 ||
	           blocks_read(b, rewrites, rewrite_count, p, words, which, false, &e) != 0 ||
	           blocks_read(b, templates, template_count, p, words, which, true, &e) != 0) {
		k8s_rw_blocks_free(b);
		b = NULL;
	}
	free(p);
	free(words);
	free(which);
	if (b != NULL) {
		order_zones(b);
	}
	return b;
}

size_t k8s_rw_blocks_count(const k8s_rw_blocks_t *b, size_t *rules, size_t *templates)
{
	*rules = *templates = 0;
	for (size_t i = 0; i < b->count; i++) {
		*rules += k8s_rewrite_count(b->block[i].rules.rewrite);
		*templates += k8s_templates_count(b->block[i].rules.templates);
	}
	return b->count;
}

const k8s_rw_block_t *k8s_rw_blocks_of(const k8s_rw_blocks_t *b, const uint8_t *name)
{
	size_t best = 0;  // The root's zone: every name is in it.
	if (b->zone_count > 1) {
		// The name's labels once; then per zone one comparison of the suffix of as many
		// labels (a bailiwick test per zone cost 180 instructions, bench/rewrite).
		const uint8_t *label[KNOT_DNAME_MAXLABELS + 1];
		size_t n = 0;
		const uint8_t *l = name;
		for (; *l != 0 && n < KNOT_DNAME_MAXLABELS; l += 1 + *l) {
			label[n++] = l;
		}
		const uint8_t *end = l + 1;
		for (size_t i = 0; i + 1 < b->zone_count; i++) {
			size_t z = b->longest_first[i];
			if (b->zone_labels[z] > n) {
				continue;
			}
			const uint8_t *suffix = label[n - b->zone_labels[z]];
			if ((size_t)(end - suffix) == b->zone_size[z] &&
			    memcmp(suffix, b->zone[z], b->zone_size[z]) == 0) {
				best = z;
				break;
			}
		}
	}
	const k8s_rw_block_t *r = &b->block[b->zone_block[best]].rules;
	return (r->rewrite != NULL || r->templates != NULL) ? r : NULL;
}
