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
 * A group's own settings as module/forward/groupconf.c reads them: any forward-options or
 * forward-cache values (what an operator writes, or a translation of any Corefile).
 *
 * Input: values separated by NUL bytes; the first byte of each says which option (bit 0:
 * forward-cache, else forward-options), the rest is its text.
 * What must hold: a value is read or refused with a reason; what is read keeps CoreDNS's
 * ranges (a maximum TTL more than 0, capacities of 256 shards of 4 at least, SERVFAIL 5
 * minutes at most, never force_tcp and prefer_udp together), one entry per zone (a zone
 * given twice for the same option is refused), K8S_FWD_SETTINGS_MAX at most; and the
 * settings copy and compare equal to themselves.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forward/groupconf.h"
#include "fz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	k8s_fwd_conf_t conf = { 0 };
	conf.settings = calloc(K8S_FWD_SETTINGS_MAX, sizeof(*conf.settings));
	if (conf.settings == NULL) {
		return 0;
	}
	char text[2048];
	size_t pos = 0;
	while (pos < size) {
		const uint8_t *end = memchr(data + pos, 0, size - pos);
		size_t len = (end != NULL) ? (size_t)(end - data - pos) : size - pos;
		if (len > 0 && len - 1 < sizeof(text)) {
			bool cache = data[pos] & 1;
			memcpy(text, data + pos + 1, len - 1);
			text[len - 1] = '\0';
			char msg[256] = "";
			size_t before = conf.settings_count;
			int ret = k8s_fwd_groupconf_parse(text, cache, conf.settings, &conf.settings_count,
			                                  msg, sizeof(msg));
			if (ret != KNOT_EOK) {
				CHECK(msg[0] != '\0');
				CHECK(conf.settings_count == before);
			}
		}
		pos += len + 1;
	}
	CHECK(conf.settings_count <= K8S_FWD_SETTINGS_MAX);
	for (size_t i = 0; i < conf.settings_count; i++) {
		const k8s_fwd_settings_t *s = &conf.settings[i].set;
		for (size_t j = i + 1; j < conf.settings_count; j++) {
			const knot_dname_t *a = conf.settings[i].zone, *b = conf.settings[j].zone;
			CHECK(!((a == NULL && b == NULL) || (a != NULL && b != NULL && knot_dname_is_equal(a, b))));
		}
		CHECK(!(s->force_tcp && s->prefer_udp));
		CHECK(s->policy <= K8S_FWD_ROUND_ROBIN);
		if (s->cache == K8S_FWD_CACHE_COREDNS) {
			CHECK(s->success_max > 0 && s->denial_max > 0);
			CHECK(s->success_cap >= 1024 && s->success_cap % 256 == 0);
			CHECK(s->denial_cap >= 1024 && s->denial_cap % 256 == 0);
			CHECK(s->servfail_ttl <= 300);
		}
		CHECK(k8s_fwd_settings_of(&conf, conf.settings[i].zone) == s);
	}
	k8s_fwd_conf_t copy = { 0 };
	if (k8s_fwd_conf_copy(&copy, &conf) == KNOT_EOK) {
		CHECK(k8s_fwd_conf_equal(&copy, &conf));
	}
	k8s_fwd_conf_deinit(&copy);
	k8s_fwd_conf_deinit(&conf);
	return 0;
}
