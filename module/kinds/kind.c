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
 * The kind table: each kind's row (its kind_*.c) by its k8s_kind_t, from the one
 * list of kinds (K8S_KINDS, kind.h). objects.c and digest.c read it; it calls
 * nothing.
 */

#include "kinds/kind_priv.h"

/*
 * Names as the API server checks them, each kind's rule in its row: a Service's is a
 * DNS-1035 label, or a DNS-1123 label with its RelaxedServiceNameValidation feature
 * gate, which the module cannot see, so it takes both; a Namespace's a DNS-1123
 * label; pods', slices', nodes' and custom resources' (ServiceImport,
 * ClusterProperty) DNS subdomains, up to 253 bytes with labels of any length.
 */
#define KIND_ROW(kind, file) [kind] = &k8s_kind_##file,
static const k8s_kind_def_t *const KINDS[K8S_KIND_COUNT] = {
	K8S_KINDS(KIND_ROW)
};
#undef KIND_ROW

const k8s_kind_def_t *k8s_kind_def(k8s_kind_t kind)
{
	return KINDS[kind];
}

const char *k8s_kind_name(k8s_kind_t kind)
{
	if ((unsigned)kind >= K8S_KIND_COUNT) {
		return "unknown";
	}
	return KINDS[kind]->plural;
}

bool k8s_kind_namespaced(k8s_kind_t kind)
{
	return (unsigned)kind < K8S_KIND_COUNT && KINDS[kind]->namespaced;
}

bool k8s_kind_name_is_label(k8s_kind_t kind)
{
	return (unsigned)kind < K8S_KIND_COUNT && KINDS[kind]->name_is_label;
}
