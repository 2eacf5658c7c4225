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
 * Decoding of API objects and watch events (module/kinds/objects.c).
 * JSON samples are the shapes of the API reference (k8s_api.md, sections 1.5,
 * 1.7, 2.1-2.6), written with single quotes for readability: q() turns them
 * into JSON.
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <libknot/errcode.h>

#include "api/events.h"
#include "lib/jsonstrict.h"
#include "kinds/objects.h"
#include "kinds/kind_priv.h"
#include "api/reflector.h"
#include "lib/rfc3339.h"

/* --- samples ------------------------------------------------------------------- */

static const char *SVC_DUAL =
	"{'kind':'Service','apiVersion':'v1',"
	" 'metadata':{'name':'web','namespace':'shop','uid':'3b0c6f1e-9a1d-4c0e-8d0f-6c2b5f1a7e10',"
	"  'resourceVersion':'48211','creationTimestamp':'2026-01-10T09:00:00Z','labels':{'app':'web'}},"
	" 'spec':{'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080},"
	"   {'name':'grpc','protocol':'TCP','appProtocol':'kubernetes.io/h2c','port':9090,'targetPort':'grpc'}],"
	"  'selector':{'app':'web'},'clusterIP':'10.96.12.34','clusterIPs':['10.96.12.34','fd00:10:96::1234'],"
	"  'type':'ClusterIP','sessionAffinity':'None','ipFamilies':['IPv4','IPv6'],'ipFamilyPolicy':'PreferDualStack',"
	"  'internalTrafficPolicy':'Cluster'},"
	" 'status':{'loadBalancer':{}}}";

static const char *SVC_HEADLESS =
	"{'kind':'Service','apiVersion':'v1',"
	" 'metadata':{'name':'db','namespace':'shop','uid':'9f1e','resourceVersion':'48300',"
	"  'creationTimestamp':'2026-01-10T09:05:00Z'},"
	" 'spec':{'ports':[{'name':'pg','protocol':'TCP','port':5432,'targetPort':5432}],'selector':{'app':'db'},"
	"  'clusterIP':'None','clusterIPs':['None'],'type':'ClusterIP','sessionAffinity':'None',"
	"  'publishNotReadyAddresses':true,'ipFamilies':['IPv4'],'ipFamilyPolicy':'SingleStack',"
	"  'internalTrafficPolicy':'Cluster'},"
	" 'status':{'loadBalancer':{}}}";

static const char *SVC_EXTERNAL =
	"{'kind':'Service','apiVersion':'v1','metadata':{'name':'ext','namespace':'shop','resourceVersion':'48310',"
	"  'uid':'u','creationTimestamp':'2026-01-10T09:00:00Z'},"
	" 'spec':{'type':'ExternalName','externalName':'db.example.com','sessionAffinity':'None'},"
	" 'status':{'loadBalancer':{}}}";

static const char *SLICE_DB =
	"{'kind':'EndpointSlice','apiVersion':'discovery.k8s.io/v1',"
	" 'metadata':{'name':'db-x7k2p','generateName':'db-','namespace':'shop','uid':'u','resourceVersion':'48320',"
	"  'generation':4,'creationTimestamp':'2026-01-10T09:05:01Z',"
	"  'labels':{'app':'db','endpointslice.kubernetes.io/managed-by':'endpointslice-controller.k8s.io',"
	"   'kubernetes.io/service-name':'db','service.kubernetes.io/headless':''},"
	"  'annotations':{'endpoints.kubernetes.io/last-change-trigger-time':'2026-01-10T09:06:12Z'},"
	"  'ownerReferences':[{'apiVersion':'v1','kind':'Service','name':'db','uid':'9f1e','controller':true,"
	"   'blockOwnerDeletion':true}]},"
	" 'addressType':'IPv4',"
	" 'endpoints':["
	"  {'addresses':['10.244.1.17'],'conditions':{'ready':true,'serving':true,'terminating':false},"
	"   'hostname':'db-0','targetRef':{'kind':'Pod','namespace':'shop','name':'db-0','uid':'u'},"
	"   'nodeName':'node-a','zone':'zone-1'},"
	"  {'addresses':['10.244.2.9'],'conditions':{'ready':false,'serving':true,'terminating':true},"
	"   'hostname':'db-1','targetRef':{'kind':'Pod','namespace':'shop','name':'db-1','uid':'u'},"
	"   'nodeName':'node-b'}],"
	" 'ports':[{'name':'pg','protocol':'TCP','port':5432}]}";

static const char *SLICE_MCS =
	"{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice',"
	" 'metadata':{'name':'db-cluster-b-4kq9z','namespace':'shop','resourceVersion':'50140','uid':'u',"
	"  'creationTimestamp':'2026-01-10T09:00:00Z',"
	"  'labels':{'multicluster.kubernetes.io/service-name':'db','multicluster.kubernetes.io/source-cluster':'cluster-b',"
	"   'endpointslice.kubernetes.io/managed-by':'mcs-controller.example.org'}},"
	" 'addressType':'IPv4',"
	" 'endpoints':[{'addresses':['10.245.3.4'],'conditions':{'ready':true},'hostname':'db-0'}],"
	" 'ports':[{'name':'pg','protocol':'TCP','port':5432}]}";

static const char *POD_DB =
	"{'kind':'Pod','apiVersion':'v1',"
	" 'metadata':{'name':'db-0','namespace':'shop','uid':'u','resourceVersion':'48290',"
	"  'creationTimestamp':'2026-01-10T09:00:00Z','labels':{'app':'db'}},"
	" 'spec':{'containers':[{'name':'pg','image':'postgres:16'}],'hostname':'db-0','subdomain':'db','nodeName':'node-a'},"
	" 'status':{'phase':'Running','podIP':'10.244.1.17','podIPs':[{'ip':'10.244.1.17'},{'ip':'fd00:10:244:1::11'}],"
	"  'conditions':[{'type':'Ready','status':'True'}]}}";

static const char *NS_SHOP =
	"{'kind':'Namespace','apiVersion':'v1',"
	" 'metadata':{'name':'shop','uid':'u','resourceVersion':'120','creationTimestamp':'2026-01-10T09:00:00Z',"
	"  'labels':{'kubernetes.io/metadata.name':'shop'}},"
	" 'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}}";

static const char *IMPORT_WEB =
	"{'apiVersion':'multicluster.x-k8s.io/v1alpha1','kind':'ServiceImport',"
	" 'metadata':{'name':'web','namespace':'shop','uid':'u','resourceVersion':'50112','generation':1,"
	"  'creationTimestamp':'2026-01-10T09:00:00Z'},"
	" 'spec':{'ips':['10.42.0.10'],'type':'ClusterSetIP','ports':[{'name':'http','protocol':'TCP','port':80}],"
	"  'sessionAffinity':'None','ipFamilies':['IPv4']},"
	" 'status':{'clusters':[{'cluster':'cluster-a'},{'cluster':'cluster-b'}]}}";

/* kube-dns's ConfigMap as kubectl writes it (its values JSON text), and k3s's NodeHosts. */
static const char *KUBE_DNS_CM =
	"{'kind':'ConfigMap','apiVersion':'v1','metadata':{'name':'kube-dns','namespace':'kube-system',"
	"'resourceVersion':'812','labels':{'addonmanager.kubernetes.io/mode':'EnsureExists'}},"
	"'data':{'stubDomains':'{\\'corp.example\\': [\\'10.150.0.1\\']}',"
	"'upstreamNameservers':'[\\'10.0.0.2\\']','NodeHosts':'192.168.1.10 node-1\\n'},"
	"'binaryData':{'blob':'AAEC'}}";

static const char *CLUSTER_ID =
	"{'apiVersion':'about.k8s.io/v1alpha1','kind':'ClusterProperty',"
	" 'metadata':{'name':'cluster.clusterset.k8s.io','resourceVersion':'77','uid':'u',"
	"  'creationTimestamp':'2026-01-10T09:00:00Z'},"
	" 'spec':{'value':'cluster-a'}}";

static const char *NODE_B =
	"{'kind':'Node','apiVersion':'v1',"
	" 'metadata':{'name':'node-b','uid':'u','resourceVersion':'88','creationTimestamp':'2026-01-10T08:00:00Z',"
	"  'labels':{'kubernetes.io/hostname':'node-b','kubernetes.io/os':'linux',"
	"   'topology.kubernetes.io/region':'eu-west1','topology.kubernetes.io/zone':'eu-west1-b'}},"
	" 'spec':{'podCIDR':'10.244.1.0/24','podCIDRs':['10.244.1.0/24']},"
	" 'status':{'conditions':[{'type':'Ready','status':'True','lastHeartbeatTime':'2026-01-10T09:00:00Z'}],"
	"  'addresses':[{'type':'InternalIP','address':'192.168.10.12'}],"
	"  'nodeInfo':{'kubeletVersion':'v1.32.4'}}}";

/* --- helpers ------------------------------------------------------------------- */

/*! Single-quoted sample to JSON (the samples hold no apostrophes). */
static char *q(const char *sq)
{
	char *s = strdup(sq);
	assert_non_null(s);
	for (char *c = s; *c != '\0'; c++) {
		if (*c == '\'') {
			*c = '"';
		}
	}
	return s;
}

/*! \a sq with the first occurrence of \a from replaced by \a to (which must occur). */
static char *edit(const char *sq, const char *from, const char *to)
{
	const char *at = strstr(sq, from);
	assert_non_null(at);
	size_t head = at - sq;
	size_t len = strlen(sq) - strlen(from) + strlen(to);
	char *out = malloc(len + 1);
	assert_non_null(out);
	memcpy(out, sq, head);
	strcpy(out + head, to);
	strcat(out, at + strlen(from));
	return out;
}

static int decode_raw(k8s_kind_t kind, const char *text, size_t len, k8s_object_t **obj)
{
	char err[128] = "";
	*obj = (k8s_object_t *)0x1;
	int ret = k8s_object_decode(kind, text, len, obj, err, sizeof(err));
	if (ret == KNOT_EOK) {
		assert_non_null(*obj);
		assert_int_equal((*obj)->kind, kind);
	} else {
		assert_null(*obj);
		assert_true(err[0] != '\0');
	}
	return ret;
}

/*! Decodes a single-quoted sample that must be valid. */
static k8s_object_t *decode_ok(k8s_kind_t kind, const char *sq)
{
	char *json = q(sq);
	k8s_object_t *obj = NULL;
	int ret = decode_raw(kind, json, strlen(json), &obj);
	free(json);
	assert_int_equal(ret, KNOT_EOK);
	return obj;
}

/*! Decodes a single-quoted sample that must fail; returns the error. */
static int decode_fails(k8s_kind_t kind, const char *sq)
{
	char *json = q(sq);
	k8s_object_t *obj = NULL;
	int ret = decode_raw(kind, json, strlen(json), &obj);
	free(json);
	assert_int_not_equal(ret, KNOT_EOK);
	return ret;
}

/*! Decodes \a sq edited once; frees the edit. */
static k8s_object_t *decode_edit(k8s_kind_t kind, const char *sq, const char *from, const char *to)
{
	char *text = edit(sq, from, to);
	k8s_object_t *obj = decode_ok(kind, text);
	free(text);
	return obj;
}

static int decode_edit_fails(k8s_kind_t kind, const char *sq, const char *from, const char *to)
{
	char *text = edit(sq, from, to);
	int ret = decode_fails(kind, text);
	free(text);
	return ret;
}

static void assert_ip(const k8s_ip_t *ip, const char *text)
{
	uint8_t bytes[16] = { 0 };
	int family = (strchr(text, ':') != NULL) ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(family, text, bytes), 1);
	assert_int_equal(ip->family, family);
	assert_memory_equal(ip->bytes, bytes, (family == AF_INET) ? 4 : 16);
}

static void assert_port(const k8s_port_t *port, const char *name, uint16_t number, k8s_proto_t proto)
{
	if (name == NULL) {
		assert_null(port->name);
	} else {
		assert_non_null(port->name);
		assert_string_equal(port->name, name);
	}
	assert_int_equal(port->port, number);
	assert_int_equal(port->proto, proto);
}

#define SVC(o) ((k8s_service_t *)(o))
#define SLICE(o) ((k8s_slice_t *)(o))
#define POD(o) ((k8s_pod_t *)(o))
#define IMPORT(o) ((k8s_serviceimport_t *)(o))
#define PROP(o) ((k8s_clusterproperty_t *)(o))
#define NODE(o) ((k8s_node_t *)(o))

/* --- Service ------------------------------------------------------------------- */

static void service_dual_stack_keeps_both_cluster_ips_and_ports(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_SERVICE, SVC_DUAL);
	k8s_service_t *svc = SVC(obj);
	assert_string_equal(obj->ns, "shop");
	assert_string_equal(obj->name, "web");
	assert_int_equal(svc->type, K8S_SVC_CLUSTERIP);
	assert_false(svc->publish_not_ready);
	assert_int_equal(svc->ip_count, 2);
	assert_ip(&svc->ips[0], "10.96.12.34");
	assert_ip(&svc->ips[1], "fd00:10:96::1234");
	assert_null(svc->external_name);
	assert_int_equal(svc->port_count, 2);
	assert_port(&svc->ports[0], "http", 80, K8S_PROTO_TCP);
	assert_port(&svc->ports[1], "grpc", 9090, K8S_PROTO_TCP);
	k8s_object_free(obj);
}

static void service_without_cluster_ips_falls_back_to_cluster_ip(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL,
	                                "'clusterIPs':['10.96.12.34','fd00:10:96::1234'],", "");
	assert_int_equal(SVC(obj)->ip_count, 1);
	assert_ip(&SVC(obj)->ips[0], "10.96.12.34");
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'clusterIPs':['10.96.12.34','fd00:10:96::1234']",
	                  "'clusterIPs':null");
	assert_int_equal(SVC(obj)->ip_count, 1);
	k8s_object_free(obj);
}

static void service_keeps_at_most_two_valid_cluster_ips(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL,
	                                "['10.96.12.34','fd00:10:96::1234']",
	                                "['10.96.999.1','10.96.0.1',7,'fd00::1','fd00::2']");
	assert_int_equal(SVC(obj)->ip_count, 2);
	assert_ip(&SVC(obj)->ips[0], "10.96.0.1");
	assert_ip(&SVC(obj)->ips[1], "fd00::1");
	k8s_object_free(obj);
}

