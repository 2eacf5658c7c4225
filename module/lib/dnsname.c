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

#include <string.h>

#include "lib/dnsname.h"

/*! [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length: a label of the subdomain rule. */
static bool label_chars_valid(const char *s, size_t len, bool fold)
{
	if (len == 0) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = (fold && s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
		if (c == '-') {
			if (i == 0 || i == len - 1) {
				return false;
			}
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			return false;
		}
	}
	return true;
}

bool k8s_dns_label_valid(const char *s, size_t len, bool fold)
{
	return len <= K8S_DNS_LABEL_MAX && label_chars_valid(s, len, fold);
}

bool k8s_dns1035_label_valid(const char *s, size_t len)
{
	return k8s_dns_label_valid(s, len, false) && s[0] >= 'a' && s[0] <= 'z';
}

bool k8s_dns_subdomain_valid(const char *s, size_t len)
{
	if (len == 0 || len > K8S_DNS_NAME_MAX) {
		return false;
	}
	const char *end = s + len;
	while (true) {
		const char *dot = memchr(s, '.', end - s);
		const char *label_end = (dot != NULL) ? dot : end;
		if (!label_chars_valid(s, label_end - s, false)) {
			return false; // "a..b", ".a" and "a." have an empty label
		}
		if (dot == NULL) {
			return true;
		}
		s = dot + 1;
	}
}

bool k8s_dns_name_valid(const char *s, size_t len, size_t max_len, size_t max_labels, bool fold)
{
	if (len == 0 || len > max_len) {
		return false;
	}
	size_t labels = 0;
	const char *end = s + len;
	while (s < end) {
		const char *dot = memchr(s, '.', end - s);
		const char *label_end = (dot != NULL) ? dot : end;
		if (!k8s_dns_label_valid(s, label_end - s, fold)) {
			return false;
		}
		labels++;
		if (max_labels > 0 && labels > max_labels) {
			return false;
		}
		if (dot == NULL) {
			break;
		}
		s = dot + 1;
		if (s == end) {
			return false; // "a." has an empty last label
		}
	}
	return true;
}

bool k8s_cluster_id_valid(const char *s, size_t len, bool fold)
{
	return s != NULL && k8s_dns_name_valid(s, len, K8S_DNS_NAME_MAX, 2, fold);
}

size_t k8s_dns_name_labels(const char *text, size_t len, bool fold, uint8_t *out, size_t max)
{
	const char *end = text + len, *start = text;
	size_t pos = 0;
	while (len > 0) {
		const char *dot = memchr(start, '.', end - start);
		size_t n = ((dot != NULL) ? dot : end) - start;
		if (!k8s_dns_label_valid(start, n, fold) || pos + 1 + n > max) {
			return 0;
		}
		out[pos] = n;
		for (size_t i = 0; i < n; i++) {
			char c = start[i];
			out[pos + 1 + i] = (fold && c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
		}
		pos += 1 + n;
		if (dot == NULL) {
			return pos;
		}
		start = dot + 1;
	}
	return 0;
}
