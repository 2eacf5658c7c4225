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
 * \brief kube-dns's ConfigMap as the API has it, for the forwarder's glue: the copy of
 * `kube-system/kube-dns` on the ConfigMap board (store/configmaps.h, where the watcher
 * puts it), its keys parsed as the mounted files are (forward/kubedns_conf.h), and the
 * test of a change the glue's thread makes once a second (the board's publication, or
 * without one the files' stamps).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forward/kubedns_conf.h"

/*! \brief How the log lines name the ConfigMap read through the API. */
#define K8S_KUBEDNS_API_SOURCE "kube-system/kube-dns (the API)"

/*! \brief A publication number the board never gives: the API's copy is read again. */
#define K8S_KUBEDNS_API_AGAIN UINT64_MAX

/*!
 * \brief The ConfigMap's keys as the API has them.
 *
 * \param cm   Out: the keys parsed (free with k8s_kubedns_deinit()) when KNOT_EOK and
 *             \a gen is set; untouched otherwise.
 * \param gen  Out: the board's publication read, also when a key is not valid; 0 when the
 *             board has it not as existing (not listed, forbidden, no such ConfigMap):
 *             then nothing is read.
 *
 * \retval KNOT_EOK, KNOT_EINVAL (a key not valid; the reason in \a msg), KNOT_ENOMEM
 */
int k8s_kubedns_api(k8s_kubedns_t *cm, uint64_t *gen, char *msg, size_t msglen);

/*!
 * \brief Whether the ConfigMap changed since the settings in force were read: another
 * publication on the board than \a api_gen; without one on the board, the files of \a dir
 * unlike \a stamp, or \a api_gen set (the API's copy went: the files now). Between two
 * watchers (a knotd reload) the board has none for a moment: what the API said stays.
 */
bool k8s_kubedns_changed(const char *dir, uint64_t api_gen, const k8s_kubedns_stamp_t *stamp);
