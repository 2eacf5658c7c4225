/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Watch events and Status bodies, and the bounds put on JSON text
 * before json-c builds a tree of it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kinds/objects.h"

/*! \brief A Status object (error bodies and ERROR events). */
typedef struct {
	int code;                  /*!< Status code, 0 if none. */
	int retry_after;           /*!< details.retryAfterSeconds, 0 if none. */
	char reason[32];           /*!< E.g. "Expired", "Unauthorized"; "" if none. */
	char message[256];         /*!< Truncated message; never holds request headers. */
} k8s_status_t;

typedef enum {
	K8S_EV_ADDED = 0,
	K8S_EV_MODIFIED,
	K8S_EV_DELETED,
	K8S_EV_BOOKMARK,
	K8S_EV_ERROR,
} k8s_event_type_t;

#define K8S_RV_MAX 64

/*! \brief Whether a resourceVersion can go into URLs: shorter than K8S_RV_MAX, printable, no spaces. */
bool k8s_rv_valid(const char *rv, size_t len);

/*! \brief One decoded watch event. */
typedef struct {
	k8s_event_type_t type;
	char rv[K8S_RV_MAX];       /*!< object.metadata.resourceVersion, "" if none. */
	k8s_object_t *obj;         /*!< ADDED, MODIFIED, DELETED: the object; the caller frees it. */
	bool initial_events_end;   /*!< BOOKMARK annotated k8s.io/initial-events-end. */
	k8s_status_t status;       /*!< ERROR: the Status. */
} k8s_event_t;

/*!
 * \brief Decodes one watch event line ({"type":..., "object":...}), scanned into \a tape
 * (reused from line to line: a reflector's).
 *
 * BOOKMARK objects are read for their resourceVersion only (their other
 * fields are zero values). Unknown event types give KNOT_EINVAL.
 * Return values as k8s_object_decode().
 */
int k8s_event_decode(k8s_jtape_t *tape, k8s_kind_t kind, const char *text, size_t len,
                     k8s_event_t *ev, char *err, size_t errlen);

/*!
 * \brief Reads a Status from an error body; plain-text bodies give the first line as message.
 *
 * \retval KNOT_EOK    always fills \a st (zeros when nothing is known).
 */
int k8s_status_decode(const char *text, size_t len, k8s_status_t *st);
