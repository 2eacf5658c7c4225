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
 * mod-k8s's public interface: what another program needs to talk to the module
 * (a DNS client or server that sets the source-cluster option, a controller that
 * programs the K8S-DNS role's federations, a tool that reads the warm restart's
 * snapshot, a dashboard or alert on the metrics endpoint). The module and its tests
 * take these values from here and nowhere else; `make install` installs this header
 * (<mod-k8s/mod-k8s.h>). Constants only: no function, no ABI. doc/mod-k8s.rst
 * documents each.
 */

#pragma once

/* --- DNS -------------------------------------------------------------------------- */

/*! EDNS option code (private use) that carries the asking cluster's name, one DNS
 *  label, between the federation roles (doc/mod-k8s.rst, "Federation"). */
#define MOD_K8S_EDNS_SOURCE_CLUSTER 65350

/* --- The K8S-DNS role's programming API (doc/mod-k8s.rst, federation-api-listen) -- */

/*! Path prefix of a federation: POST and DELETE {MOD_K8S_FEDAPI_PATH}<name>. */
#define MOD_K8S_FEDAPI_PATH         "/federations/"
/*! The one field of a POST body: {"nameservers": ["IP[@port]", ...]}. */
#define MOD_K8S_FEDAPI_NAMESERVERS  "nameservers"

/* --- The operations endpoint (metrics-listen) --------------------------------------- */

#define MOD_K8S_PATH_METRICS        "/metrics"
#define MOD_K8S_PATH_HEALTH         "/health"
#define MOD_K8S_PATH_READY          "/ready"

/* --- The warm restart's snapshot file (ARCHITECTURE.md, module/store/snapfile.h) ---- */

/*! The file's first 8 bytes: these 7 and a NUL. */
#define MOD_K8S_SNAP_MAGIC          "K8SSNAP"
/*! The format read and written (3: keyed with HMAC-SHA-256); another is refused (and
 *  rewritten after the first LIST). */
#define MOD_K8S_SNAP_VERSION        3

/* --- Metric series (the metrics endpoint; doc/mod-k8s.rst, "Metrics") --------------- */

/* The module's own series. */
#define MOD_K8S_METRIC_API_ERRORS_TOTAL                                    "mod_k8s_api_errors_total"
#define MOD_K8S_METRIC_CONNECTED                                           "mod_k8s_connected"
#define MOD_K8S_METRIC_DNS_PROGRAMMING_DURATION_SECONDS                    "mod_k8s_dns_programming_duration_seconds"
#define MOD_K8S_METRIC_DNS_REQUEST_DURATION_SECONDS                        "mod_k8s_dns_request_duration_seconds"
#define MOD_K8S_METRIC_DNS_REQUESTS_TOTAL                                  "mod_k8s_dns_requests_total"
#define MOD_K8S_METRIC_DNS_RESPONSES_TOTAL                                 "mod_k8s_dns_responses_total"
#define MOD_K8S_METRIC_FORWARD_CACHE_ENTRIES                               "mod_k8s_forward_cache_entries"
#define MOD_K8S_METRIC_FORWARD_CACHE_HITS_TOTAL                            "mod_k8s_forward_cache_hits_total"
#define MOD_K8S_METRIC_FORWARD_CACHE_MISSES_TOTAL                          "mod_k8s_forward_cache_misses_total"
#define MOD_K8S_METRIC_FORWARD_CACHE_SIZE_BYTES                            "mod_k8s_forward_cache_size_bytes"
#define MOD_K8S_METRIC_FORWARD_DROPPED_TOTAL                               "mod_k8s_forward_dropped_total"
#define MOD_K8S_METRIC_FORWARD_FAILOVERS_TOTAL                             "mod_k8s_forward_failovers_total"
#define MOD_K8S_METRIC_FORWARD_FAILURES_TOTAL                              "mod_k8s_forward_failures_total"
#define MOD_K8S_METRIC_FORWARD_KEPT_TIMEOUTS_TOTAL                         "mod_k8s_forward_kept_timeouts_total"
#define MOD_K8S_METRIC_FORWARD_LOOPS_TOTAL                                 "mod_k8s_forward_loops_total"
#define MOD_K8S_METRIC_FORWARD_REQUESTS_TOTAL                              "mod_k8s_forward_requests_total"
#define MOD_K8S_METRIC_FORWARD_RESPONSES_TOTAL                             "mod_k8s_forward_responses_total"
#define MOD_K8S_METRIC_FORWARD_TIMEOUTS_TOTAL                              "mod_k8s_forward_timeouts_total"
#define MOD_K8S_METRIC_FORWARD_UPSTREAM_FAILURES_TOTAL                     "mod_k8s_forward_upstream_failures_total"
#define MOD_K8S_METRIC_FORWARD_UPSTREAM_HEALTHY                            "mod_k8s_forward_upstream_healthy"
#define MOD_K8S_METRIC_FORWARD_UPSTREAM_REQUESTS_TOTAL                     "mod_k8s_forward_upstream_requests_total"
#define MOD_K8S_METRIC_FORWARD_UPSTREAM_RESPONSES_TOTAL                    "mod_k8s_forward_upstream_responses_total"
#define MOD_K8S_METRIC_FORWARD_UPSTREAM_TIMEOUTS_TOTAL                     "mod_k8s_forward_upstream_timeouts_total"
#define MOD_K8S_METRIC_FORWARD_WAITING_CLIENTS                             "mod_k8s_forward_waiting_clients"
#define MOD_K8S_METRIC_LAMEDUCK                                            "mod_k8s_lameduck"
#define MOD_K8S_METRIC_LAST_EVENT_AGE_SECONDS                              "mod_k8s_last_event_age_seconds"
#define MOD_K8S_METRIC_OBJECTS                                             "mod_k8s_objects"
#define MOD_K8S_METRIC_READY                                               "mod_k8s_ready"
#define MOD_K8S_METRIC_RECORDS                                             "mod_k8s_records"
#define MOD_K8S_METRIC_RECORDS_CAPPED                                      "mod_k8s_records_capped"
#define MOD_K8S_METRIC_RESYNCS_TOTAL                                       "mod_k8s_resyncs_total"
#define MOD_K8S_METRIC_SERVICES                                            "mod_k8s_services"
#define MOD_K8S_METRIC_SERVING                                             "mod_k8s_serving"
#define MOD_K8S_METRIC_SHARE_CAPACITY                                      "mod_k8s_share_capacity"
#define MOD_K8S_METRIC_SHARE_LIMIT                                         "mod_k8s_share_limit"
#define MOD_K8S_METRIC_SHARE_REFUSED_TOTAL                                 "mod_k8s_share_refused_total"
#define MOD_K8S_METRIC_SHARE_TENANTS                                       "mod_k8s_share_tenants"
#define MOD_K8S_METRIC_SHARE_USED                                          "mod_k8s_share_used"
#define MOD_K8S_METRIC_SNAPSHOT_LOADED_OBJECTS                             "mod_k8s_snapshot_loaded_objects"
#define MOD_K8S_METRIC_SNAPSHOT_REFUSED_TOTAL                              "mod_k8s_snapshot_refused_total"
#define MOD_K8S_METRIC_SNAPSHOT_STALE                                      "mod_k8s_snapshot_stale"
#define MOD_K8S_METRIC_SNAPSHOT_WRITE_ERRORS_TOTAL                         "mod_k8s_snapshot_write_errors_total"
#define MOD_K8S_METRIC_SNAPSHOT_WRITES_TOTAL                               "mod_k8s_snapshot_writes_total"
#define MOD_K8S_METRIC_TABLE_BYTES                                         "mod_k8s_table_bytes"
#define MOD_K8S_METRIC_WATCH_RESTARTS_TOTAL                                "mod_k8s_watch_restarts_total"
#define MOD_K8S_METRIC_WATCHER_ROUND_SECONDS                               "mod_k8s_watcher_round_seconds"