static void service_headless_is_cluster_ip_none(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_SERVICE, SVC_HEADLESS);
	k8s_service_t *svc = SVC(obj);
	assert_int_equal(svc->type, K8S_SVC_HEADLESS);
	assert_int_equal(svc->ip_count, 0);
	assert_true(svc->publish_not_ready);
	assert_int_equal(svc->port_count, 1);
	assert_port(&svc->ports[0], "pg", 5432, K8S_PROTO_TCP);
	k8s_object_free(obj);

	// Old servers send clusterIP only.
	obj = decode_edit(K8S_SERVICE, SVC_HEADLESS, "'clusterIPs':['None'],", "");
	assert_int_equal(SVC(obj)->type, K8S_SVC_HEADLESS);
	k8s_object_free(obj);

	// The type defaults to ClusterIP.
	obj = decode_edit(K8S_SERVICE, SVC_HEADLESS, "'type':'ClusterIP',", "");
	assert_int_equal(SVC(obj)->type, K8S_SVC_HEADLESS);
	k8s_object_free(obj);
}

static void service_nodeport_and_loadbalancer_are_cluster_ip(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'ClusterIP'", "'NodePort'");
	assert_int_equal(SVC(obj)->type, K8S_SVC_CLUSTERIP);
	assert_int_equal(SVC(obj)->ip_count, 2);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'ClusterIP'", "'LoadBalancer'");
	assert_int_equal(SVC(obj)->type, K8S_SVC_CLUSTERIP);
	k8s_object_free(obj);
}

static void a_load_balancer_keeps_its_first_two_ingress_ips_and_they_change_the_digest(void **state)
{
	k8s_object_t *plain = decode_ok(K8S_SERVICE, SVC_DUAL);
	assert_int_equal(SVC(plain)->ingress_count, 0);
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'loadBalancer':{}",
	                                "'loadBalancer':{'ingress':[{'hostname':'lb.example.com'},"
	                                "{'ip':'104.32.64.128','ipMode':'VIP'},{'ip':'2001:db8::1'},"
	                                "{'ip':'104.32.64.129'}]}");
	assert_int_equal(SVC(obj)->ingress_count, 2);
	assert_ip(&SVC(obj)->ingress[0], "104.32.64.128");
	assert_ip(&SVC(obj)->ingress[1], "2001:db8::1");
	assert_true(k8s_object_digest_of(obj) != k8s_object_digest_of(plain));
	k8s_object_free(obj);
	k8s_object_free(plain);
}

static void external_addresses_are_the_specs_then_the_load_balancers(void **state)
{
	// As CoreDNS's ExternalIPs (k8s_external): spec.externalIPs first, then ingress IPs.
	k8s_object_t *plain = decode_ok(K8S_SERVICE, SVC_DUAL);
	assert_int_equal(SVC(plain)->external_count, 0);
	assert_null(SVC(plain)->externals);
	char *text = edit(SVC_DUAL, "'loadBalancer':{}", "'loadBalancer':{'ingress':[{'hostname':'lb.example.com'},"
	                  "{'ip':'104.32.64.128'},{'ip':'2001:db8::1'}]}");
	k8s_object_t *obj = decode_edit(K8S_SERVICE, text, "'type':'ClusterIP'",
	                                "'type':'LoadBalancer','externalIPs':['192.0.2.7','bad','192.0.2.8']");
	free(text);
	assert_int_equal(SVC(obj)->external_count, 4);
	assert_ip(&SVC(obj)->externals[0], "192.0.2.7");
	assert_ip(&SVC(obj)->externals[1], "192.0.2.8");
	assert_ip(&SVC(obj)->externals[2], "104.32.64.128");
	assert_ip(&SVC(obj)->externals[3], "2001:db8::1");
	assert_true(k8s_object_digest_of(obj) != k8s_object_digest_of(plain));
	k8s_object_free(obj);
	// A headless service (k8s_external's headless option) keeps them too.
	obj = decode_edit(K8S_SERVICE, SVC_HEADLESS, "'clusterIPs':['None']",
	                  "'clusterIPs':['None'],'externalIPs':['192.0.2.9']");
	assert_int_equal(SVC(obj)->external_count, 1);
	k8s_object_free(obj);
	k8s_object_free(plain);

	// At most K8S_EXTERNAL_MAX.
	char many[8192] = "";
	for (int i = 0; i < K8S_EXTERNAL_MAX + 3; i++) {
		sprintf(many + strlen(many), "%s'192.0.2.%d'", i > 0 ? "," : "", i);
	}
	char to[8300];
	snprintf(to, sizeof(to), "'type':'ClusterIP','externalIPs':[%s]", many);
	obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'type':'ClusterIP'", to);
	assert_int_equal(SVC(obj)->external_count, K8S_EXTERNAL_MAX);
	k8s_object_free(obj);
}

static uint64_t digest_of(k8s_kind_t kind, const char *sq);
static uint64_t digest_edit(k8s_kind_t kind, const char *sq, const char *from, const char *to);

static void slice_endpoint_zone_is_kept_lowercase_when_a_dns_name(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_ENDPOINTSLICE, SLICE_DB);
	assert_string_equal(SLICE(obj)->endpoints[0].zone, "zone-1");
	assert_null(SLICE(obj)->endpoints[1].zone);
	k8s_object_free(obj);
	obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'zone-1'", "'Corp.Example.COM'");
	assert_string_equal(SLICE(obj)->endpoints[0].zone, "corp.example.com");
	k8s_object_free(obj);
	// One no query can name: absent (a label of 64, an underscore, an empty label).
	const char *bad[] = { "'zone_1'", "'a..b'", "''",
	                      "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'zone-1'", bad[i]);
		assert_null(SLICE(obj)->endpoints[0].zone);
		k8s_object_free(obj);
	}
	// The zone is digested: zonal names answer by it.
	assert_int_not_equal(digest_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'zone-1'", "'zone-2'"),
	                     digest_of(K8S_ENDPOINTSLICE, SLICE_DB));
}

static void service_externalname_keeps_lowercase_target(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_SERVICE, SVC_EXTERNAL);
	assert_int_equal(SVC(obj)->type, K8S_SVC_EXTERNALNAME);
	assert_int_equal(SVC(obj)->ip_count, 0);
	assert_string_equal(SVC(obj)->external_name, "db.example.com");
	assert_int_equal(SVC(obj)->port_count, 0);
	assert_null(SVC(obj)->ports);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICE, SVC_EXTERNAL, "db.example.com", "DB.Example.COM.");
	assert_string_equal(SVC(obj)->external_name, "db.example.com");
	k8s_object_free(obj);
}

static void service_externalname_invalid_target_is_null(void **state)
{
	const char *bad[] = {
		"db..example.com", "-db.example.com", "db_1.example.com", "db.example.com..",
		"db example.com", ".", "", "db.\\u0000.com", "d\\u00e9.example.com",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", // 64-byte label
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_EXTERNAL, "db.example.com", bad[i]);
		assert_int_equal(SVC(obj)->type, K8S_SVC_EXTERNALNAME);
		assert_null(SVC(obj)->external_name);
		k8s_object_free(obj);
	}

	// 254 bytes is above the limit, 253 is not.
	char name[300];
	memset(name, 'a', sizeof(name));
	for (int i = 63; i < 253; i += 64) {
		name[i] = '.';
	}
	name[253] = '\0';
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_EXTERNAL, "db.example.com", name);
	assert_non_null(SVC(obj)->external_name);
	assert_int_equal(strlen(SVC(obj)->external_name), 253);
	k8s_object_free(obj);
	name[253] = 'a';
	name[254] = '\0';
	obj = decode_edit(K8S_SERVICE, SVC_EXTERNAL, "db.example.com", name);
	assert_null(SVC(obj)->external_name);
	k8s_object_free(obj);
}

static void service_publish_not_ready_from_spec(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'type':'ClusterIP',",
	                                "'type':'ClusterIP','publishNotReadyAddresses':true,");
	assert_true(SVC(obj)->publish_not_ready);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICE, SVC_HEADLESS, "'publishNotReadyAddresses':true",
	                  "'publishNotReadyAddresses':false");
	assert_false(SVC(obj)->publish_not_ready);
	k8s_object_free(obj);
}

static void service_publish_not_ready_from_tolerate_unready_annotation(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'labels':{'app':'web'}",
	        "'labels':{'app':'web'},"
	        "'annotations':{'service.alpha.kubernetes.io/tolerate-unready-endpoints':'true'}");
	assert_true(SVC(obj)->publish_not_ready);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'labels':{'app':'web'}",
	        "'labels':{'app':'web'},"
	        "'annotations':{'service.alpha.kubernetes.io/tolerate-unready-endpoints':'false'}");
	assert_false(SVC(obj)->publish_not_ready);
	k8s_object_free(obj);
}

static void service_port_protocol_defaults_to_tcp_and_unknown_is_skipped(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL,
	        "'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080},",
	        "'ports':[{'name':'dns','protocol':'UDP','port':53},{'name':'s','protocol':'SCTP','port':9},"
	        "{'name':'h3','protocol':'QUIC','port':443},{'name':'t','protocol':'tcp','port':1},"
	        "{'name':'plain','port':8},{'name':'n','protocol':null,'port':7},");
	k8s_service_t *svc = SVC(obj);
	assert_int_equal(svc->port_count, 5);
	assert_port(&svc->ports[0], "dns", 53, K8S_PROTO_UDP);
	assert_port(&svc->ports[1], "s", 9, K8S_PROTO_SCTP);
	assert_port(&svc->ports[2], "plain", 8, K8S_PROTO_TCP);
	assert_port(&svc->ports[3], "n", 7, K8S_PROTO_TCP);
	assert_port(&svc->ports[4], "grpc", 9090, K8S_PROTO_TCP);
	k8s_object_free(obj);
}

static void service_port_number_outside_range_is_zero(void **state)
{
	// An integer beyond 64 bits too: the tape clamps it (json-c 0.17 refused it in strict
	// mode, 0.16 clamped it; the objects are no longer read by json-c).
	const char *numbers[] = { "0", "65536", "-1", "'80'", "80.5", "null", "4294967376",
	                          "99999999999999999999999" };
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		char to[64];
		snprintf(to, sizeof(to), "'port':%s,", numbers[i]);
		k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'port':80,", to);
		assert_int_equal(SVC(obj)->port_count, 2);
		assert_port(&SVC(obj)->ports[0], "http", 0, K8S_PROTO_TCP);
		k8s_object_free(obj);
	}
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'port':80,", "'port':65535,");
	assert_int_equal(SVC(obj)->ports[0].port, 65535);
	k8s_object_free(obj);
}

static void service_port_invalid_name_is_null(void **state)
{
	const char *names[] = { "'HTTP'", "'h.ttp'", "'-http'", "'http-'", "''", "'h ttp'", "7",
	                        "'h\\u0000'", "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char to[128];
		snprintf(to, sizeof(to), "'name':%s,'protocol':'TCP','port':80", names[i]);
		k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL,
		                                "'name':'http','protocol':'TCP','port':80", to);
		assert_port(&SVC(obj)->ports[0], NULL, 80, K8S_PROTO_TCP);
		k8s_object_free(obj);
	}
}

static void service_without_ports_has_none(void **state)
{
	const char *lists[] = { "null", "[]", "{}", "'80'" };
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char to[32];
		snprintf(to, sizeof(to), "'ports':%s,", lists[i]);
		k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_HEADLESS,
		        "'ports':[{'name':'pg','protocol':'TCP','port':5432,'targetPort':5432}],", to);
		assert_int_equal(SVC(obj)->port_count, 0);
		assert_null(SVC(obj)->ports);
		k8s_object_free(obj);
	}
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_HEADLESS,
	        "'ports':[{'name':'pg','protocol':'TCP','port':5432,'targetPort':5432}],", "");
	assert_int_equal(SVC(obj)->port_count, 0);
	k8s_object_free(obj);
}

/* --- EndpointSlice ------------------------------------------------------------- */

static void slice_sample_decodes_endpoints_ports_and_labels(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_ENDPOINTSLICE, SLICE_DB);
	k8s_slice_t *slice = SLICE(obj);
	assert_string_equal(obj->ns, "shop");
	assert_string_equal(obj->name, "db-x7k2p");
	assert_string_equal(slice->service, "db");
	assert_null(slice->mcs_service);
	assert_null(slice->source_cluster);
	assert_int_equal(slice->family, AF_INET);
	assert_int_equal(slice->trigger_time_ns, 1768035972000000000LL); // 2026-01-10T09:06:12Z
	assert_int_equal(slice->endpoint_count, 2);
	assert_ip(&slice->endpoints[0].ip, "10.244.1.17");
	assert_true(slice->endpoints[0].ready);
	assert_string_equal(slice->endpoints[0].hostname, "db-0");
	assert_string_equal(slice->endpoints[0].target, "db-0");
	assert_ip(&slice->endpoints[1].ip, "10.244.2.9");
	assert_false(slice->endpoints[1].ready);
	assert_string_equal(slice->endpoints[1].hostname, "db-1");
	assert_string_equal(slice->endpoints[1].target, "db-1");
	assert_int_equal(slice->port_count, 1);
	assert_port(&slice->ports[0], "pg", 5432, K8S_PROTO_TCP);
	k8s_object_free(obj);
}

static void slice_multi_address_endpoint_is_flattened_sharing_names(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'addresses':['10.244.1.17']",
	                                "'addresses':['10.244.1.17','10.244.1.18','bogus','10.244.1.19']");
	k8s_slice_t *slice = SLICE(obj);
	assert_int_equal(slice->endpoint_count, 4);
	assert_ip(&slice->endpoints[0].ip, "10.244.1.17");
	assert_ip(&slice->endpoints[1].ip, "10.244.1.18");
	assert_ip(&slice->endpoints[2].ip, "10.244.1.19");
	assert_ip(&slice->endpoints[3].ip, "10.244.2.9");
	for (int i = 0; i < 3; i++) {
		assert_true(slice->endpoints[i].ready);
		assert_string_equal(slice->endpoints[i].hostname, "db-0");
		// One copy of the names per endpoint, not per address.
		assert_ptr_equal(slice->endpoints[i].hostname, slice->endpoints[0].hostname);
		assert_ptr_equal(slice->endpoints[i].target, slice->endpoints[0].target);
	}
	assert_string_equal(slice->endpoints[3].hostname, "db-1");
	k8s_object_free(obj);
}

