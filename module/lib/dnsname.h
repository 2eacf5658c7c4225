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
 * \brief DNS names as Kubernetes spells them: RFC 1123 labels, lowercase, '-' inside.
 *
 * The one place that says what a namespace, a service name, a cluster id or a
 * federation name may be: the API decoder, the federation options and the
 * conf check all ask here, so they refuse the same names.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*! \brief Longest DNS label and DNS subdomain (text, without the trailing dot). */
#define K8S_DNS_LABEL_MAX 63
#define K8S_DNS_NAME_MAX 253

/*!
 * \brief True if \a s is an RFC 1123 label: 1 to 63 of [a-z0-9-], no '-' first or last.
 *
 * apimachinery's IsDNS1123Label when \a fold is false.
 *
 * \param fold  Uppercase letters pass too (for values the caller lowercases).
 */
bool k8s_dns_label_valid(const char *s, size_t len, bool fold);

/*!
 * \brief True if \a s is an RFC 1035 label: an RFC 1123 label that starts with a letter.
 *
 * apimachinery's IsDNS1035Label (Service names, kube-dns's federation queries).
 */
bool k8s_dns1035_label_valid(const char *s, size_t len);

/*!
 * \brief True if \a s is a DNS subdomain as the API server checks one: 1 to 253 bytes of
 *        RFC 1123 labels joined by dots, with no limit on a label's length.
 *
 * apimachinery's IsDNS1123Subdomain (names of pods, EndpointSlices, nodes, custom
 * resources; ExternalName targets). Such a name may have labels no DNS name can
 * carry: k8s_dns_name_valid() says whether it can be one.
 */
bool k8s_dns_subdomain_valid(const char *s, size_t len);

/*!
 * \brief True if \a s is dot-separated RFC 1123 labels (no trailing dot).
 *
 * \param max_len     Longest \a len accepted.
 * \param max_labels  Most labels accepted, 0 for any.
 * \param fold        As for k8s_dns_label_valid().
 */
bool k8s_dns_name_valid(const char *s, size_t len, size_t max_len, size_t max_labels, bool fold);

/*!
 * \brief True if \a s is a cluster id: one DNS label, or two joined by a dot (KEP-1645).
 *
 * \param fold  As for k8s_dns_label_valid(); the cluster-id option is lowercase.
 */
bool k8s_cluster_id_valid(const char *s, size_t len, bool fold);

/*!
 * \brief Writes a dot-separated name as wire labels without the root label.
 *
 * \param fold  Lowercase uppercase letters; else they are refused.
 *
 * \return Bytes written, or 0 if a label is no RFC 1123 label or \a max is exceeded.
 */
size_t k8s_dns_name_labels(const char *text, size_t len, bool fold, uint8_t *out, size_t max);

/*!
 * \brief memcmp(a, b, len) == 0, without its call for keys of up to 32 bytes (labels,
 * a service's owner): overlapping word loads, none outside the \a len bytes. The call
 * cost about 25 instructions per key on the answer path (callgrind), this 6 to 12.
 */
static inline bool k8s_bytes_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t x, y, diff = 0;
	if (len > 32) {
		return memcmp(a, b, len) == 0;
	}
	if (len >= 8) {
		for (size_t at = 0; at + 8 < len; at += 8) {
			memcpy(&x, a + at, 8);
			memcpy(&y, b + at, 8);
			diff |= x ^ y;
		}
		memcpy(&x, a + len - 8, 8);
		memcpy(&y, b + len - 8, 8);
		return (diff | (x ^ y)) == 0;
	}
	if (len >= 4) {
		uint32_t x1, y1, x2, y2;
		memcpy(&x1, a, 4);
		memcpy(&y1, b, 4);
		memcpy(&x2, a + len - 4, 4);
		memcpy(&y2, b + len - 4, 4);
		return ((x1 ^ y1) | (x2 ^ y2)) == 0;
	}
	// 0 to 3 bytes: the first, the middle and the last are every byte.
	return len == 0 || (a[0] == b[0] && a[len >> 1] == b[len >> 1] && a[len - 1] == b[len - 1]);
}

/*! \brief True if two wire labels are equal; lengths first, so neither is read past its end. */
static inline bool k8s_label_equal(const uint8_t *a, const uint8_t *b)
{
	return a[0] == b[0] && k8s_bytes_equal(a + 1, b + 1, a[0]);
}
