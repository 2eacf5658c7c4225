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


#include "api/backoff.h"

uint64_t k8s_backoff_next(k8s_backoff_t *b, uint64_t now_ms, double jitter)
{
	// Two minutes without a failure count as health: start small again.
	if (b->steps > 0 && now_ms - b->last_ms > K8S_BACKOFF_RESET_MS) {
		b->steps = 0;
	}

	// Steps stop growing at the cap, so the shift cannot overflow.
	uint64_t base = (uint64_t)K8S_BACKOFF_BASE_MS << b->steps;
	if (base >= K8S_BACKOFF_CAP_MS) {
		base = K8S_BACKOFF_CAP_MS;
	} else {
		b->steps++;
	}
	b->last_ms = now_ms;

	if (jitter < 0.0 || jitter >= 1.0) {
		jitter = 0.0;
	}
	return base + (uint64_t)(jitter * (double)base);
}

uint64_t k8s_backoff_retry_after(uint64_t retry_after_ms, double jitter)
{
	if (jitter < 0.0 || jitter >= 1.0) {
		jitter = 0.0;
	}
	// Capped before and after the jitter: the sum cannot wrap, and the cap is the whole wait.
	if (retry_after_ms > K8S_BACKOFF_RETRY_AFTER_MAX_MS) {
		retry_after_ms = K8S_BACKOFF_RETRY_AFTER_MAX_MS;
	}
	uint64_t delay = retry_after_ms + (uint64_t)(jitter * K8S_BACKOFF_RETRY_AFTER_JITTER *
	                                             (double)retry_after_ms);
	return (delay < K8S_BACKOFF_RETRY_AFTER_MAX_MS) ? delay : K8S_BACKOFF_RETRY_AFTER_MAX_MS;
}

void k8s_backoff_reset(k8s_backoff_t *b)
{
	b->steps = 0;
}