static void slice_ready_absent_or_null_means_ready(void **state)
{
	const char *conditions[] = {
		"'conditions':{'serving':true,'terminating':false}",
		"'conditions':{'ready':null,'serving':true,'terminating':false}",
		"'conditions':null", "'conditions':{}", "'conditions':{'ready':'false'}",
	};
	for (size_t i = 0; i < sizeof(conditions) / sizeof(conditions[0]); i++) {
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB,
		        "'conditions':{'ready':false,'serving':true,'terminating':true}", conditions[i]);
		assert_true(SLICE(obj)->endpoints[1].ready);
		k8s_object_free(obj);
	}
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB,
	        "'conditions':{'ready':false,'serving':true,'terminating':true},", "");
	assert_true(SLICE(obj)->endpoints[1].ready);
	k8s_object_free(obj);
}

static void slice_ready_false_is_not_ready(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_ENDPOINTSLICE, SLICE_DB);
	assert_false(SLICE(obj)->endpoints[1].ready);
	k8s_object_free(obj);
}

static void slice_fqdn_and_unknown_address_types_have_no_family_and_no_endpoints(void **state)
{
	const char *types[] = { "'FQDN'", "'IPv5'", "''", "null", "4" };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		char to[32];
		snprintf(to, sizeof(to), "'addressType':%s", types[i]);
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'addressType':'IPv4'", to);
		assert_int_equal(SLICE(obj)->family, 0);
		assert_int_equal(SLICE(obj)->endpoint_count, 0);
		assert_null(SLICE(obj)->endpoints);
		assert_int_equal(SLICE(obj)->port_count, 1);
		k8s_object_free(obj);
	}
}

static void slice_addresses_of_the_other_family_are_skipped(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'addresses':['10.244.1.17']",
	                                "'addresses':['fd00::1','10.244.1.17']");
	assert_int_equal(SLICE(obj)->endpoint_count, 2);
	assert_ip(&SLICE(obj)->endpoints[0].ip, "10.244.1.17");
	k8s_object_free(obj);

	char *v6 = edit(SLICE_DB, "'IPv4'", "'IPv6'");
	obj = decode_edit(K8S_ENDPOINTSLICE, v6, "'addresses':['10.244.1.17']",
	                  "'addresses':['fd00::1','10.244.1.17']");
	assert_int_equal(SLICE(obj)->family, AF_INET6);
	assert_int_equal(SLICE(obj)->endpoint_count, 1);
	assert_ip(&SLICE(obj)->endpoints[0].ip, "fd00::1");
	k8s_object_free(obj);
	free(v6);
}

static void slice_ipv6_forms_are_parsed_and_invalid_ones_skipped(void **state)
{
	char *v6 = edit(SLICE_DB, "'IPv4'", "'IPv6'");
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, v6, "'addresses':['10.244.1.17']",
	        "'addresses':['fd00:10:244:1::11','FD00:0:0:0:0:0:0:2','::ffff:10.1.2.3','::1',"
	        "'fe80::1%eth0','fd00::1::2','fd00:10:244:1:0:0:0:0:1','10.1.2.3',' fd00::3','fd00::4 ',"
	        "'fd00::5\\u0000','::']");
	k8s_slice_t *slice = SLICE(obj);
	assert_int_equal(slice->endpoint_count, 5);
	assert_ip(&slice->endpoints[0].ip, "fd00:10:244:1::11");
	assert_ip(&slice->endpoints[1].ip, "fd00::2");
	assert_ip(&slice->endpoints[2].ip, "::ffff:10.1.2.3");
	assert_ip(&slice->endpoints[3].ip, "::1");
	assert_ip(&slice->endpoints[4].ip, "::");
	k8s_object_free(obj);
	free(v6);
}

static void slice_invalid_ipv4_forms_are_skipped(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'addresses':['10.244.1.17']",
	        "'addresses':['10.244.1.256','010.244.1.1','10.244.1','10.244.1.1.1','0x0a.1.1.1',"
	        "'10.244.1.17/32','',null,17,{'ip':'10.1.1.1'},'255.255.255.255']");
	assert_int_equal(SLICE(obj)->endpoint_count, 2);
	assert_ip(&SLICE(obj)->endpoints[0].ip, "255.255.255.255");
	k8s_object_free(obj);
}

static void slice_port_null_means_all_ports(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB,
	                                "'ports':[{'name':'pg','protocol':'TCP','port':5432}]",
	                                "'ports':[{'name':'','protocol':'TCP','port':null},{}]");
	assert_int_equal(SLICE(obj)->port_count, 2);
	assert_port(&SLICE(obj)->ports[0], NULL, 0, K8S_PROTO_TCP);
	assert_port(&SLICE(obj)->ports[1], NULL, 0, K8S_PROTO_TCP);
	k8s_object_free(obj);
}

static void slice_multicluster_labels_are_read(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_ENDPOINTSLICE, SLICE_MCS);
	k8s_slice_t *slice = SLICE(obj);
	assert_null(slice->service);
	assert_string_equal(slice->mcs_service, "db");
	assert_string_equal(slice->source_cluster, "cluster-b");
	assert_int_equal(slice->endpoint_count, 1);
	assert_string_equal(slice->endpoints[0].hostname, "db-0");
	assert_null(slice->endpoints[0].target);
	assert_int_equal(slice->trigger_time_ns, 0);
	k8s_object_free(obj);
}

static void slice_source_cluster_may_be_two_labels(void **state)
{
	const char *ok[][2] = {
		{ "'cluster-b.region-1'", "cluster-b.region-1" },
		{ "'Cluster-B'", "cluster-b" },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_MCS, "'cluster-b'", ok[i][0]);
		assert_string_equal(SLICE(obj)->source_cluster, ok[i][1]);
		k8s_object_free(obj);
	}
	const char *bad[] = { "'a.b.c'", "'cluster_b'", "'.b'", "'b.'", "''", "'-b'", "7", "null" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_MCS, "'cluster-b'", bad[i]);
		assert_null(SLICE(obj)->source_cluster);
		k8s_object_free(obj);
	}
}

static void slice_service_name_label_is_lowercased_or_dropped(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'kubernetes.io/service-name':'db'",
	                                "'kubernetes.io/service-name':'DB'");
	assert_string_equal(SLICE(obj)->service, "db");
	k8s_object_free(obj);

	const char *bad[] = { "'d.b'", "'d_b'", "''", "true" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char to[64];
		snprintf(to, sizeof(to), "'kubernetes.io/service-name':%s", bad[i]);
		obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'kubernetes.io/service-name':'db'", to);
		assert_null(SLICE(obj)->service);
		k8s_object_free(obj);
	}
}

static void slice_target_is_only_a_pod_name(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'kind':'Pod','namespace':'shop','name':'db-0'",
	                                "'kind':'Node','namespace':'shop','name':'db-0'");
	assert_null(SLICE(obj)->endpoints[0].target);
	assert_string_equal(SLICE(obj)->endpoints[1].target, "db-1");
	k8s_object_free(obj);

	obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'targetRef':{'kind':'Pod','namespace':'shop','name':'db-0','uid':'u'}",
	                  "'targetRef':null");
	assert_null(SLICE(obj)->endpoints[0].target);
	k8s_object_free(obj);
}

static void slice_invalid_hostname_and_target_become_null(void **state)
{
	const char *bad[] = {
		"db.0", "DB-0", "db_0", "-db", "", "db\\u00000", "d\\u00e9",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", // 64
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char from_host[] = "'hostname':'db-0'";
		char to_host[128];
		snprintf(to_host, sizeof(to_host), "'hostname':'%s'", bad[i]);
		char *text = edit(SLICE_DB, from_host, to_host);
		char to_target[128];
		snprintf(to_target, sizeof(to_target), "'name':'%s'", bad[i]);
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, text, "'name':'db-0'", to_target);
		assert_int_equal(SLICE(obj)->endpoint_count, 2);
		assert_null(SLICE(obj)->endpoints[0].hostname);
		assert_null(SLICE(obj)->endpoints[0].target);
		assert_string_equal(SLICE(obj)->endpoints[1].hostname, "db-1");
		k8s_object_free(obj);
		free(text);
	}

	// 63 characters is a label.
	const char *max = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	char to[128];
	snprintf(to, sizeof(to), "'name':'%s'", max);
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'name':'db-0'", to);
	assert_string_equal(SLICE(obj)->endpoints[0].target, max);
	k8s_object_free(obj);
}

static void slice_null_empty_and_absent_lists_are_empty(void **state)
{
	const char *forms[] = {
		"'endpoints':null,'ports':null", "'endpoints':[],'ports':[]", "'unused':0",
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char *text = edit(SLICE_DB, "'endpoints':[", "'endpoints_old':[");
		char *text2 = edit(text, "'ports':[{'name':'pg','protocol':'TCP','port':5432}]", forms[i]);
		k8s_object_t *obj = decode_ok(K8S_ENDPOINTSLICE, text2);
		assert_int_equal(SLICE(obj)->endpoint_count, 0);
		assert_null(SLICE(obj)->endpoints);
		assert_int_equal(SLICE(obj)->port_count, 0);
		assert_null(SLICE(obj)->ports);
		k8s_object_free(obj);
		free(text);
		free(text2);
	}

	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'addresses':['10.244.1.17']",
	                                "'addresses':null");
	assert_int_equal(SLICE(obj)->endpoint_count, 1);
	k8s_object_free(obj);
}

static void slice_name_may_be_a_dns_subdomain(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'db-x7k2p'", "'db.x7k2p'");
	assert_string_equal(obj->name, "db.x7k2p");
	k8s_object_free(obj);
}

/*! A name of \a n bytes: 'a's, or the \a pattern repeated and cut (for dots). */
static char *long_name(const char *pattern, size_t n)
{
	char *name = malloc(n + 1);
	assert_non_null(name);
	size_t plen = strlen(pattern);
	for (size_t i = 0; i < n; i++) {
		name[i] = pattern[i % plen];
	}
	name[n] = '\0';
	return name;
}

/*
 * Which rule the API server applies to each name the module reads, at its
 * boundaries: metadata.name of each kind, metadata.namespace. A row's name is
 * \a fill repeated to \a n bytes (then \a text, when set, instead).
 */
static void object_names_are_checked_as_the_api_server_checks_them(void **state)
{
	static const struct {
		k8s_kind_t kind;
		const char **sample;
		const char *field;  // "'name':'%s'" as in the sample, its value replaced
		const char *value;  // the sample's value
		const char *text;   // the new value, or NULL for fill x n
		const char *fill;
		size_t n;
		bool ok;
	} rows[] = {
		// Service: DNS-1035 label, or DNS-1123 label (RelaxedServiceNameValidation): both.
		{ K8S_SERVICE, &SVC_DUAL, "'name':'%s'", "web", NULL, "a", 63, true },
		{ K8S_SERVICE, &SVC_DUAL, "'name':'%s'", "web", NULL, "a", 64, false },
		{ K8S_SERVICE, &SVC_DUAL, "'name':'%s'", "web", "1web", NULL, 0, true },
		{ K8S_SERVICE, &SVC_DUAL, "'name':'%s'", "web", "w.b", NULL, 0, false },
		{ K8S_SERVICE, &SVC_DUAL, "'name':'%s'", "web", "Web", NULL, 0, false },
		// Namespace, and the namespace of a namespaced object: DNS-1123 label.
		{ K8S_NAMESPACE, &NS_SHOP, "'name':'%s'", "shop", NULL, "a", 63, true },
		{ K8S_NAMESPACE, &NS_SHOP, "'name':'%s'", "shop", NULL, "a", 64, false },
		{ K8S_NAMESPACE, &NS_SHOP, "'name':'%s'", "shop", "sh.op", NULL, 0, false },
		{ K8S_POD, &POD_DB, "'namespace':'%s'", "shop", NULL, "a", 63, true },
		{ K8S_POD, &POD_DB, "'namespace':'%s'", "shop", NULL, "a", 64, false },
		{ K8S_POD, &POD_DB, "'namespace':'%s'", "shop", "sh.op", NULL, 0, false },
		// Pod, EndpointSlice, Node, ServiceImport, ClusterProperty: DNS-1123 subdomain.
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", NULL, "a", 253, true },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", NULL, "a", 254, false },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", NULL, "abc.", 253, true },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", "db-0.", NULL, 0, false },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", "db-", NULL, 0, false },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", "Db-0", NULL, 0, false },
		{ K8S_POD, &POD_DB, "'name':'%s'", "db-0", "", NULL, 0, false },
		{ K8S_ENDPOINTSLICE, &SLICE_DB, "'name':'%s'", "db-x7k2p", NULL, "a", 253, true },
		{ K8S_ENDPOINTSLICE, &SLICE_DB, "'name':'%s'", "db-x7k2p", NULL, "a", 254, false },
		{ K8S_NODE, &NODE_B, "'name':'%s'", "node-b", NULL, "a", 253, true },
		{ K8S_NODE, &NODE_B, "'name':'%s'", "node-b", NULL, "a", 254, false },
		{ K8S_NODE, &NODE_B, "'name':'%s'", "node-b", "node-b.example.com", NULL, 0, true },
		{ K8S_SERVICEIMPORT, &IMPORT_WEB, "'name':'%s'", "web", NULL, "a", 253, true },
		{ K8S_SERVICEIMPORT, &IMPORT_WEB, "'name':'%s'", "web", NULL, "a", 254, false },
		{ K8S_SERVICEIMPORT, &IMPORT_WEB, "'name':'%s'", "web", "web.v2", NULL, 0, true },
		{ K8S_CLUSTERPROPERTY, &CLUSTER_ID, "'name':'%s'", "cluster.clusterset.k8s.io",
		  NULL, "a", 253, true },
		{ K8S_CLUSTERPROPERTY, &CLUSTER_ID, "'name':'%s'", "cluster.clusterset.k8s.io",
		  NULL, "a", 254, false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *value = (rows[i].text != NULL) ? strdup(rows[i].text)
		                                     : long_name(rows[i].fill, rows[i].n);
		char from[64], to[320];
		snprintf(from, sizeof(from), rows[i].field, rows[i].value);
		snprintf(to, sizeof(to), rows[i].field, value);
		char *text = edit(*rows[i].sample, from, to);
		char *json = q(text);
		k8s_object_t *obj = NULL;
		int ret = decode_raw(rows[i].kind, json, strlen(json), &obj);
		if ((ret == KNOT_EOK) != rows[i].ok) {
			fail_msg("row %zu: %s %s %zu bytes: %d", i, k8s_kind_name(rows[i].kind), from,
			         strlen(value), ret);
		}
		if (ret == KNOT_EOK) {
			bool is_ns = strncmp(rows[i].field, "'namespace'", 11) == 0;
			assert_string_equal(is_ns ? obj->ns : obj->name, value);
			k8s_object_free(obj);
		}
		free(json);
		free(text);
		free(value);
	}
}