/* CoreDNS's series, under CoreDNS's names and labels, so its dashboards work unchanged. */
#define MOD_K8S_METRIC_COREDNS_BUILD_INFO                                  "coredns_build_info"
#define MOD_K8S_METRIC_COREDNS_CACHE_ENTRIES                               "coredns_cache_entries"
#define MOD_K8S_METRIC_COREDNS_CACHE_HITS_TOTAL                            "coredns_cache_hits_total"
#define MOD_K8S_METRIC_COREDNS_CACHE_MISSES_TOTAL                          "coredns_cache_misses_total"
#define MOD_K8S_METRIC_COREDNS_DNS_DO_REQUESTS_TOTAL                       "coredns_dns_do_requests_total"
#define MOD_K8S_METRIC_COREDNS_DNS_REQUEST_DURATION_SECONDS                "coredns_dns_request_duration_seconds"
#define MOD_K8S_METRIC_COREDNS_DNS_REQUEST_SIZE_BYTES                      "coredns_dns_request_size_bytes"
#define MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL                          "coredns_dns_requests_total"
#define MOD_K8S_METRIC_COREDNS_DNS_RESPONSE_SIZE_BYTES                     "coredns_dns_response_size_bytes"
#define MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL                         "coredns_dns_responses_total"
#define MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_BROKEN_TOTAL            "coredns_forward_healthcheck_broken_total"
#define MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_FAILURES_TOTAL          "coredns_forward_healthcheck_failures_total"
#define MOD_K8S_METRIC_COREDNS_FORWARD_REQUEST_DURATION_SECONDS            "coredns_forward_request_duration_seconds"
#define MOD_K8S_METRIC_COREDNS_FORWARD_REQUESTS_TOTAL                      "coredns_forward_requests_total"
#define MOD_K8S_METRIC_COREDNS_FORWARD_RESPONSES_TOTAL                     "coredns_forward_responses_total"
#define MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_DURATION_SECONDS             "coredns_health_request_duration_seconds"
#define MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_FAILURES_TOTAL               "coredns_health_request_failures_total"
#define MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS "coredns_kubernetes_dns_programming_duration_seconds"
