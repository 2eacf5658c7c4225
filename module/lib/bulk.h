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
 * \brief Memory for what a warm start makes at once, faulted in 2 MiB at a time.
 *
 * A freshly started knotd touches every page of a snapshot's objects, blocks
 * and indexes for the first time, and on a virtual machine a page fault costs
 * about as much as the work done on the page. While a bulk session is open on
 * a thread, k8s_bulk_calloc() there hands out memory from chunks of
 * K8S_BULK_CHUNK bytes, aligned, advised for a transparent huge page and
 * populated in one call: one fault per chunk where the kernel has a huge page,
 * one system call per chunk where it has not. Allocations are never reused
 * within a chunk; each chunk counts what it holds and is unmapped with the
 * last of it, from whichever thread frees it.
 *
 * Outside a session, for allocations over K8S_BULK_LARGE (calloc(), then
 * populated) and under MemorySanitizer, it is calloc(). Under AddressSanitizer
 * the chunks stay, with a poisoned redzone before each block and poison over
 * a chunk's unused tail and over each freed block, so that ASan catches an
 * access past a block or after its free as it does for malloc(). k8s_bulk_free() frees
 * either kind; it must be used for every block a session may have made.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

/*! \brief Bytes of a chunk: a transparent huge page on x86-64 and arm64 (4 KiB pages). */
#define K8S_BULK_CHUNK ((size_t)2 << 20)

/*! \brief Larger allocations are calloc()'s own (then populated), not a chunk's. */
#define K8S_BULK_LARGE ((size_t)256 << 10)

/*! \brief Opens a session on the calling thread (sessions do not nest). */
void k8s_bulk_begin(void);

/*! \brief Closes the calling thread's session; its last chunk lives on with what it holds. */
void k8s_bulk_end(void);

/*! \brief calloc(1, size), from a chunk while the calling thread has a session open. */
void *k8s_bulk_calloc(size_t size);

/*! \brief strdup() with k8s_bulk_calloc(). */
char *k8s_bulk_strdup(const char *str);

/*! \brief Frees a block of k8s_bulk_calloc() (any thread), or of malloc(); NULL is ignored. */
void k8s_bulk_free(void *ptr);

/*! \brief Chunks mapped now, in all threads (tests, counters). */
size_t k8s_bulk_chunks(void);

/*! \brief Whether sessions use chunks in this build (not under MemorySanitizer). */
bool k8s_bulk_enabled(void);