/*
 * Port names of Services and EndpointSlices are DNS-1123 labels to the API server
 * (not IsValidPortName's IANA names: digits first and "--" pass, 15 is no limit);
 * a name that is none is read as no name. ServiceImport's CRD does not check them.
 */
static void port_names_are_dns_labels(void **state)
{
	static const struct {
		const char *text;
		const char *fill;
		size_t n;
		bool kept;
	} rows[] = {
		{ NULL, "a", 63, true },
		{ NULL, "a", 64, false },
		{ NULL, "a", 16, true },
		{ "1http", NULL, 0, true },
		{ "h--p", NULL, 0, true },
		{ "8080", NULL, 0, true },
		{ "-http", NULL, 0, false },
		{ "http-", NULL, 0, false },
		{ "HTTP", NULL, 0, false },
		{ "h.p", NULL, 0, false },
		{ "h_p", NULL, 0, false },
	};
	static const struct {
		k8s_kind_t kind;
		const char **sample;
		const char *port;
	} kinds[] = {
		{ K8S_SERVICE, &SVC_HEADLESS, "pg" },
		{ K8S_ENDPOINTSLICE, &SLICE_DB, "pg" },
		{ K8S_SERVICEIMPORT, &IMPORT_WEB, "http" },
	};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			char *value = (rows[i].text != NULL) ? strdup(rows[i].text)
			                                     : long_name(rows[i].fill, rows[i].n);
			char from[64], to[128];
			snprintf(from, sizeof(from), "'ports':[{'name':'%s'", kinds[k].port);
			snprintf(to, sizeof(to), "'ports':[{'name':'%s'", value);
			k8s_object_t *obj = decode_edit(kinds[k].kind, *kinds[k].sample, from, to);
			const k8s_port_t *port = (kinds[k].kind == K8S_SERVICE) ? &SVC(obj)->ports[0] :
			                         (kinds[k].kind == K8S_ENDPOINTSLICE) ? &SLICE(obj)->ports[0] :
			                         &IMPORT(obj)->ports[0];
			if (rows[i].kept) {
				assert_non_null(port->name);
				assert_string_equal(port->name, value);
			} else if (port->name != NULL) {
				fail_msg("%s port name \"%s\" kept", k8s_kind_name(kinds[k].kind), value);
			}
			k8s_object_free(obj);
			free(value);
		}
	}
}

/*
 * A pod name is a DNS subdomain: one over 63 bytes, or dotted, is no DNS label, so
 * endpoint-pod-names cannot name its endpoint; the slice keeps the first such name
 * to log it (store.c). A hostname is a DNS-1123 label to the API server.
 */
static void slice_pod_names_that_are_no_label_are_kept_aside(void **state)
{
	const char *ref = "'kind':'Pod','namespace':'shop','name':'db-0'";
	char *long_pod = long_name("a", 253);
	const char *names[] = { long_pod, "db.0" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char to[320];
		snprintf(to, sizeof(to), "'kind':'Pod','namespace':'shop','name':'%s'", names[i]);
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, ref, to);
		assert_null(SLICE(obj)->endpoints[0].target);
		assert_string_equal(SLICE(obj)->unlabelled_pod, names[i]);
		assert_string_equal(SLICE(obj)->endpoints[1].target, "db-1");
		k8s_object_free(obj);
	}
	free(long_pod);

	// Labels, and names no pod can have, are not kept aside.
	const char *not_aside[] = { "db-0", "DB-0", "db_0", "" };
	for (size_t i = 0; i < sizeof(not_aside) / sizeof(not_aside[0]); i++) {
		char to[128];
		snprintf(to, sizeof(to), "'kind':'Pod','namespace':'shop','name':'%s'", not_aside[i]);
		k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, ref, to);
		assert_null(SLICE(obj)->unlabelled_pod);
		k8s_object_free(obj);
	}

	// A node's name is no pod's.
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, ref,
	                                "'kind':'Node','namespace':'shop','name':'db.0'");
	assert_null(SLICE(obj)->unlabelled_pod);
	k8s_object_free(obj);

	// And it does not change the digest: the records are the same.
	char *text = edit(SLICE_DB, ref, "'kind':'Pod','namespace':'shop','name':'db.0'");
	char *text2 = edit(SLICE_DB, ref, "'kind':'Pod','namespace':'shop','name':'db.1'");
	k8s_object_t *a = decode_ok(K8S_ENDPOINTSLICE, text);
	k8s_object_t *b = decode_ok(K8S_ENDPOINTSLICE, text2);
	assert_true(k8s_object_digest_of(a) == k8s_object_digest_of(b));
	k8s_object_free(a);
	k8s_object_free(b);
	free(text);
	free(text2);
}

static void slice_trigger_time_is_read(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'2026-01-10T09:06:12Z'",
	                                "'2026-01-10T09:06:12.5Z'");
	assert_int_equal(SLICE(obj)->trigger_time_ns, 1768035972500000000LL);
	k8s_object_free(obj);

	obj = decode_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'2026-01-10T09:06:12Z'", "'yesterday'");
	assert_int_equal(SLICE(obj)->trigger_time_ns, 0);
	k8s_object_free(obj);
}

/* --- Pod, Namespace, ServiceImport, ClusterProperty ---------------------------- */

static void pod_running_is_live_with_both_ips(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_POD, POD_DB);
	k8s_pod_t *pod = POD(obj);
	assert_string_equal(obj->ns, "shop");
	assert_string_equal(obj->name, "db-0");
	assert_true(pod->live);
	assert_false(pod->host_network);
	assert_int_equal(pod->ip_count, 2);
	assert_ip(&pod->ips[0], "10.244.1.17");
	assert_ip(&pod->ips[1], "fd00:10:244:1::11");
	k8s_object_free(obj);
}

static void pod_pending_is_live_and_finished_phases_are_not(void **state)
{
	const char *phases[][2] = {
		{ "Pending", "1" }, { "Succeeded", "0" }, { "Failed", "0" }, { "Unknown", "0" },
		{ "Whatever", "1" },
	};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		k8s_object_t *obj = decode_edit(K8S_POD, POD_DB, "Running", phases[i][0]);
		assert_int_equal(POD(obj)->live, phases[i][1][0] == '1');
		k8s_object_free(obj);
	}
}

static void pod_being_deleted_is_not_live(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_POD, POD_DB, "'labels'",
	                                "'deletionTimestamp':'2026-01-10T10:00:00Z','labels'");
	assert_false(POD(obj)->live);
	k8s_object_free(obj);

	obj = decode_edit(K8S_POD, POD_DB, "'labels'", "'deletionTimestamp':null,'labels'");
	assert_true(POD(obj)->live);
	k8s_object_free(obj);
}

static void pod_host_network_is_read(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_POD, POD_DB, "'nodeName':'node-a'",
	                                "'nodeName':'node-a','hostNetwork':true");
	assert_true(POD(obj)->host_network);
	k8s_object_free(obj);
}

static void pod_without_pod_ips_falls_back_to_pod_ip(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_POD, POD_DB,
	        ",'podIPs':[{'ip':'10.244.1.17'},{'ip':'fd00:10:244:1::11'}]", "");
	assert_int_equal(POD(obj)->ip_count, 1);
	assert_ip(&POD(obj)->ips[0], "10.244.1.17");
	k8s_object_free(obj);

	obj = decode_edit(K8S_POD, POD_DB, "'podIP':'10.244.1.17','podIPs':[{'ip':'10.244.1.17'},{'ip':'fd00:10:244:1::11'}]",
	                  "'podIP':'','podIPs':null");
	assert_int_equal(POD(obj)->ip_count, 0);
	k8s_object_free(obj);
}

static void pod_name_may_be_a_dns_subdomain(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_POD, POD_DB, "'db-0'", "'db.0'");
	assert_string_equal(obj->name, "db.0");
	k8s_object_free(obj);
}

static void namespace_is_cluster_scoped(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_NAMESPACE, NS_SHOP);
	assert_string_equal(obj->name, "shop");
	assert_string_equal(obj->ns, "");
	k8s_object_free(obj);

	// A namespace name is one label.
	decode_edit_fails(K8S_NAMESPACE, NS_SHOP, "'name':'shop'", "'name':'sh.op'");
}

static void serviceimport_cluster_set_ip_and_headless(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_SERVICEIMPORT, IMPORT_WEB);
	k8s_serviceimport_t *imp = IMPORT(obj);
	assert_string_equal(obj->ns, "shop");
	assert_string_equal(obj->name, "web");
	assert_false(imp->headless);
	assert_int_equal(imp->ip_count, 1);
	assert_ip(&imp->ips[0], "10.42.0.10");
	assert_int_equal(imp->port_count, 1);
	assert_port(&imp->ports[0], "http", 80, K8S_PROTO_TCP);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICEIMPORT, IMPORT_WEB, "'ips':['10.42.0.10'],'type':'ClusterSetIP'",
	                  "'type':'Headless'");
	assert_true(IMPORT(obj)->headless);
	assert_int_equal(IMPORT(obj)->ip_count, 0);
	k8s_object_free(obj);

	obj = decode_edit(K8S_SERVICEIMPORT, IMPORT_WEB, "'ips':['10.42.0.10']",
	                  "'ips':['10.42.0.10','fd00:42::10','10.42.0.11']");
	assert_int_equal(IMPORT(obj)->ip_count, 2);
	assert_ip(&IMPORT(obj)->ips[1], "fd00:42::10");
	k8s_object_free(obj);

	// v1beta1 has the same schema.
	obj = decode_edit(K8S_SERVICEIMPORT, IMPORT_WEB, "v1alpha1", "v1beta1");
	assert_int_equal(IMPORT(obj)->ip_count, 1);
	k8s_object_free(obj);
}

static void clusterproperty_keeps_name_and_value(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_CLUSTERPROPERTY, CLUSTER_ID);
	assert_string_equal(obj->name, "cluster.clusterset.k8s.io");
	assert_string_equal(obj->ns, "");
	assert_string_equal(PROP(obj)->value, "cluster-a");
	k8s_object_free(obj);

	obj = decode_edit(K8S_CLUSTERPROPERTY, CLUSTER_ID, "'value':'cluster-a'", "'value':'Mixed Case id'");
	assert_string_equal(PROP(obj)->value, "Mixed Case id");
	k8s_object_free(obj);

	obj = decode_edit(K8S_CLUSTERPROPERTY, CLUSTER_ID, "'spec':{'value':'cluster-a'}", "'spec':{}");
	assert_null(PROP(obj)->value);
	k8s_object_free(obj);
}

/* --- ConfigMap ----------------------------------------------------------------- */

#define CM(o) ((k8s_configmap_t *)(o))

static void configmap_keeps_its_data_keys_and_values(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_CONFIGMAP, KUBE_DNS_CM);
	assert_string_equal(obj->ns, "kube-system");
	assert_string_equal(obj->name, "kube-dns");
	assert_int_equal(CM(obj)->count, 3);  // binaryData is not read.
	const k8s_cm_entry_t *e = k8s_configmap_get(CM(obj), "stubDomains");
	assert_non_null(e);
	assert_string_equal(e->value, "{\"corp.example\": [\"10.150.0.1\"]}");
	assert_int_equal(e->len, strlen(e->value));
	e = k8s_configmap_get(CM(obj), "NodeHosts");
	assert_string_equal(e->value, "192.168.1.10 node-1\n");
	assert_null(k8s_configmap_get(CM(obj), "nodehosts"));  // Keys are case-sensitive.
	assert_null(k8s_configmap_get(CM(obj), "blob"));
	k8s_object_free(obj);

	// No data, or an empty one: no keys.
	obj = decode_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'data':{", "'other':{");
	assert_int_equal(CM(obj)->count, 0);
	assert_null(CM(obj)->data);
	k8s_object_free(obj);
	obj = decode_ok(K8S_CONFIGMAP, "{'metadata':{'name':'e','namespace':'d'},'data':{'k':''}}");
	assert_int_equal(CM(obj)->count, 1);
	assert_string_equal(CM(obj)->data[0].value, "");
	k8s_object_free(obj);
}

static void configmap_keys_are_checked_as_the_api_server_checks_them(void **state)
{
	assert_true(k8s_configmap_key_valid("Corefile", 8));
	assert_true(k8s_configmap_key_valid("a-b_c.d", 7));
	assert_true(k8s_configmap_key_valid(".hidden", 7));
	assert_false(k8s_configmap_key_valid(".", 1));
	assert_false(k8s_configmap_key_valid("..", 2));
	assert_false(k8s_configmap_key_valid("", 0));
	assert_false(k8s_configmap_key_valid("a/b", 3));
	assert_false(k8s_configmap_key_valid("a b", 3));
	char key[255];
	memset(key, 'k', sizeof(key));
	assert_true(k8s_configmap_key_valid(key, 253));
	assert_false(k8s_configmap_key_valid(key, 254));

	// An object the API could not have stored is skipped whole.
	decode_edit_fails(K8S_CONFIGMAP, KUBE_DNS_CM, "'NodeHosts'", "'Node/Hosts'");
	decode_edit_fails(K8S_CONFIGMAP, KUBE_DNS_CM, "'upstreamNameservers':'[\\'10.0.0.2\\']'",
	                  "'upstreamNameservers':3");
	decode_edit_fails(K8S_CONFIGMAP, KUBE_DNS_CM, "node-1", "node\\u0000-1");
}

static void configmap_over_its_caps_is_skipped(void **state)
{
	// K8S_CONFIGMAP_KEYS_MAX keys pass, one more does not.
	size_t cap = K8S_CONFIGMAP_KEYS_MAX + 1;
	char *text = malloc(64 + cap * 16);
	assert_non_null(text);
	for (size_t n = K8S_CONFIGMAP_KEYS_MAX; n <= cap; n++) {
		char *p = text + sprintf(text, "{\"metadata\":{\"name\":\"m\",\"namespace\":\"n\"},\"data\":{");
		for (size_t i = 0; i < n; i++) {
			p += sprintf(p, "%s\"k%zu\":\"v\"", i > 0 ? "," : "", i);
		}
		strcpy(p, "}}");
		k8s_object_t *obj = NULL;
		int ret = decode_raw(K8S_CONFIGMAP, text, strlen(text), &obj);
		assert_int_equal(ret, (n <= K8S_CONFIGMAP_KEYS_MAX) ? KNOT_EOK : KNOT_ELIMIT);
		k8s_object_free(obj);
	}
	free(text);

	// A value of 1 MiB passes, one byte more does not.
	size_t big = K8S_CONFIGMAP_VALUE_MAX + 1;
	text = malloc(big + 128);
	assert_non_null(text);
	for (size_t len = K8S_CONFIGMAP_VALUE_MAX; len <= big; len++) {
		int head = sprintf(text, "{\"metadata\":{\"name\":\"m\",\"namespace\":\"n\"},\"data\":{\"k\":\"");
		memset(text + head, 'x', len);
		strcpy(text + head + len, "\"}}");
		k8s_object_t *obj = NULL;
		int ret = decode_raw(K8S_CONFIGMAP, text, strlen(text), &obj);
		assert_int_equal(ret, (len <= K8S_CONFIGMAP_VALUE_MAX) ? KNOT_EOK : KNOT_ELIMIT);
		if (obj != NULL) {
			assert_int_equal(CM(obj)->data[0].len, len);
		}
		k8s_object_free(obj);
	}
	free(text);
}

/* --- Node ---------------------------------------------------------------------- */

static void node_keeps_name_zone_and_region(void **state)
{
	k8s_object_t *obj = decode_ok(K8S_NODE, NODE_B);
	assert_int_equal(obj->kind, K8S_NODE);
	assert_string_equal(obj->name, "node-b");
	assert_string_equal(obj->ns, "");
	assert_string_equal(NODE(obj)->zone, "eu-west1-b");
	assert_string_equal(NODE(obj)->region, "eu-west1");
	k8s_object_free(obj);
}

static void node_falls_back_to_the_failure_domain_labels(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_NODE, NODE_B, "'topology.kubernetes.io/region':'eu-west1',",
	                                "'failure-domain.beta.kubernetes.io/region':'old-region',");
	assert_string_equal(NODE(obj)->region, "old-region");
	assert_string_equal(NODE(obj)->zone, "eu-west1-b");
	k8s_object_free(obj);

	// The current label wins over the deprecated one.
	obj = decode_edit(K8S_NODE, NODE_B, "'kubernetes.io/os':'linux',",
	                  "'failure-domain.beta.kubernetes.io/zone':'old-zone',");
	assert_string_equal(NODE(obj)->zone, "eu-west1-b");
	k8s_object_free(obj);
}

