/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Incremental splitting of API response bodies as bytes arrive.
 *
 * A LIST body is one JSON document that can be hundreds of megabytes; the list
 * splitter hands out each element of its top-level "items" array as its own
 * JSON text and keeps only one element in memory. A WATCH body is a stream of
 * newline-delimited events; the line splitter hands out each complete line.
 * Either may be fed in pieces of any size (an element or line may span many
 * pieces, one piece may hold many).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "api/events.h"

/*!
 * \brief Receives one complete item or line.
 *
 * A non-zero return stops the feed and is returned by it. \a text is valid
 * only during the call (it may point into the fed data).
 */
typedef int (*k8s_split_cb)(void *ctx, const char *text, size_t len);

/*! \brief Splitter of a LIST response body. */
typedef struct {
	k8s_buf_t buf;        /*!< Bytes of the element being read. */
	size_t max_item;      /*!< Larger items are skipped (reported by count). */
	int state;            /*!< Private lexer state. */
	int depth;            /*!< Private. */
	int flags;            /*!< Private. */
	char key[16];         /*!< Private: current top-level key. */
	size_t key_len;       /*!< Private. */
	char rv[K8S_RV_MAX];  /*!< metadata.resourceVersion of the list, "" until seen. */
	char *cont;           /*!< metadata.continue token (malloc'd), NULL if none or empty. */
	size_t skipped;       /*!< Items dropped for exceeding max_item. */
	bool done;            /*!< The closing brace of the document was seen. */
	k8s_split_cb on_skip; /*!< Optional (set after init): the first max_item bytes of a skipped item. */
	void *skip_ctx;       /*!< Context of on_skip. */
} k8s_listsplit_t;

/*! \brief Prepares a splitter; items above \a max_item bytes are skipped. */
void k8s_listsplit_init(k8s_listsplit_t *s, size_t max_item);

/*!
 * \brief Feeds body bytes; calls \a cb for each complete element of "items".
 *
 * \retval KNOT_EOK     fed; more may follow.
 * \retval KNOT_EMALF   the body is not a JSON object with an "items" array (or null).
 * \retval KNOT_ENOMEM  out of memory.
 * \retval other        the callback's non-zero return.
 */
int k8s_listsplit_feed(k8s_listsplit_t *s, const char *data, size_t len,
                       k8s_split_cb cb, void *ctx);

/*! \brief Frees the splitter's memory (rv and cont are cleared). */
void k8s_listsplit_deinit(k8s_listsplit_t *s);

/*! \brief Splitter of a WATCH stream. */
typedef struct {
	k8s_buf_t buf;        /*!< Bytes of the incomplete line. */
	size_t max_line;      /*!< Longer lines are skipped up to their newline. */
	bool skipping;        /*!< Inside an oversize line. */
	size_t skipped;       /*!< Lines dropped for exceeding max_line. */
	k8s_split_cb on_skip; /*!< Optional (set after init): the first max_line bytes of a skipped line. */
	void *skip_ctx;       /*!< Context of on_skip. */
} k8s_linesplit_t;

/*! \brief Prepares a splitter; lines above \a max_line bytes are skipped. */
void k8s_linesplit_init(k8s_linesplit_t *s, size_t max_line);

/*!
 * \brief Feeds stream bytes; calls \a cb for each complete non-empty line (without the newline).
 *
 * \retval KNOT_EOK     fed.
 * \retval KNOT_ENOMEM  out of memory.
 * \retval other        the callback's non-zero return.
 */
int k8s_linesplit_feed(k8s_linesplit_t *s, const char *data, size_t len,
                       k8s_split_cb cb, void *ctx);

/*!
 * \brief Bytes of an unterminated last line (a cut stream leaves one).
 *
 * Inside an oversize line it is max_line + 1: at least that much was cut.
 */
size_t k8s_linesplit_pending(const k8s_linesplit_t *s);

/*! \brief Frees the splitter's memory. */
void k8s_linesplit_deinit(k8s_linesplit_t *s);

/*! \brief What the head of a JSON object or watch event names. */
typedef struct {
	char type[16];        /*!< Event type ("ADDED"...), "" for an object or when absent. */
	char ns[64];          /*!< metadata.namespace, "" when absent. */
	char name[254];       /*!< metadata.name. */
	char rv[K8S_RV_MAX];  /*!< metadata.resourceVersion, "" when absent. */
} k8s_json_ident_t;

/*!
 * \brief Reads type, namespace, name and resourceVersion from the head of an
 *        object (or of a watch event's object) too large to parse.
 *
 * A lexer like the list splitter's: it needs no complete text and allocates
 * nothing. It stops at the end of metadata, which the API server writes before
 * spec and status. Values that are not plain printable strings are left empty.
 *
 * \param event  \a text is a watch event ({"type":...,"object":{...}}).
 *
 * \retval KNOT_EOK     metadata.name was found.
 * \retval KNOT_ENOENT  it was not (\a id may hold the other fields).
 * \retval KNOT_EMALF   the text is not a JSON object.
 */
int k8s_json_ident(const char *text, size_t len, bool event, k8s_json_ident_t *id);
