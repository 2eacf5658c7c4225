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
 * \brief The module's options, described once: one row of K8S_OPTIONS each.
 *
 * From this table come the knotd schema (`k8s_conf_schema` in k8s_conf.c), the names the
 * code reads options by (K8S_OPT(ID)), the rows of the watch settings
 * (`k8s_watcher_conf_fields` in watchconf.c) and their string defaults.
 * A new option is one row here plus its use (ARCHITECTURE.md, "How to add an
 * option"). The table holds no knotd or libknot call: each reader defines the
 * V_* value forms before it expands the table, and a form a reader does not
 * define is never expanded there.
 *
 * K8S_OPTIONS(X) calls X(id, name, type, value, flags, check, watch) per option,
 * in the schema's order (knotc conf-export's):
 *   id     The option's name in the code: K8S_OPT(id).
 *   name   Knotd's length-prefixed form ("\x03""ttl").
 *   type   Its yp_type_t (YP_TSTR, YP_TINT, ...).
 *   value  Its limits and default: V_NONE, V_STR(dflt), V_INT(min, max, dflt),
 *          V_TIME(min, max, dflt) (seconds, with a unit), V_BOOL(dflt),
 *          V_DNAME(size, wire), V_OPT(list, dflt), V_ADDR(port).
 *   flags  YP_FNONE or YP_FMULTI.
 *   check  The check of one value, which knotd runs as it reads it, or NULL.
 *   watch  Its field of the watch settings (watchconf.h), a tuple:
 *          (W_NONE, 0)                          not a watch setting;
 *          (W_READ, row, kind, scope, field)    read from the option;
 *          (W_LIST, row, scope, field, count)   a K8S_WCONF_STRLIST with its count;
 *          (W_LOAD, row, kind, scope, field)    derived by load from the option.
 *          `row` is the field's fixed place in k8s_watcher_conf_fields, from 0
 *          without gaps: the settings' hash (a snapshot's file name) walks them
 *          in that order, so a new one takes the next free number. A place given
 *          twice fails the build (-Woverride-init); a gap ends the table early,
 *          which tests/unit/test_watchconf.c finds (a field without a row).
 */

#pragma once