static void node_without_topology_labels_has_none(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_NODE, NODE_B,
	                                "'topology.kubernetes.io/zone':'eu-west1-b'", "'x':'y'");
	assert_null(NODE(obj)->zone);
	assert_string_equal(NODE(obj)->region, "eu-west1");
	k8s_object_free(obj);
}

static void node_topology_values_must_be_dns_names(void **state)
{
	// Label values may hold '_' and upper case; only DNS names can become labels of a name.
	k8s_object_t *obj = decode_edit(K8S_NODE, NODE_B, "'eu-west1-b'", "'EU-West1-B'");
	assert_string_equal(NODE(obj)->zone, "eu-west1-b");
	k8s_object_free(obj);
	obj = decode_edit(K8S_NODE, NODE_B, "'eu-west1-b'", "'zone_b'");
	assert_null(NODE(obj)->zone);
	k8s_object_free(obj);
	obj = decode_edit(K8S_NODE, NODE_B, "'eu-west1-b'", "'rack.eu-west1-b'");
	assert_string_equal(NODE(obj)->zone, "rack.eu-west1-b");
	k8s_object_free(obj);
	obj = decode_edit(K8S_NODE, NODE_B, "'eu-west1',", "'',");
	assert_null(NODE(obj)->region);
	k8s_object_free(obj);
}

/* --- hostile and malformed input ------------------------------------------------ */

static void unknown_fields_are_ignored(void **state)
{
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'spec':{",
	        "'future':{'deep':[1,2,{'x':null}]},'spec':{'newField':[true,false],'clusterIPX':'1.2.3.4',");
	assert_int_equal(SVC(obj)->ip_count, 2);
	k8s_object_free(obj);
}

static void wrong_types_read_as_absent(void **state)
{
	const char *svc =
		"{'metadata':{'name':'web','namespace':'shop','labels':[],'annotations':'x'},"
		" 'spec':{'type':7,'clusterIP':['10.0.0.1'],'clusterIPs':'10.0.0.1','ports':{'name':'x'},"
		"  'publishNotReadyAddresses':'true','externalName':5}}";
	k8s_object_t *obj = decode_ok(K8S_SERVICE, svc);
	assert_int_equal(SVC(obj)->type, K8S_SVC_CLUSTERIP);
	assert_int_equal(SVC(obj)->ip_count, 0);
	assert_false(SVC(obj)->publish_not_ready);
	assert_int_equal(SVC(obj)->port_count, 0);
	k8s_object_free(obj);

	obj = decode_ok(K8S_SERVICE, "{'metadata':{'name':'web','namespace':'shop'},'spec':'x'}");
	k8s_object_free(obj);

	const char *slice =
		"{'metadata':{'name':'s','namespace':'shop','labels':{'kubernetes.io/service-name':7},"
		"  'annotations':{'endpoints.kubernetes.io/last-change-trigger-time':5}},"
		" 'addressType':'IPv4','endpoints':[7,'x',null,[],{'addresses':'10.0.0.1'},"
		"  {'addresses':['10.0.0.2'],'conditions':[],'hostname':5,'targetRef':'db-0'},"
		"  {'addresses':['10.0.0.3'],'targetRef':{'kind':'Pod','name':['x']}}],"
		" 'ports':[7,null,{'name':{},'port':'80','protocol':1}]}";
	obj = decode_ok(K8S_ENDPOINTSLICE, slice);
	assert_null(SLICE(obj)->service);
	assert_int_equal(SLICE(obj)->trigger_time_ns, 0);
	assert_int_equal(SLICE(obj)->endpoint_count, 2);
	assert_ip(&SLICE(obj)->endpoints[0].ip, "10.0.0.2");
	assert_true(SLICE(obj)->endpoints[0].ready);
	assert_null(SLICE(obj)->endpoints[0].hostname);
	assert_null(SLICE(obj)->endpoints[0].target);
	assert_null(SLICE(obj)->endpoints[1].target);
	assert_int_equal(SLICE(obj)->port_count, 1);
	assert_port(&SLICE(obj)->ports[0], NULL, 0, K8S_PROTO_TCP);
	k8s_object_free(obj);

	obj = decode_ok(K8S_POD, "{'metadata':{'name':'p','namespace':'shop','deletionTimestamp':5},"
	                         "'spec':{'hostNetwork':'true'},'status':{'phase':3,'podIPs':[{'ip':7},'10.0.0.1'],"
	                         "'podIP':'10.0.0.9'}}");
	assert_true(POD(obj)->live);
	assert_false(POD(obj)->host_network);
	assert_int_equal(POD(obj)->ip_count, 1);
	assert_ip(&POD(obj)->ips[0], "10.0.0.9");
	k8s_object_free(obj);
}

static void name_that_is_no_dns_label_is_rejected(void **state)
{
	const char *names[] = {
		"'we.b'", "'Web'", "'-web'", "'web-'", "''", "'we b'", "'we_b'", "'web\\u0000x'",
		"'w\\u00e9b'", "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", "7", "null",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char to[128];
		snprintf(to, sizeof(to), "'name':%s,'namespace':'shop'", names[i]);
		int ret = decode_edit_fails(K8S_SERVICE, SVC_DUAL, "'name':'web','namespace':'shop'", to);
		assert_int_equal(ret, KNOT_EINVAL);
		snprintf(to, sizeof(to), "'name':'web','namespace':%s", names[i]);
		ret = decode_edit_fails(K8S_SERVICE, SVC_DUAL, "'name':'web','namespace':'shop'", to);
		assert_int_equal(ret, KNOT_EINVAL);
	}
	// 63 characters is fine.
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'name':'web'",
	        "'name':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'");
	assert_int_equal(strlen(obj->name), 63);
	k8s_object_free(obj);
}

static void name_with_invalid_utf8_is_rejected(void **state)
{
	char *json = q(SVC_DUAL);
	char *at = strstr(json, "\"web\"");
	at[2] = (char)0xff;
	k8s_object_t *obj = NULL;
	assert_int_equal(decode_raw(K8S_SERVICE, json, strlen(json), &obj), KNOT_EINVAL);
	free(json);
}

static void very_long_name_is_rejected(void **state)
{
	size_t n = 1 << 20;
	char *name = malloc(n + 3);
	memset(name, 'a', n + 2);
	name[0] = '\'';
	name[n + 1] = '\'';
	name[n + 2] = '\0';
	char *text = edit(SVC_DUAL, "'web'", name);
	assert_int_equal(decode_fails(K8S_SERVICE, text), KNOT_EINVAL);
	free(text);
	free(name);
}

static void missing_metadata_name_or_namespace_is_rejected(void **state)
{
	assert_int_equal(decode_fails(K8S_SERVICE, "{'spec':{}}"), KNOT_EINVAL);
	assert_int_equal(decode_fails(K8S_SERVICE, "{'metadata':null}"), KNOT_EINVAL);
	assert_int_equal(decode_fails(K8S_SERVICE, "{'metadata':{'namespace':'shop'}}"), KNOT_EINVAL);
	assert_int_equal(decode_fails(K8S_SERVICE, "{'metadata':{'name':'web'}}"), KNOT_EINVAL);
	assert_int_equal(decode_fails(K8S_POD, "{'metadata':{'name':'web'}}"), KNOT_EINVAL);
}

static void kind_field_must_match_when_present(void **state)
{
	assert_int_equal(decode_fails(K8S_POD, SVC_DUAL), KNOT_EINVAL);
	assert_int_equal(decode_fails(K8S_SERVICE, "{'kind':'Status','metadata':{},'code':410}"),
	                 KNOT_EINVAL);
	// List items carry no kind.
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'kind':'Service','apiVersion':'v1',", "");
	k8s_object_free(obj);
}

static void non_object_json_is_malformed(void **state)
{
	const char *texts[] = { "[]", "null", "42", "'web'", "[{'metadata':{}}]" };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(decode_fails(K8S_SERVICE, texts[i]), KNOT_EMALF);
	}
}

static void malformed_json_is_rejected(void **state)
{
	const char *texts[] = {
		"", "   ", "{", "}", "{\"a\":}", "{\"a\" 1}", "{\"a\":1,}", "{\"a\":tru}",
		"{\"a\":True}", "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"}} x",
		"{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"}}{}",
		"{\"a\":\"\\x\"}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		k8s_object_t *obj = NULL;
		if (decode_raw(K8S_SERVICE, texts[i], strlen(texts[i]), &obj) != KNOT_EMALF) {
			fail_msg("not malformed: %s", texts[i]);
		}
	}
	// A raw NUL inside the text ends nothing: it is an error.
	const char nul[] = "{\"metadata\":{\"name\":\"w\0b\",\"namespace\":\"shop\"}}";
	k8s_object_t *obj = NULL;
	assert_int_equal(decode_raw(K8S_SERVICE, nul, sizeof(nul) - 1, &obj), KNOT_EMALF);
}

static void trailing_whitespace_is_allowed(void **state)
{
	char *json = q(SVC_DUAL);
	size_t len = strlen(json);
	char *padded = malloc(len + 4);
	memcpy(padded, json, len);
	memcpy(padded + len, " \r\n\t", 4);
	k8s_object_t *obj = NULL;
	assert_int_equal(decode_raw(K8S_SERVICE, padded, len + 4, &obj), KNOT_EOK);
	k8s_object_free(obj);
	free(padded);
	free(json);
}

static void truncated_json_is_malformed_at_every_length(void **state)
{
	const char *samples[] = { SVC_DUAL, SLICE_DB, POD_DB };
	k8s_kind_t kinds[] = { K8S_SERVICE, K8S_ENDPOINTSLICE, K8S_POD };
	for (size_t s = 0; s < 3; s++) {
		char *json = q(samples[s]);
		size_t len = strlen(json);
		for (size_t cut = 0; cut < len; cut++) {
			// Not NUL-terminated: a copy of exactly cut bytes lets ASan catch over-reads.
			char *part = malloc(cut + 1);
			memcpy(part, json, cut);
			k8s_object_t *obj = NULL;
			assert_int_equal(decode_raw(kinds[s], part, cut, &obj), KNOT_EMALF);
			free(part);
		}
		free(json);
	}
}

static char *nested(const char *head, int depth, const char *tail)
{
	size_t len = strlen(head) + 2 * depth + strlen(tail) + 1;
	char *s = malloc(len);
	strcpy(s, head);
	char *at = s + strlen(head);
	memset(at, '[', depth);
	memset(at + depth, ']', depth);
	strcpy(at + 2 * depth, tail);
	return s;
}

static void nesting_beyond_the_depth_limit_is_malformed(void **state)
{
	char *text = nested("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"x\":", 10000, "}");
	k8s_object_t *obj = NULL;
	assert_int_equal(decode_raw(K8S_SERVICE, text, strlen(text), &obj), KNOT_EMALF);
	free(text);

	// Deep managedFields within the limit are fine (64 levels plus the event's two).
	text = nested("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"x\":", 64, "}");
	assert_int_equal(decode_raw(K8S_SERVICE, text, strlen(text), &obj), KNOT_EOK);
	k8s_object_free(obj);
	free(text);
}

static void three_mib_annotation_is_decoded(void **state)
{
	size_t n = 3 << 20;
	char *big = malloc(n + 64);
	strcpy(big, "'annotations':{'big':'");
	size_t at = strlen(big);
	for (size_t i = 0; i < n; i++) {
		big[at + i] = "abcdefgh\\\\"[i % 10]; // a pair of backslashes is one escape
	}
	strcpy(big + at + n, "'},'labels'");
	k8s_object_t *obj = decode_edit(K8S_SERVICE, SVC_DUAL, "'labels'", big);
	assert_int_equal(SVC(obj)->ip_count, 2);
	k8s_object_free(obj);
	free(big);
}

static bool is_label(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-') {
		return false;
	}
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

