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
 * What liburcu means, said so that ThreadSanitizer understands it. Forced into every
 * file of a --enable-tsan build (Makefile.am), and only there.
 *
 * liburcu 0.13 publishes and reads pointers with volatile accesses and barriers, which
 * TSan takes for plain racing accesses, and a grace period orders a reader's section
 * before the writer's free by means TSan cannot see (membarrier, the readers' counters
 * in liburcu itself). So here:
 * - rcu_dereference(), rcu_assign_pointer() and rcu_xchg_pointer() are acquire, release
 *   and acquire-release atomics (the same instructions on x86), CMM_LOAD_SHARED() and
 *   CMM_STORE_SHARED() relaxed ones;
 * - the end of a read-side section releases a token that the end of a grace period
 *   (synchronize_rcu() returning, a call_rcu() callback starting) acquires: what a reader
 *   did in its section happens before what the writer does after the grace period.
 * Everything else, the readers' own accesses and every lock, TSan checks as it is.
 */

#pragma once

#ifdef __SANITIZE_THREAD__

#include <urcu/urcu-memb.h>
#include <urcu/pointer.h>
#include <urcu/system.h>

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

/*! The token read-side sections release and grace periods acquire. */
extern char k8s_tsan_grace;

#undef rcu_dereference
#define rcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)

#undef rcu_assign_pointer
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#undef rcu_xchg_pointer
#define rcu_xchg_pointer(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)

#undef CMM_LOAD_SHARED
#define CMM_LOAD_SHARED(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

#undef CMM_STORE_SHARED
#define CMM_STORE_SHARED(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#undef urcu_memb_read_unlock
#define urcu_memb_read_unlock() \
	do { __tsan_release(&k8s_tsan_grace); _urcu_memb_read_unlock(); } while (0)

#define urcu_memb_synchronize_rcu() \
	do { (urcu_memb_synchronize_rcu)(); __tsan_acquire(&k8s_tsan_grace); } while (0)

// What the caller wrote before call_rcu() happens before the callback (its queue is
// liburcu's own atomics), and a callback happens before rcu_barrier() returns.
#define urcu_memb_call_rcu(head, func) \
	do { __tsan_release(&k8s_tsan_grace); (urcu_memb_call_rcu)((head), (func)); } while (0)
#define urcu_memb_barrier() \
	do { (urcu_memb_barrier)(); __tsan_acquire(&k8s_tsan_grace); } while (0)

/*! \brief Called where a grace period has passed: first in a call_rcu() callback, and
 *         in unload(), which knotd calls after its own synchronize_rcu(). */
#define k8s_tsan_grace_passed() __tsan_acquire(&k8s_tsan_grace)
/*! \brief Called last in a call_rcu() callback, for rcu_barrier(). */
#define k8s_tsan_callback_end() __tsan_release(&k8s_tsan_grace)

/*! The token of what load() built: knotd publishes the zone to its workers under its own RCU. */
extern char k8s_tsan_zone;
/*! \brief Called last in load(): what it built is published with the zone. */
#define k8s_tsan_zone_published() __tsan_release(&k8s_tsan_zone)
/*! \brief Called first in a hook: the zone it runs for was published. */
#define k8s_tsan_zone_seen() __tsan_acquire(&k8s_tsan_zone)
/*!
 * \brief Called where a hook that read what load() built returns without a read-side
 * section of ours: knotd's own section (its workers') ends before unload().
 */
#define k8s_tsan_hook_done() __tsan_release(&k8s_tsan_grace)

#else

#define k8s_tsan_grace_passed() do { } while (0)
#define k8s_tsan_callback_end() do { } while (0)
#define k8s_tsan_zone_published() do { } while (0)
#define k8s_tsan_zone_seen() do { } while (0)
#define k8s_tsan_hook_done() do { } while (0)

#endif