#define K8S_OPTIONS(X) \
	X(KUBECONFIG, "\x0a""kubeconfig", YP_TSTR, V_NONE, YP_FNONE, NULL, \
	  (W_READ, 0, K8S_WCONF_STR, K8S_WCONF_SERVER, kubeconfig)) \
	X(CONTEXT, "\x07""context", YP_TSTR, V_NONE, YP_FNONE, NULL, \
	  (W_READ, 1, K8S_WCONF_STR, K8S_WCONF_SERVER, context)) \
	X(SA_DIR, "\x12""serviceaccount-dir", YP_TSTR, V_STR(K8S_SA_DIR_DEFAULT), YP_FNONE, NULL, \
	  (W_READ, 2, K8S_WCONF_STR, K8S_WCONF_SERVER, sa_dir)) \
	X(TTL, "\x03""ttl", YP_TINT, V_TIME(0, 3600, 5), YP_FNONE, NULL, (W_NONE, 0)) \
	X(DNS_VERSION, "\x0b""dns-version", YP_TSTR, V_STR("1.1.0"), YP_FNONE, check_version, \
	  (W_NONE, 0)) \
	X(CS_DNS_VERSION, "\x16""clusterset-dns-version", YP_TSTR, V_STR("1.1.0"), YP_FNONE, \
	  check_version, (W_NONE, 0)) \
	X(CLUSTER_DOMAIN, "\x0e""cluster-domain", YP_TDNAME, \
	  V_DNAME(15, "\x07""cluster""\x05""local"), YP_FNONE, NULL, (W_NONE, 0)) \
	X(CLUSTERSET_DOMAIN, "\x11""clusterset-domain", YP_TDNAME, \
	  V_DNAME(18, "\x0a""clusterset""\x05""local"), YP_FNONE, NULL, (W_NONE, 0)) \
	X(CLUSTER_ID, "\x0a""cluster-id", YP_TSTR, V_NONE, YP_FNONE, check_cluster_id, \
	  (W_READ, 6, K8S_WCONF_STR, K8S_WCONF_HELD, cluster_id)) \
	X(NAMESPACES, "\x0a""namespaces", YP_TSTR, V_NONE, YP_FMULTI, NULL, \
	  (W_LIST, 3, K8S_WCONF_HELD, namespaces, namespace_count)) \
	X(LABELS, "\x06""labels", YP_TSTR, V_NONE, YP_FNONE, check_selector, \
	  (W_READ, 4, K8S_WCONF_STR, K8S_WCONF_HELD, labels)) \
	X(NS_LABELS, "\x10""namespace-labels", YP_TSTR, V_NONE, YP_FNONE, check_selector, \
	  (W_READ, 5, K8S_WCONF_STR, K8S_WCONF_HELD, namespace_labels)) \
	X(EP_POD_NAMES, "\x12""endpoint-pod-names", YP_TBOOL, V_NONE, YP_FNONE, NULL, \
	  (W_READ, 8, K8S_WCONF_BOOL, K8S_WCONF_HELD, endpoint_pod_names)) \
	X(NO_ENDPOINTS, "\x0c""no-endpoints", YP_TBOOL, V_NONE, YP_FNONE, NULL, \
	  (W_READ, 9, K8S_WCONF_BOOL, K8S_WCONF_HELD, no_endpoints)) \
	X(IGNORE_EMPTY, "\x14""ignore-empty-service", YP_TBOOL, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(ZONAL, "\x05""zonal", YP_TBOOL, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(PODS, "\x04""pods", YP_TOPT, V_OPT(pods_modes, K8S_PODS_INSECURE), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(UPSTREAM, "\x08""upstream", YP_TADDR, V_ADDR(53), YP_FNONE, check_upstream, (W_NONE, 0)) \
	X(STALL, "\x13""watch-stall-timeout", YP_TINT, V_TIME(5, 3600, K8S_STALL_S_DEFAULT), \
	  YP_FNONE, NULL, (W_READ, 10, K8S_WCONF_UINT, K8S_WCONF_HOW, stall_s)) \
	X(CRD_RETRY, "\x12""crd-retry-interval", YP_TINT, \
	  V_TIME(1, 86400, K8S_ABSENT_RETRY_S_DEFAULT), YP_FNONE, NULL, \
	  (W_READ, 11, K8S_WCONF_UINT, K8S_WCONF_HOW, absent_retry_s)) \
	X(WATCH_LIST, "\x0a""watch-list", YP_TBOOL, V_BOOL(true), YP_FNONE, NULL, \
	  (W_READ, 15, K8S_WCONF_BOOL, K8S_WCONF_HOW, watch_list)) \
	X(AUTOPATH_DOMAIN, "\x0f""autopath-domain", YP_TDNAME, \
	  V_DNAME(11, "\x02""ap""\x03""k8s""\x02""io"), YP_FNONE, NULL, (W_NONE, 0)) \
	X(AUTOPATH_OPTION, "\x14""autopath-edns-option", YP_TINT, V_INT(0, 65535, 65001), YP_FNONE, \
	  NULL, (W_NONE, 0)) \
	X(AUTOPATH, "\x08""autopath", YP_TBOOL, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(AUTOPATH_HOST, "\x14""autopath-host-search", YP_TDNAME, V_NONE, YP_FMULTI, NULL, \
	  (W_NONE, 0)) \
	X(FEDERATIONS, "\x0b""federations", YP_TSTR, V_NONE, YP_FMULTI, check_federation, \
	  (W_NONE, 0)) \
	X(FED_ZONE, "\x0f""federation-zone", YP_TSTR, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(FED_REGION, "\x11""federation-region", YP_TSTR, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	/* The option, else NODE_NAME, and only for zones that read nodes. */ \
	X(NODE_NAME, "\x09""node-name", YP_TSTR, V_NONE, YP_FNONE, check_node_name, \
	  (W_LOAD, 7, K8S_WCONF_STR, K8S_WCONF_HELD, node_name)) \
	X(FED_NAME, "\x0f""federation-name", YP_TSTR, V_NONE, YP_FNONE, k8s_fed_check_name, \
	  (W_NONE, 0)) \
	X(FED_DOMAIN, "\x11""federation-domain", YP_TDNAME, V_DNAME(12, "\x0a""federation"), \
	  YP_FNONE, NULL, (W_NONE, 0)) \
	X(FED_MEMBER, "\x11""federation-member", YP_TSTR, V_NONE, YP_FMULTI, k8s_fed_check_member, \
	  (W_NONE, 0)) \
	X(FED_EXTERNAL, "\x13""federation-external", YP_TDNAME, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	/* On: the file's path in the zone's storage, when it is writable. */ \
	X(SNAPSHOT, "\x08""snapshot", YP_TBOOL, V_BOOL(true), YP_FNONE, NULL, \
	  (W_LOAD, 12, K8S_WCONF_STR, K8S_WCONF_HOW, snapshot)) \
	X(SNAP_MAX_AGE, "\x10""snapshot-max-age", YP_TINT, V_TIME(0, 365 * 86400, 86400), YP_FNONE, \
	  NULL, (W_READ, 13, K8S_WCONF_UINT, K8S_WCONF_HOW, snapshot_max_age_s)) \
	X(FED_NS, "\x16""federation-nameservers", YP_TSTR, V_NONE, YP_FMULTI, k8s_fed_check_ns, \
	  (W_NONE, 0)) \
	X(FED_CLUSTER, "\x17""federation-cluster-name", YP_TSTR, V_NONE, YP_FNONE, \
	  k8s_fed_check_cluster, (W_NONE, 0)) \
	X(FED_API_LISTEN, "\x15""federation-api-listen", YP_TADDR, V_NONE, YP_FNONE, \
	  check_listen, (W_NONE, 0)) \
	X(FED_API_CERT, "\x13""federation-api-cert", YP_TSTR, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(FED_API_KEY, "\x12""federation-api-key", YP_TSTR, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(FED_API_CA, "\x18""federation-api-client-ca", YP_TSTR, V_NONE, YP_FNONE, NULL, (W_NONE, 0)) \
	X(FORWARD, "\x07""forward", YP_TSTR, V_NONE, YP_FMULTI, k8s_forward_check_addr, (W_NONE, 0)) \
	X(FORWARD_STUB, "\x0c""forward-stub", YP_TSTR, V_NONE, YP_FMULTI, k8s_forward_check_stub, \
	  (W_NONE, 0)) \
	X(FORWARD_TIMEOUT, "\x0f""forward-timeout", YP_TINT, V_INT(100, 60000, 2000), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(FORWARD_CACHE_TTL, "\x15""forward-cache-max-ttl", YP_TINT, V_TIME(0, 86400, 30), YP_FNONE, \
	  NULL, (W_NONE, 0)) \
	X(FORWARD_CACHE_SIZE, "\x12""forward-cache-size", YP_TINT, V_INT(16, 1048576, 4096), \
	  YP_FNONE, NULL, (W_NONE, 0)) \
	X(FORWARD_PENDING, "\x13""forward-max-pending", YP_TINT, V_INT(1, 65536, 1024), YP_FNONE, \
	  NULL, (W_NONE, 0)) \
	X(FORWARD_OPTIONS, "\x0f""forward-options", YP_TSTR, V_NONE, YP_FMULTI, \
	  k8s_forward_check_options, (W_NONE, 0)) \
	X(FORWARD_CACHE, "\x0d""forward-cache", YP_TSTR, V_NONE, YP_FMULTI, k8s_forward_check_cache, \
	  (W_NONE, 0)) \
	X(FORWARD_LOG_INTERVAL, "\x14""forward-log-interval", YP_TINT, V_TIME(1, 3600, 10), YP_FNONE, \
	  NULL, (W_NONE, 0)) \
	X(BUFSIZE, "\x07""bufsize", YP_TINT, V_INT(512, 65535, 65535), YP_FNONE, NULL, (W_NONE, 0)) \
	X(QUERY_LOG, "\x09""query-log", YP_TSTR, V_NONE, YP_FMULTI, k8s_ops_check_querylog, \
	  (W_NONE, 0)) \
	X(QUERY_LOG_RATE, "\x0e""query-log-rate", YP_TINT, V_INT(1, 1000000, 1000), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(KUBEDNS_CONFIG, "\x0f""kube-dns-config", YP_TSTR, V_NONE, YP_FNONE, \
	  k8s_forward_check_kubedns, (W_NONE, 0)) \
	X(HOSTS_FILE, "\x0a""hosts-file", YP_TSTR, V_NONE, YP_FNONE, k8s_hosts_check_file, \
	  (W_NONE, 0)) \
	X(HOSTS_CONFIGMAP, "\x0f""hosts-configmap", YP_TSTR, V_NONE, YP_FNONE, \
	  k8s_hosts_check_configmap, \
	  (W_READ, 14, K8S_WCONF_STR, K8S_WCONF_HELD, hosts_configmap)) \
	X(HOSTS_ENTRY, "\x0b""hosts-entry", YP_TSTR, V_NONE, YP_FMULTI, k8s_hosts_check_entry, \
	  (W_NONE, 0)) \
	X(HOSTS_ZONE, "\x0a""hosts-zone", YP_TDNAME, V_NONE, YP_FMULTI, NULL, (W_NONE, 0)) \
	X(HOSTS_TTL, "\x09""hosts-ttl", YP_TINT, V_INT(1, 65535, 3600), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(HOSTS_RELOAD, "\x0c""hosts-reload", YP_TINT, V_TIME(0, 86400, 5), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(HOSTS_NO_REVERSE, "\x10""hosts-no-reverse", YP_TBOOL, V_NONE, YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(HOSTS_FALLTHROUGH, "\x11""hosts-fallthrough", YP_TDNAME, V_NONE, YP_FMULTI, NULL, \
	  (W_NONE, 0)) \
	X(HOSTS_FALL_UNSUPPORTED, "\x1d""hosts-fallthrough-unsupported", YP_TBOOL, V_NONE, \
	  YP_FNONE, NULL, (W_NONE, 0)) \
	X(EXTERNAL_ZONE, "\x0d""external-zone", YP_TDNAME, V_NONE, YP_FMULTI, NULL, (W_NONE, 0)) \
	X(EXTERNAL_APEX, "\x0d""external-apex", YP_TSTR, V_STR("dns"), YP_FNONE, check_external_apex, \
	  (W_NONE, 0)) \
	X(EXTERNAL_TTL, "\x0c""external-ttl", YP_TINT, V_TIME(0, 3600, 5), YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(EXTERNAL_HEADLESS, "\x11""external-headless", YP_TBOOL, V_NONE, YP_FNONE, NULL, \
	  (W_NONE, 0)) \
	X(METRICS_LISTEN, "\x0e""metrics-listen", YP_TADDR, V_NONE, YP_FNONE, check_listen, \
	  (W_NONE, 0)) \
	X(LAMEDUCK_FILE, "\x0d""lameduck-file", YP_TSTR, V_NONE, YP_FNONE, k8s_ops_check_lameduck, \
	  (W_NONE, 0)) \
	/* CoreDNS's rewrite and template lines, read by the global instance (k8s_rewrite.c). */ \
	X(REWRITE, "\x07""rewrite", YP_TSTR, V_NONE, YP_FMULTI, k8s_rewrite_check_rule, \
	  (W_NONE, 0)) \
	X(TEMPLATE, "\x08""template", YP_TSTR, V_NONE, YP_FMULTI, k8s_rewrite_check_template, \
	  (W_NONE, 0))

/*! \brief The options' ids, K8S_OPTION_<id>, in the table's order. */
#define K8S_OPTION_ID(id, name, type, value, flags, check, watch) K8S_OPTION_##id,
typedef enum {
	K8S_OPTIONS(K8S_OPTION_ID)
	K8S_OPTION_COUNT
} k8s_option_t;
#undef K8S_OPTION_ID

/*! \brief Every option's name (knotd's length-prefixed form), by its k8s_option_t. */
extern const char *const k8s_option_names[K8S_OPTION_COUNT];

/*! \brief An option's name as knotd's conf calls take it: K8S_OPT(TTL). */
#define K8S_OPT(id) (k8s_option_names[K8S_OPTION_##id])

/*! \brief A tuple's contents: K8S_UNPAREN (a, b) is a, b. */
#define K8S_UNPAREN(...) __VA_ARGS__
