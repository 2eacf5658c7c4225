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
 * A hosts file's text into entries, as CoreDNS's hosts plugin reads it (hostsfile.go,
 * after Go's net/hosts.go): per line, what follows '#' is a comment; fields are split
 * by spaces, tabs, CR, VT and FF; the first is an address (an IPv6 zone "%eth0"
 * dropped; an IPv4-mapped IPv6 address is the IPv4 one, as Go's To4() makes it), the
 * others names, lowercased, each one entry. A line without a valid address is
 * skipped, an invalid name alone. Hostile input: any bytes, lines of any length.
 */

#include <arpa/inet.h>
#include <string.h>

#include "hosts/hosts_priv.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/*! \brief The address of a field, Go's net.ParseIP's: 0 if none, else its family. */
static int parse_addr(const char *field, size_t len, uint8_t bytes[16])
{
	const char *zone = memchr(field, '%', len);
	if (zone != NULL) {
		len = zone - field;
	}
	char text[INET6_ADDRSTRLEN];
	if (len == 0 || len >= sizeof(text) || memchr(field, '\0', len) != NULL) {
		return 0;
	}
	memcpy(text, field, len);
	text[len] = '\0';
	// glibc's inet_pton() refuses leading zeros in IPv4 ("010.0.0.1"), as Go does.
	if (inet_pton(AF_INET, text, bytes) == 1) {
		return AF_INET;
	}
	if (inet_pton(AF_INET6, text, bytes) != 1) {
		return 0;
	}
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (memcmp(bytes, mapped, sizeof(mapped)) == 0) {
		memmove(bytes, bytes + 12, 4);
		return AF_INET;
	}
	return AF_INET6;
}

/*!
 * \brief A name field as a lowercase wire name (one trailing dot allowed); false if it
 * can be none: an empty label, a label over 63 bytes, over 255 in all, a byte that
 * is no printable ASCII or a backslash (CoreDNS would read it as an escape).
 */
static bool parse_name(const char *field, size_t len, uint8_t out[KNOT_DNAME_MAXLEN])
{
	if (len > 0 && field[len - 1] == '.') {
		len--;
	}
	if (len == 0 || len + 2 > KNOT_DNAME_MAXLEN) {
		return false;
	}
	size_t label_at = 0, pos = 1;
	out[0] = 0;
	for (size_t i = 0; i < len; i++) {
		char c = field[i];
		if (c == '.') {
			if (out[label_at] == 0) {
				return false;
			}
			label_at = pos++;
			out[label_at] = 0;
			continue;
		}
		if (c <= ' ' || c > '~' || c == '\\' || out[label_at] == KNOT_DNAME_MAXLABELLEN) {
			return false;
		}
		out[pos++] = (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
		out[label_at]++;
	}
	if (out[label_at] == 0) {
		return false;
	}
	out[pos] = 0;
	return true;
}

/*! \brief One line (comment removed): its entries into the builder. */
static k8s_hosts_add_t parse_line(k8s_hosts_builder_t *b, const char *line, size_t len)
{
	const char *end = line + len;
	int family = 0;
	uint8_t bytes[16];
	size_t fields = 0, skipped = 0, names = 0;
	for (const char *at = line; at < end; ) {
		while (at < end && is_space(*at)) {
			at++;
		}
		const char *field = at;
		while (at < end && !is_space(*at)) {
			at++;
		}
		size_t flen = at - field;
		if (flen == 0) {
			break;
		}
		if (fields++ == 0) {
			family = parse_addr(field, flen, bytes);
			if (family == 0) {
				// No address, no entry: the whole line goes, as CoreDNS drops it.
				k8s_hosts_count_line(b, false, 1);
				return K8S_HOSTS_ADDED;
			}
			continue;
		}
		uint8_t name[KNOT_DNAME_MAXLEN];
		if (!parse_name(field, flen, name)) {
			skipped++;
			continue;
		}
		k8s_hosts_add_t ret = k8s_hosts_add(b, name, family, bytes);
		if (ret == K8S_HOSTS_NOMEM) {
			return ret;
		}
		names += (ret == K8S_HOSTS_ADDED);
	}
	k8s_hosts_count_line(b, names > 0, skipped);
	return K8S_HOSTS_ADDED;
}

int k8s_hosts_parse(k8s_hosts_builder_t *b, const char *text, size_t len)
{
	const char *end = text + len;
	for (const char *line = text; line < end; ) {
		const char *nl = memchr(line, '\n', end - line);
		const char *line_end = (nl != NULL) ? nl : end;
		const char *hash = memchr(line, '#', line_end - line);
		if (parse_line(b, line, ((hash != NULL) ? hash : line_end) - line) == K8S_HOSTS_NOMEM) {
			return KNOT_ENOMEM;
		}
		line = (nl != NULL) ? nl + 1 : end;
	}
	return KNOT_EOK;
}
