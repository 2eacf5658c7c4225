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

#include "rewrite/dnstext.h"

/*! \brief How miekg writes a byte of a label: as it is, lowercased, \X or \DDD. */
enum { AS_IS = 0, LOWER, ESCAPE, DDD };

static const uint8_t byte_class[256] = {
	[0x00 ... 0x1f] = DDD,
	[' '] = ESCAPE, ['\''] = ESCAPE, ['@'] = ESCAPE, [';'] = ESCAPE, ['('] = ESCAPE,
	[')'] = ESCAPE, ['"'] = ESCAPE, ['\\'] = ESCAPE, ['.'] = ESCAPE,
	['A' ... 'Z'] = LOWER,
	[0x7f ... 0xff] = DDD,
};

size_t k8s_name_to_text(const uint8_t *name, char *out, size_t max)
{
	size_t n = 0;
	if (max < 2) {
		return 0;
	}
	if (*name == 0) {
		out[0] = '.';
		out[1] = '\0';
		return 1;
	}
	while (*name != 0) {
		uint8_t len = *name++;
		const uint8_t *label_end = name + len;
		// Room for the label at its longest (every byte \DDD), its dot and the NUL.
		if (n + 4 * (size_t)len + 2 > max) {
			return 0;
		}
		// Most labels (knotd's query names are lowercase) are copied as they are.
		uint8_t any = 0;
		for (uint8_t i = 0; i < len; i++) {
			any |= byte_class[name[i]];
		}
		if (any == AS_IS) {
			memcpy(out + n, name, len);
			n += len;
			len = 0;
		}
		for (uint8_t i = 0; i < len; i++) {
			uint8_t b = name[i];
			switch (byte_class[b]) {
			case AS_IS:
				out[n++] = b;
				break;
			case LOWER:
				out[n++] = b + ('a' - 'A');
				break;
			case ESCAPE:
				out[n++] = '\\';
				out[n++] = b;
				break;
			default:
				out[n++] = '\\';
				out[n++] = '0' + b / 100;
				out[n++] = '0' + (b / 10) % 10;
				out[n++] = '0' + b % 10;
				break;
			}
		}
		name = label_end;
		out[n++] = '.';
	}
	out[n] = '\0';
	return n;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

size_t k8s_name_from_text(const char *text, size_t len, uint8_t out[256])
{
	if (len == 0) {
		return 0;
	}
	if (len == 1 && text[0] == '.') {
		out[0] = 0;
		return 1;
	}
	size_t pos = 0;       // Where the current label's length byte is.
	size_t label = 0;
	size_t i = 0;
	while (i <= len) {
		if (i == len || text[i] == '.') {
			// An empty label: a leading dot, two dots; a final dot ends the name.
			if (label == 0) {
				if (i == len && i > 0 && text[i - 1] == '.') {
					break;
				}
				return 0;
			}
			if (label > 63) {
				return 0;
			}
			out[pos] = label;
			pos += 1 + label;
			label = 0;
			i++;
			continue;
		}
		uint8_t b = (uint8_t)text[i++];
		if (b == '\\') {
			if (i == len) {
				return 0;
			}
			if (i + 3 <= len && digit(text[i]) && digit(text[i + 1]) && digit(text[i + 2])) {
				unsigned v = (text[i] - '0') * 100 + (text[i + 1] - '0') * 10 + (text[i + 2] - '0');
				if (v > 255) {
					return 0;
				}
				b = v;
				i += 3;
			} else {
				b = (uint8_t)text[i++];
			}
		}
		// The name's bytes so far, this one and the root must fit in 255.
		if (pos + 1 + label + 1 + 1 > 255) {
			return 0;
		}
		out[pos + 1 + label] = (b >= 'A' && b <= 'Z') ? b + ('a' - 'A') : b;
		label++;
	}
	out[pos] = 0;
	return pos + 1;
}