/*! What any decoded object guarantees, however odd its input. */
static void assert_object_sane(const k8s_object_t *obj)
{
	assert_non_null(obj->name);
	assert_non_null(obj->ns);
	if (obj->kind == K8S_SERVICE || obj->kind == K8S_NAMESPACE) {
		assert_true(is_label(obj->name));
	}
	if (obj->kind == K8S_ENDPOINTSLICE) {
		const k8s_slice_t *slice = (const k8s_slice_t *)obj;
		for (uint32_t i = 0; i < slice->endpoint_count; i++) {
			const k8s_endpoint_t *ep = &slice->endpoints[i];
			assert_int_equal(ep->ip.family, slice->family);
			assert_true(ep->hostname == NULL || is_label(ep->hostname));
			assert_true(ep->target == NULL || is_label(ep->target));
		}
		for (uint16_t i = 0; i < slice->port_count; i++) {
			assert_true(slice->ports[i].name == NULL || is_label(slice->ports[i].name));
			assert_true(slice->ports[i].proto < K8S_PROTO_COUNT);
		}
	}
}

static void mutated_objects_decode_or_fail_cleanly(void **state)
{
	const char *samples[] = { SVC_DUAL, SVC_HEADLESS, SVC_EXTERNAL, SLICE_DB, SLICE_MCS, POD_DB,
	                          NS_SHOP, IMPORT_WEB, CLUSTER_ID, NODE_B };
	k8s_kind_t kinds[] = { K8S_SERVICE, K8S_SERVICE, K8S_SERVICE, K8S_ENDPOINTSLICE,
	                       K8S_ENDPOINTSLICE, K8S_POD, K8S_NAMESPACE, K8S_SERVICEIMPORT,
	                       K8S_CLUSTERPROPERTY, K8S_NODE };
	const char bytes[] = "\"\\{}[],:0aA.-_ \xff\xc3\n";
	unsigned seed = 7;
	for (size_t s = 0; s < sizeof(samples) / sizeof(samples[0]); s++) {
		char *json = q(samples[s]);
		size_t len = strlen(json);
		for (int round = 0; round < 400; round++) {
			char *text = malloc(len);
			memcpy(text, json, len);
			int edits = 1 + rand_r(&seed) % 3;
			for (int e = 0; e < edits; e++) {
				text[rand_r(&seed) % len] = bytes[rand_r(&seed) % (sizeof(bytes) - 1)];
			}
			k8s_object_t *obj = NULL;
			int ret = decode_raw(kinds[s], text, len, &obj);
			assert_true(ret == KNOT_EOK || ret == KNOT_EMALF || ret == KNOT_EINVAL);
			if (ret == KNOT_EOK) {
				assert_object_sane(obj);
				k8s_object_free(obj);
			}
			free(text);
		}
		free(json);
	}
}

/* --- watch events -------------------------------------------------------------- */

static int event_raw(k8s_kind_t kind, const char *sq, k8s_event_t *ev)
{
	char *json = q(sq);
	char err[128] = "";
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	int ret = k8s_event_decode(&tape, kind, json, strlen(json), ev, err, sizeof(err));
	k8s_jtape_deinit(&tape);
	free(json);
	if (ret != KNOT_EOK) {
		assert_null(ev->obj);
		assert_true(err[0] != '\0');
	}
	return ret;
}

static char *event_of(const char *type, const char *object_sq)
{
	char *out = malloc(strlen(object_sq) + 64);
	sprintf(out, "{'type':'%s','object':%s}", type, object_sq);
	return out;
}

static void event_added_modified_deleted_carry_the_object_and_rv(void **state)
{
	const char *types[] = { "ADDED", "MODIFIED", "DELETED" };
	k8s_event_type_t want[] = { K8S_EV_ADDED, K8S_EV_MODIFIED, K8S_EV_DELETED };
	for (size_t i = 0; i < 3; i++) {
		char *line = event_of(types[i], SLICE_DB);
		k8s_event_t ev;
		assert_int_equal(event_raw(K8S_ENDPOINTSLICE, line, &ev), KNOT_EOK);
		assert_int_equal(ev.type, want[i]);
		assert_string_equal(ev.rv, "48320");
		assert_non_null(ev.obj);
		assert_int_equal(SLICE(ev.obj)->endpoint_count, 2);
		assert_false(ev.initial_events_end);
		k8s_object_free(ev.obj);
		free(line);
	}
}

static void event_bookmark_zero_valued_objects_give_only_the_rv(void **state)
{
	const char *objects[K8S_KIND_COUNT] = {
		[K8S_SERVICE] = "{'kind':'Service','apiVersion':'v1','metadata':{'resourceVersion':'101',"
		                "'creationTimestamp':null},'spec':{},'status':{'loadBalancer':{}}}",
		[K8S_ENDPOINTSLICE] = "{'kind':'EndpointSlice','apiVersion':'discovery.k8s.io/v1',"
		                      "'metadata':{'resourceVersion':'101'},'addressType':'','endpoints':null,'ports':null}",
		[K8S_NAMESPACE] = "{'kind':'Namespace','apiVersion':'v1','metadata':{'resourceVersion':'101'},"
		                  "'spec':{},'status':{}}",
		[K8S_POD] = "{'kind':'Pod','apiVersion':'v1','metadata':{'resourceVersion':'101',"
		            "'creationTimestamp':null},'spec':{'containers':null},'status':{}}",
		[K8S_SERVICEIMPORT] = "{'kind':'ServiceImport','apiVersion':'multicluster.x-k8s.io/v1alpha1',"
		                      "'metadata':{'resourceVersion':'101'}}",
		[K8S_CLUSTERPROPERTY] = "{'kind':'ClusterProperty','apiVersion':'about.k8s.io/v1alpha1',"
		                        "'metadata':{'resourceVersion':'101'}}",
		[K8S_NODE] = "{'kind':'Node','apiVersion':'v1','metadata':{'resourceVersion':'101',"
		             "'creationTimestamp':null},'spec':{},'status':{'daemonEndpoints':"
		             "{'kubeletEndpoint':{'Port':0}},'nodeInfo':{}}}",
		[K8S_CONFIGMAP] = "{'kind':'ConfigMap','apiVersion':'v1','metadata':{'resourceVersion':'101',"
		                  "'creationTimestamp':null}}",
	};
	for (int kind = 0; kind < K8S_KIND_COUNT; kind++) {
		char *line = event_of("BOOKMARK", objects[kind]);
		k8s_event_t ev;
		assert_int_equal(event_raw(kind, line, &ev), KNOT_EOK);
		assert_int_equal(ev.type, K8S_EV_BOOKMARK);
		assert_string_equal(ev.rv, "101");
		assert_null(ev.obj);
		assert_false(ev.initial_events_end);
		free(line);
	}
}

static void event_bookmark_marks_the_end_of_initial_events(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'BOOKMARK','object':{'kind':'Pod','apiVersion':'v1','metadata':{'resourceVersion':'10245',"
	        "'annotations':{'k8s.io/initial-events-end':'true'}}}}", &ev), KNOT_EOK);
	assert_int_equal(ev.type, K8S_EV_BOOKMARK);
	assert_string_equal(ev.rv, "10245");
	assert_true(ev.initial_events_end);
}

static void event_error_410_gives_the_status(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_ENDPOINTSLICE,
	        "{'type':'ERROR','object':{'kind':'Status','apiVersion':'v1','metadata':{},'status':'Failure',"
	        "'message':'too old resource version: 48000 (48210)','reason':'Expired','code':410}}", &ev),
	        KNOT_EOK);
	assert_int_equal(ev.type, K8S_EV_ERROR);
	assert_null(ev.obj);
	assert_string_equal(ev.rv, "");
	assert_int_equal(ev.status.code, 410);
	assert_string_equal(ev.status.reason, "Expired");
	assert_string_equal(ev.status.message, "too old resource version: 48000 (48210)");
	assert_int_equal(ev.status.retry_after, 0);

	// Servers up to 1.17 said Gone.
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'ERROR','object':{'kind':'Status','apiVersion':'v1','metadata':{},'status':'Failure',"
	        "'message':'too old resource version: 2743975 (2744775)','reason':'Gone','code':410}}", &ev),
	        KNOT_EOK);
	assert_int_equal(ev.status.code, 410);
	assert_string_equal(ev.status.reason, "Gone");
}

static void event_error_reads_retry_after(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'ERROR','object':{'kind':'Status','metadata':{},'status':'Failure',"
	        "'message':'storage is (re)initializing','reason':'TooManyRequests',"
	        "'details':{'retryAfterSeconds':3},'code':429}}", &ev), KNOT_EOK);
	assert_int_equal(ev.status.code, 429);
	assert_int_equal(ev.status.retry_after, 3);
}

static void event_unknown_type_is_invalid(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'type':'RENAMED','object':{'metadata':{}}}", &ev),
	                 KNOT_EINVAL);
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'type':'added','object':{'metadata':{}}}", &ev),
	                 KNOT_EINVAL);
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'object':{'metadata':{}}}", &ev), KNOT_EINVAL);
}

static void event_without_object_is_invalid(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'type':'ADDED'}", &ev), KNOT_EINVAL);
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'type':'BOOKMARK','object':null}", &ev), KNOT_EINVAL);
	assert_int_equal(event_raw(K8S_NAMESPACE, "['ADDED']", &ev), KNOT_EMALF);
	assert_int_equal(event_raw(K8S_NAMESPACE, "{'type':'ADDED','object':{", &ev), KNOT_EMALF);
}

static void event_with_invalid_object_fails_without_object(void **state)
{
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_NAMESPACE,
	        "{'type':'ADDED','object':{'metadata':{'name':'Bad.Name','resourceVersion':'5'}}}", &ev),
	        KNOT_EINVAL);
	assert_null(ev.obj);
}

static void event_resource_version_must_fit(void **state)
{
	char rv[100];
	memset(rv, '7', sizeof(rv));
	char line[400];

	rv[K8S_RV_MAX - 1] = '\0';
	snprintf(line, sizeof(line), "{'type':'BOOKMARK','object':{'metadata':{'resourceVersion':'%s'}}}", rv);
	k8s_event_t ev;
	assert_int_equal(event_raw(K8S_POD, line, &ev), KNOT_EOK);
	assert_string_equal(ev.rv, rv);

	rv[K8S_RV_MAX - 1] = '7';
	rv[K8S_RV_MAX] = '\0';
	snprintf(line, sizeof(line), "{'type':'BOOKMARK','object':{'metadata':{'resourceVersion':'%s'}}}", rv);
	assert_int_equal(event_raw(K8S_POD, line, &ev), KNOT_EINVAL);

	// It goes into a URL.
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'BOOKMARK','object':{'metadata':{'resourceVersion':'1&watch=0'}}}", &ev), KNOT_EOK);
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'BOOKMARK','object':{'metadata':{'resourceVersion':'1 2'}}}", &ev), KNOT_EINVAL);
	assert_int_equal(event_raw(K8S_POD,
	        "{'type':'BOOKMARK','object':{'metadata':{'resourceVersion':'1\\n2'}}}", &ev), KNOT_EINVAL);
}

/* --- Status bodies ------------------------------------------------------------- */

static void status_json_body_is_read(void **state)
{
	char *json = q("{\n  'kind': 'Status',\n  'apiVersion': 'v1',\n  'metadata': {},\n  'status': 'Failure',\n"
	               "  'message': 'services is forbidden: User \\u0022x\\u0022 cannot list resource',\n"
	               "  'reason': 'Forbidden',\n  'details': {'kind': 'services'},\n  'code': 403\n}\n");
	k8s_status_t st;
	assert_int_equal(k8s_status_decode(json, strlen(json), &st), KNOT_EOK);
	assert_int_equal(st.code, 403);
	assert_string_equal(st.reason, "Forbidden");
	assert_string_equal(st.message, "services is forbidden: User \"x\" cannot list resource");
	free(json);
}

static void status_plain_text_body_gives_its_first_line(void **state)
{
	const char *text = "Too many requests, please try again later.\r\nsecond line\n";
	k8s_status_t st;
	assert_int_equal(k8s_status_decode(text, strlen(text), &st), KNOT_EOK);
	assert_int_equal(st.code, 0);
	assert_string_equal(st.reason, "");
	assert_string_equal(st.message, "Too many requests, please try again later.");

	text = "404 page not found\n";
	assert_int_equal(k8s_status_decode(text, strlen(text), &st), KNOT_EOK);
	assert_string_equal(st.message, "404 page not found");
}

static void status_empty_or_odd_body_gives_zeros(void **state)
{
	k8s_status_t st;
	memset(&st, 0x55, sizeof(st));
	assert_int_equal(k8s_status_decode("", 0, &st), KNOT_EOK);
	assert_int_equal(st.code, 0);
	assert_int_equal(st.retry_after, 0);
	assert_string_equal(st.message, "");

	assert_int_equal(k8s_status_decode("{\"code\":\"x\",\"reason\":7}", 23, &st), KNOT_EOK);
	assert_int_equal(st.code, 0);
	assert_string_equal(st.reason, "");

	assert_int_equal(k8s_status_decode("[1,2]", 5, &st), KNOT_EOK);
	assert_string_equal(st.message, "");
}

static void status_message_is_truncated_and_cleaned(void **state)
{
	char text[1200];
	strcpy(text, "{\"message\":\"");
	size_t at = strlen(text);
	// 254 ASCII bytes then a two-byte character that does not fit.
	memset(text + at, 'm', 254);
	at += 254;
	memcpy(text + at, "\xc3\xa9tab\\there", 11);
	at += 11;
	strcpy(text + at, "\",\"reason\":\"AVeryLongReasonThatDoesNotFitInThirtyTwoBytes\"}");
	k8s_status_t st;
	assert_int_equal(k8s_status_decode(text, strlen(text), &st), KNOT_EOK);
	assert_int_equal(strlen(st.message), 254);
	assert_int_equal(strlen(st.reason), 31);

	const char *ctl = "{\"message\":\"a\\tb\\u001bc\"}";
	assert_int_equal(k8s_status_decode(ctl, strlen(ctl), &st), KNOT_EOK);
	assert_string_equal(st.message, "a b c");
}

/* --- time ---------------------------------------------------------------------- */

static void time_parse_reads_rfc3339(void **state)
{
	assert_int_equal(k8s_rfc3339_parse("1970-01-01T00:00:01Z"), 1000000000LL);
	assert_int_equal(k8s_rfc3339_parse("2026-01-10T09:06:12Z"), 1768035972000000000LL);
	assert_int_equal(k8s_rfc3339_parse("2026-01-10T09:06:12.123456789Z"), 1768035972123456789LL);
	assert_int_equal(k8s_rfc3339_parse("2026-01-10T09:06:12.1Z"), 1768035972100000000LL);
	assert_int_equal(k8s_rfc3339_parse("2026-01-10T10:06:12+01:00"), 1768035972000000000LL);
	assert_int_equal(k8s_rfc3339_parse("2026-01-10T08:36:12.5-00:30"), 1768035972500000000LL);
	assert_int_equal(k8s_rfc3339_parse("2024-02-29T00:00:00z"), 1709164800000000000LL);
	assert_int_equal(k8s_rfc3339_parse("2024-02-29t00:00:00Z"), 1709164800000000000LL);
}

static void time_parse_rejects_other_forms(void **state)
{
	const char *bad[] = {
		"", "2026-01-10", "2026-01-10T09:06:12", "2026-01-10 09:06:12Z", "2026-01-10T09:06:12.Z",
		"2026-01-10T09:06:12.1234567891Z", "2026-13-10T09:06:12Z", "2026-02-29T09:06:12Z",
		"2026-01-32T09:06:12Z", "2026-01-10T24:00:00Z", "2026-01-10T09:60:12Z", "2026-01-10T09:06:60Z",
		"2026-01-10T09:06:12+0100", "2026-01-10T09:06:12Zjunk", "1969-12-31T23:59:59Z", "+2026-01-10T09:06:12Z",
		"2026-1-10T09:06:12Z", "9999-01-10T09:06:12Z", "1970-01-01T00:00:00Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(k8s_rfc3339_parse(bad[i]), 0);
	}
	assert_int_equal(k8s_rfc3339_parse(NULL), 0);
}

/* --- addresses ----------------------------------------------------------------- */

/*! k8s_decode_ip() of \a text against glibc's inet_pton(), in each family asked. */
static void ip_reads_as_inet_pton(const char *text)
{
	uint8_t v4[4], v6[16];
	bool is4 = inet_pton(AF_INET, text, v4) == 1;
	bool is6 = !is4 && inet_pton(AF_INET6, text, v6) == 1;
	int families[] = { AF_INET, AF_INET6, AF_UNSPEC };
	for (size_t i = 0; i < 3; i++) {
		k8s_ip_t ip;
		bool read = k8s_decode_ip((k8s_str_t){ text, strlen(text) }, families[i], &ip);
		bool want = (families[i] == AF_INET) ? is4 : (families[i] == AF_INET6) ? is6 : is4 || is6;
		if (read != want) {
			fail_msg("'%s' in family %d: read %d, inet_pton %d", text, families[i], read, want);
		}
		if (read) {
			assert_int_equal(ip.family, is4 ? AF_INET : AF_INET6);
			assert_memory_equal(ip.bytes, is4 ? v4 : v6, is4 ? 4 : 16);
		}
	}
}

static void an_address_reads_as_inet_pton_reads_it(void **state)
{
	(void)state;
	static const char *edges[] = {
		"10.0.0.1", "0.0.0.0", "255.255.255.255", "256.0.0.1", "1.2.3", "1.2.3.4.5",
		"01.2.3.4", "1.2.3.04", "1.2.3.0", "1..2.3", ".1.2.3", "1.2.3.4.", "1.2.3.4 ",
		" 1.2.3.4", "1.2.3.-4", "1.2.3.4a", "1.2.3.999", "1.2.3.2555", "00.1.2.3",
		"::1", "fd00::10", "::ffff:1.2.3.4", "1.2.3.4::", "fe80::1%eth0", "",
	};
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		ip_reads_as_inet_pton(edges[i]);
	}
	// Every string of up to 9 bytes of digits, dots and one other byte, sampled.
	static const char alphabet[] = "0123456789.:a";
	srand(42);
	for (size_t n = 0; n < 200000; n++) {
		char text[16];
		size_t len = 1 + (size_t)rand() % 15;
		for (size_t i = 0; i < len; i++) {
			// Mostly digits and dots, so that most strings are near an address.
			size_t pick = (size_t)rand() % 16;
			text[i] = (pick < 10) ? (char)('0' + pick % 3 + (rand() % 2) * 2) :
			          (pick < 14) ? '.' : alphabet[(size_t)rand() % (sizeof(alphabet) - 1)];
		}
		text[len] = '\0';
		ip_reads_as_inet_pton(text);
	}
}

/* --- digest -------------------------------------------------------------------- */

static uint64_t digest_of(k8s_kind_t kind, const char *sq)
{
	k8s_object_t *obj = decode_ok(kind, sq);
	assert_false(obj->digested);  // computed when first compared, not when decoded
	uint64_t digest = k8s_object_digest_of(obj);
	assert_true(obj->digested);
	k8s_object_free(obj);
	return digest;
}

static uint64_t digest_edit(k8s_kind_t kind, const char *sq, const char *from, const char *to)
{
	char *text = edit(sq, from, to);
	uint64_t digest = digest_of(kind, text);
	free(text);
	return digest;
}

static void digest_ignores_what_makes_no_records(void **state)
{
	uint64_t base = digest_of(K8S_SERVICE, SVC_DUAL);
	assert_int_equal(digest_edit(K8S_SERVICE, SVC_DUAL, "'48211'", "'99999'"), base);
	assert_int_equal(digest_edit(K8S_SERVICE, SVC_DUAL, "'app':'web'}", "'app':'other'},'annotations':{'a':'b'}"), base);
	assert_int_equal(digest_edit(K8S_SERVICE, SVC_DUAL, "'targetPort':8080", "'targetPort':8081"), base);
	assert_int_equal(digest_edit(K8S_SERVICE, SVC_DUAL, "'ClusterIP'", "'NodePort'"), base);
	// A port with a protocol we skip makes no record.
	assert_int_equal(digest_edit(K8S_SERVICE, SVC_DUAL, "'ports':[", "'ports':[{'name':'q','protocol':'QUIC','port':1},"), base);

	uint64_t slice = digest_of(K8S_ENDPOINTSLICE, SLICE_DB);
	assert_int_equal(digest_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'node-a'", "'node-z'"), slice);
	assert_int_equal(digest_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'serving':true,'terminating':false", "'serving':false,'terminating':true"), slice);
	assert_int_equal(digest_edit(K8S_ENDPOINTSLICE, SLICE_DB, "09:06:12Z", "09:07:00Z"), slice);
	assert_int_equal(digest_edit(K8S_ENDPOINTSLICE, SLICE_DB, "'generation':4", "'generation':5"), slice);

	uint64_t pod = digest_of(K8S_POD, POD_DB);
	assert_int_equal(digest_edit(K8S_POD, POD_DB, "'node-a'", "'node-b'"), pod);
	assert_int_equal(digest_edit(K8S_POD, POD_DB, "'status':'True'", "'status':'False'"), pod);

	// A ConfigMap's labels and binary data are not read; its keys are a set.
	uint64_t cm = digest_of(K8S_CONFIGMAP, KUBE_DNS_CM);
	assert_int_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'812'", "'813'"), cm);
	assert_int_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'AAEC'", "'AAED'"), cm);
	assert_int_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'EnsureExists'", "'Reconcile'"), cm);
	assert_int_equal(digest_of(K8S_CONFIGMAP,
	                           "{'metadata':{'name':'m','namespace':'n'},'data':{'a':'1','b':'2'}}"),
	                 digest_of(K8S_CONFIGMAP,
	                           "{'metadata':{'name':'m','namespace':'n'},'data':{'b':'2','a':'1'}}"));

	// Node heartbeats change nothing DNS reads.
	uint64_t node = digest_of(K8S_NODE, NODE_B);
	assert_int_equal(digest_edit(K8S_NODE, NODE_B, "09:00:00Z", "09:00:40Z"), node);
	assert_int_equal(digest_edit(K8S_NODE, NODE_B, "'resourceVersion':'88'", "'resourceVersion':'89'"), node);
	assert_int_equal(digest_edit(K8S_NODE, NODE_B, "'kubernetes.io/os':'linux'", "'kubernetes.io/os':'windows'"), node);
}

static void digest_ignores_endpoint_and_port_order(void **state)
{
	const char *reordered =
		"{'metadata':{'name':'db-x7k2p','namespace':'shop','labels':{'kubernetes.io/service-name':'db'}},"
		" 'ports':[{'port':5432,'name':'pg'}],"
		" 'endpoints':["
		"  {'targetRef':{'name':'db-1','kind':'Pod'},'hostname':'db-1','conditions':{'ready':false},'addresses':['10.244.2.9']},"
		"  {'hostname':'db-0','zone':'zone-1','addresses':['10.244.1.17'],'targetRef':{'kind':'Pod','name':'db-0'}}],"
		" 'addressType':'IPv4'}";
	assert_int_equal(digest_of(K8S_ENDPOINTSLICE, reordered), digest_of(K8S_ENDPOINTSLICE, SLICE_DB));

	const char *ports_swapped =
		"{'metadata':{'name':'web','namespace':'shop'},"
		" 'spec':{'clusterIPs':['10.96.12.34','fd00:10:96::1234'],"
		"  'ports':[{'name':'grpc','port':9090},{'name':'http','port':80}]}}";
	assert_int_equal(digest_of(K8S_SERVICE, ports_swapped), digest_of(K8S_SERVICE, SVC_DUAL));
}

static void digest_changes_with_every_dns_field(void **state)
{
	struct {
		k8s_kind_t kind;
		const char *sample;
		const char *from;
		const char *to;
	} changes[] = {
		{ K8S_SERVICE, SVC_DUAL, "'name':'web'", "'name':'web2'" },
		{ K8S_SERVICE, SVC_DUAL, "'namespace':'shop'", "'namespace':'shop2'" },
		{ K8S_SERVICE, SVC_DUAL, "'10.96.12.34','fd00", "'10.96.12.35','fd00" },
		{ K8S_SERVICE, SVC_DUAL, "'fd00:10:96::1234'", "'fd00:10:96::1235'" },
		{ K8S_SERVICE, SVC_DUAL, "'10.96.12.34','fd00:10:96::1234'", "'fd00:10:96::1234','10.96.12.34'" },
		{ K8S_SERVICE, SVC_DUAL, "'clusterIPs':['10.96.12.34','fd00:10:96::1234']", "'clusterIPs':['10.96.12.34']" },
		{ K8S_SERVICE, SVC_DUAL, "'port':80", "'port':81" },
		{ K8S_SERVICE, SVC_DUAL, "'name':'http'", "'name':'http2'" },
		{ K8S_SERVICE, SVC_DUAL, "'name':'http','protocol':'TCP'", "'name':'http','protocol':'UDP'" },
		{ K8S_SERVICE, SVC_DUAL, "'type':'ClusterIP',", "'type':'ClusterIP','publishNotReadyAddresses':true," },
		{ K8S_SERVICE, SVC_DUAL, "{'name':'grpc'", "{'name':'grpc2'" },
		{ K8S_SERVICE, SVC_HEADLESS, "'clusterIP':'None','clusterIPs':['None']", "'clusterIP':'10.0.0.1'" },
		{ K8S_SERVICE, SVC_EXTERNAL, "db.example.com", "db.example.org" },
		{ K8S_SERVICE, SVC_EXTERNAL, "'db.example.com'", "'-'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'name':'db-x7k2p'", "'name':'db-x7k2q'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'kubernetes.io/service-name':'db'", "'kubernetes.io/service-name':'db2'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'IPv4'", "'FQDN'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'10.244.1.17'", "'10.244.1.18'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'10.244.1.17'", "'10.244.1.17','10.244.1.18'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'ready':false", "'ready':true" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'hostname':'db-0'", "'hostname':'db-9'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'hostname':'db-0',", "" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'name':'db-0'", "'name':'db-9'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'port':5432", "'port':5433" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'name':'pg'", "'name':'pg2'" },
		{ K8S_ENDPOINTSLICE, SLICE_DB, "'name':'pg','protocol':'TCP'", "'name':'pg','protocol':'SCTP'" },
		{ K8S_ENDPOINTSLICE, SLICE_MCS, "'cluster-b'", "'cluster-c'" },
		{ K8S_ENDPOINTSLICE, SLICE_MCS, "'multicluster.kubernetes.io/service-name':'db'", "'multicluster.kubernetes.io/service-name':'db2'" },
		{ K8S_POD, POD_DB, "'Running'", "'Failed'" },
		{ K8S_POD, POD_DB, "'nodeName':'node-a'", "'nodeName':'node-a','hostNetwork':true" },
		{ K8S_POD, POD_DB, "{'ip':'10.244.1.17'}", "{'ip':'10.244.1.18'}" },
		{ K8S_NAMESPACE, NS_SHOP, "'name':'shop'", "'name':'shop2'" },
		{ K8S_SERVICEIMPORT, IMPORT_WEB, "'ClusterSetIP'", "'Headless'" },
		{ K8S_SERVICEIMPORT, IMPORT_WEB, "'10.42.0.10'", "'10.42.0.11'" },
		{ K8S_SERVICEIMPORT, IMPORT_WEB, "'port':80", "'port':8080" },
		{ K8S_CLUSTERPROPERTY, CLUSTER_ID, "'cluster-a'", "'cluster-b'" },
		{ K8S_NODE, NODE_B, "'eu-west1-b'", "'eu-west1-c'" },
		{ K8S_NODE, NODE_B, "'eu-west1',", "'eu-west2'," },
		{ K8S_NODE, NODE_B, "'name':'node-b'", "'name':'node-c'" },
	};
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		uint64_t before = digest_of(changes[i].kind, changes[i].sample);
		uint64_t after = digest_edit(changes[i].kind, changes[i].sample, changes[i].from, changes[i].to);
		if (before == after) {
			fail_msg("digest unchanged by %s -> %s", changes[i].from, changes[i].to);
		}
	}
	// Every key and value of a ConfigMap (what its readers get).
	uint64_t cm = digest_of(K8S_CONFIGMAP, KUBE_DNS_CM);
	assert_int_not_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "node-1", "node-2"), cm);
	assert_int_not_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'NodeHosts'", "'NodeHost'"), cm);
	assert_int_not_equal(digest_edit(K8S_CONFIGMAP, KUBE_DNS_CM, "'NodeHosts':'192.168.1.10 node-1\\n'",
	                                 "'NodeHosts':'192.168.1.10 node-1\\n','x':''"), cm);
}

static void digest_differs_between_kinds_with_the_same_name(void **state)
{
	uint64_t ns = digest_of(K8S_NAMESPACE, "{'metadata':{'name':'web'}}");
	uint64_t svc = digest_of(K8S_SERVICE, "{'metadata':{'name':'shop','namespace':'web'}}");
	uint64_t svc2 = digest_of(K8S_SERVICE, "{'metadata':{'name':'web','namespace':'shop'}}");
	assert_int_not_equal(ns, svc);
	assert_int_not_equal(svc, svc2);
}

/* --- names --------------------------------------------------------------------- */

static void kind_and_proto_names(void **state)
{
	assert_string_equal(k8s_kind_name(K8S_SERVICE), "services");
	assert_string_equal(k8s_kind_name(K8S_ENDPOINTSLICE), "endpointslices");
	assert_string_equal(k8s_kind_name(K8S_NAMESPACE), "namespaces");
	assert_string_equal(k8s_kind_name(K8S_POD), "pods");
	assert_string_equal(k8s_kind_name(K8S_SERVICEIMPORT), "serviceimports");
	assert_string_equal(k8s_kind_name(K8S_CLUSTERPROPERTY), "clusterproperties");
	assert_string_equal(k8s_kind_name(K8S_NODE), "nodes");
	assert_string_equal(k8s_kind_name(K8S_CONFIGMAP), "configmaps");
	assert_string_equal(k8s_kind_name(K8S_KIND_COUNT), "unknown");
	assert_string_equal(k8s_proto_name(K8S_PROTO_TCP), "tcp");
	assert_string_equal(k8s_proto_name(K8S_PROTO_UDP), "udp");
	assert_string_equal(k8s_proto_name(K8S_PROTO_SCTP), "sctp");
	assert_string_equal(k8s_proto_name(K8S_PROTO_COUNT), "unknown");
	k8s_object_free(NULL);
}

/* --- json value limits -------------------------------------------------------- */

/* A Service whose metadata.managedFields holds \a n copies of \a elem (json-c builds them all). */
static char *service_padded(const char *elem, size_t n)
{
	static const char head[] = "{\"metadata\":{\"name\":\"big\",\"namespace\":\"shop\","
	                           "\"managedFields\":[";
	static const char tail[] = "]},\"spec\":{\"clusterIP\":\"10.96.0.9\"}}";
	size_t elen = strlen(elem);
	char *text = malloc(sizeof(head) + n * (elen + 1) + sizeof(tail));
	assert_non_null(text);
	char *p = text;
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			*p++ = ',';
		}
		memcpy(p, elem, elen);
		p += elen;
	}
	memcpy(p, tail, sizeof(tail));
	return text;
}

static void objects_over_the_json_object_limit_are_refused_before_parsing(void **state)
{
	// 64 Ki "{}" took json-c 50 MiB; 5.6 M of them, 16 MiB of text, took 4.2 GiB.
	k8s_object_t *obj = NULL;
	char err[128] = "";
	char *text = service_padded("{}", K8S_JSON_OBJECTS_MAX + 1);
	assert_int_equal(k8s_object_decode(K8S_SERVICE, text, strlen(text), &obj, err, sizeof(err)),
	                 KNOT_ESPACE);
	assert_null(obj);
	assert_string_equal(err, "more than 65536 json objects");
	free(text);

	// The root and metadata are objects too: this many fit.
	text = service_padded("{}", K8S_JSON_OBJECTS_MAX - 3);
	assert_int_equal(k8s_object_decode(K8S_SERVICE, text, strlen(text), &obj, err, sizeof(err)),
	                 KNOT_EOK);
	k8s_object_free(obj);
	free(text);
}

static void objects_over_the_json_value_limit_are_refused_before_parsing(void **state)
{
	k8s_object_t *obj = NULL;
	char err[128] = "";
	char *text = service_padded("0", K8S_JSON_VALUES_MAX);
	assert_int_equal(k8s_object_decode(K8S_SERVICE, text, strlen(text), &obj, err, sizeof(err)),
	                 KNOT_ESPACE);
	assert_string_equal(err, "more than 262144 json values");
	free(text);

	k8s_event_t ev;
	char *line = NULL;
	text = service_padded("\"x\"", K8S_JSON_VALUES_MAX);
	assert_true(asprintf(&line, "{\"type\":\"ADDED\",\"object\":%s}", text) > 0);
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	assert_int_equal(k8s_event_decode(&tape, K8S_SERVICE, line, strlen(line), &ev, err, sizeof(err)),
	                 KNOT_ESPACE);
	k8s_jtape_deinit(&tape);
	assert_null(ev.obj);
	free(line);
	free(text);
}

static void json_limits_count_values_not_keys_nor_string_contents(void **state)
{
	char err[64];
	// Keys, and brackets, commas or escaped quotes inside strings, are not values.
	const char *text = "{\"a\":\"[{,}]\\\"{\",\"b\":[1,true,null,{\"c\":-2.5e3}],\"d\":{}}";
	assert_int_equal(k8s_json_bounded(text, strlen(text), err, sizeof(err)), KNOT_EOK);

	// {"k0":0,...}: the object and its N members' values, keys not counted.
	size_t n = K8S_JSON_VALUES_MAX - 1;
	char *members = malloc(n * 16 + 8);
	assert_non_null(members);
	size_t mlen = 0;
	members[mlen++] = '{';
	for (size_t i = 0; i < n; i++) {
		mlen += sprintf(members + mlen, "%s\"k%zu\":0", i > 0 ? "," : "", i);
	}
	members[mlen++] = '}';
	assert_int_equal(k8s_json_bounded(members, mlen, err, sizeof(err)), KNOT_EOK);
	memcpy(members + mlen - 1, ",\"z\":0}", 7);
	assert_int_equal(k8s_json_bounded(members, mlen + 6, err, sizeof(err)), KNOT_ESPACE);
	// Brackets inside a string are text.
	memset(members, '{', mlen);
	members[0] = '"';
	members[mlen - 1] = '"';
	assert_int_equal(k8s_json_bounded(members, mlen, err, sizeof(err)), KNOT_EOK);
	free(members);

	// An EndpointSlice at the API's limits (1000 endpoints of 100 addresses) is within them.
	size_t cap = 8 * 1024 * 1024, len = 0;
	char *slice = malloc(cap);
	assert_non_null(slice);
	len += snprintf(slice + len, cap - len, "{\"metadata\":{\"name\":\"s\",\"namespace\":\"n\"},"
	                "\"addressType\":\"IPv4\",\"endpoints\":[");
	for (int e = 0; e < 1000; e++) {
		len += snprintf(slice + len, cap - len, "%s{\"addresses\":[", e > 0 ? "," : "");
		for (int a = 0; a < 100; a++) {
			len += snprintf(slice + len, cap - len, "%s\"10.%d.%d.%d\"", a > 0 ? "," : "",
			                e / 256, e % 256, a);
		}
		len += snprintf(slice + len, cap - len, "],\"conditions\":{\"ready\":true,"
		                "\"serving\":true,\"terminating\":false},\"nodeName\":\"node-1\","
		                "\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"n\",\"name\":\"p-%d\"},"
		                "\"zone\":\"z\",\"hints\":{\"forZones\":[{\"name\":\"z\"}]}}", e);
	}
	len += snprintf(slice + len, cap - len, "],\"ports\":[{\"name\":\"http\",\"port\":80}]}");
	assert_true(len < K8S_OBJECT_MAX); // What fits the byte limit must fit these.
	assert_int_equal(k8s_json_bounded(slice, len, err, sizeof(err)), KNOT_EOK);
	k8s_object_t *obj = NULL;
	assert_int_equal(k8s_object_decode(K8S_ENDPOINTSLICE, slice, len, &obj, err, sizeof(err)),
	                 KNOT_EOK);
	k8s_object_free(obj);
	free(slice);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(service_dual_stack_keeps_both_cluster_ips_and_ports),
		cmocka_unit_test(service_without_cluster_ips_falls_back_to_cluster_ip),
		cmocka_unit_test(service_keeps_at_most_two_valid_cluster_ips),
		cmocka_unit_test(service_headless_is_cluster_ip_none),
		cmocka_unit_test(service_nodeport_and_loadbalancer_are_cluster_ip),
		cmocka_unit_test(a_load_balancer_keeps_its_first_two_ingress_ips_and_they_change_the_digest),
		cmocka_unit_test(external_addresses_are_the_specs_then_the_load_balancers),
		cmocka_unit_test(slice_endpoint_zone_is_kept_lowercase_when_a_dns_name),
		cmocka_unit_test(service_externalname_keeps_lowercase_target),
		cmocka_unit_test(service_externalname_invalid_target_is_null),
		cmocka_unit_test(service_publish_not_ready_from_spec),
		cmocka_unit_test(service_publish_not_ready_from_tolerate_unready_annotation),
		cmocka_unit_test(service_port_protocol_defaults_to_tcp_and_unknown_is_skipped),
		cmocka_unit_test(service_port_number_outside_range_is_zero),
		cmocka_unit_test(service_port_invalid_name_is_null),
		cmocka_unit_test(service_without_ports_has_none),
		cmocka_unit_test(slice_sample_decodes_endpoints_ports_and_labels),
		cmocka_unit_test(slice_multi_address_endpoint_is_flattened_sharing_names),
		cmocka_unit_test(slice_ready_absent_or_null_means_ready),
		cmocka_unit_test(slice_ready_false_is_not_ready),
		cmocka_unit_test(slice_fqdn_and_unknown_address_types_have_no_family_and_no_endpoints),
		cmocka_unit_test(slice_addresses_of_the_other_family_are_skipped),
		cmocka_unit_test(slice_ipv6_forms_are_parsed_and_invalid_ones_skipped),
		cmocka_unit_test(slice_invalid_ipv4_forms_are_skipped),
		cmocka_unit_test(slice_port_null_means_all_ports),
		cmocka_unit_test(slice_multicluster_labels_are_read),
		cmocka_unit_test(slice_source_cluster_may_be_two_labels),
		cmocka_unit_test(slice_service_name_label_is_lowercased_or_dropped),
		cmocka_unit_test(slice_target_is_only_a_pod_name),
		cmocka_unit_test(slice_invalid_hostname_and_target_become_null),
		cmocka_unit_test(slice_null_empty_and_absent_lists_are_empty),
		cmocka_unit_test(slice_name_may_be_a_dns_subdomain),
		cmocka_unit_test(object_names_are_checked_as_the_api_server_checks_them),
		cmocka_unit_test(port_names_are_dns_labels),
		cmocka_unit_test(slice_pod_names_that_are_no_label_are_kept_aside),
		cmocka_unit_test(slice_trigger_time_is_read),
		cmocka_unit_test(pod_running_is_live_with_both_ips),
		cmocka_unit_test(pod_pending_is_live_and_finished_phases_are_not),
		cmocka_unit_test(pod_being_deleted_is_not_live),
		cmocka_unit_test(pod_host_network_is_read),
		cmocka_unit_test(pod_without_pod_ips_falls_back_to_pod_ip),
		cmocka_unit_test(pod_name_may_be_a_dns_subdomain),
		cmocka_unit_test(namespace_is_cluster_scoped),
		cmocka_unit_test(serviceimport_cluster_set_ip_and_headless),
		cmocka_unit_test(clusterproperty_keeps_name_and_value),
		cmocka_unit_test(configmap_keeps_its_data_keys_and_values),
		cmocka_unit_test(configmap_keys_are_checked_as_the_api_server_checks_them),
		cmocka_unit_test(configmap_over_its_caps_is_skipped),
		cmocka_unit_test(node_keeps_name_zone_and_region),
		cmocka_unit_test(node_falls_back_to_the_failure_domain_labels),
		cmocka_unit_test(node_without_topology_labels_has_none),
		cmocka_unit_test(node_topology_values_must_be_dns_names),
		cmocka_unit_test(unknown_fields_are_ignored),
		cmocka_unit_test(wrong_types_read_as_absent),
		cmocka_unit_test(name_that_is_no_dns_label_is_rejected),
		cmocka_unit_test(name_with_invalid_utf8_is_rejected),
		cmocka_unit_test(very_long_name_is_rejected),
		cmocka_unit_test(missing_metadata_name_or_namespace_is_rejected),
		cmocka_unit_test(kind_field_must_match_when_present),
		cmocka_unit_test(non_object_json_is_malformed),
		cmocka_unit_test(malformed_json_is_rejected),
		cmocka_unit_test(trailing_whitespace_is_allowed),
		cmocka_unit_test(truncated_json_is_malformed_at_every_length),
		cmocka_unit_test(nesting_beyond_the_depth_limit_is_malformed),
		cmocka_unit_test(three_mib_annotation_is_decoded),
		cmocka_unit_test(mutated_objects_decode_or_fail_cleanly),
		cmocka_unit_test(event_added_modified_deleted_carry_the_object_and_rv),
		cmocka_unit_test(event_bookmark_zero_valued_objects_give_only_the_rv),
		cmocka_unit_test(event_bookmark_marks_the_end_of_initial_events),
		cmocka_unit_test(event_error_410_gives_the_status),
		cmocka_unit_test(event_error_reads_retry_after),
		cmocka_unit_test(event_unknown_type_is_invalid),
		cmocka_unit_test(event_without_object_is_invalid),
		cmocka_unit_test(event_with_invalid_object_fails_without_object),
		cmocka_unit_test(event_resource_version_must_fit),
		cmocka_unit_test(status_json_body_is_read),
		cmocka_unit_test(status_plain_text_body_gives_its_first_line),
		cmocka_unit_test(status_empty_or_odd_body_gives_zeros),
		cmocka_unit_test(status_message_is_truncated_and_cleaned),
		cmocka_unit_test(time_parse_reads_rfc3339),
		cmocka_unit_test(time_parse_rejects_other_forms),
		cmocka_unit_test(digest_ignores_what_makes_no_records),
		cmocka_unit_test(digest_ignores_endpoint_and_port_order),
		cmocka_unit_test(an_address_reads_as_inet_pton_reads_it),
		cmocka_unit_test(digest_changes_with_every_dns_field),
		cmocka_unit_test(digest_differs_between_kinds_with_the_same_name),
		cmocka_unit_test(kind_and_proto_names),
		cmocka_unit_test(objects_over_the_json_object_limit_are_refused_before_parsing),
		cmocka_unit_test(objects_over_the_json_value_limit_are_refused_before_parsing),
		cmocka_unit_test(json_limits_count_values_not_keys_nor_string_contents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
