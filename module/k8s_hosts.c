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
 * knotd glue of the hosts table (hosts/hosts.h), CoreDNS's *hosts* plugin: the
 * hosts-* options, a holder per distinct settings shared by the instances that use
 * them (the global instance and the zones), its thread that re-reads the file every
 * hosts-reload and follows the ConfigMap key on the board (store/configmaps.h) once a
 * second, publishing a new table under RCU, and the hooks: a global BEGIN hook for
 * names in no zone (before the forwarder's), a zone's ANSWER hook before mod-k8s's
 * own (CoreDNS runs hosts before kubernetes).
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libknot/yparser/yptrafo.h>

#include "hosts/hosts.h"
#include "k8s_glue.h"
#include "kinds/objects.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/dnsname.h"
#include "lib/ticker.h"
#include "lib/tsan_rcu.h"
#include "store/configmaps.h"


/*! \brief The ConfigMap's board is looked at this often. */
#define BOARD_CHECK_MS 1000

/*! \brief What a file looked like when read: a change of any of these is re-read. */
typedef struct {
	bool present;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} stamp_t;

/*! \brief A hosts table and the instances that use its settings. */
struct k8s_hosts_holder {
	struct k8s_hosts_holder *next;
	size_t refs;
	char *key;                   /*!< The settings as text: equal ones share a holder. */
	k8s_hosts_conf_t conf;
	knot_dname_t **zones, **fall;
	char *file;                  /*!< hosts-file, or NULL. */
	char *cm_ns, *cm_name, *cm_key; /*!< hosts-configmap, or NULL. */
	char *entries;               /*!< hosts-entry lines, joined. */
	size_t entries_len;
	unsigned reload_s;
	k8s_hosts_t *table;          /*!< Read by the hooks under RCU; replaced by the thread. */
	knotd_mod_t *log_mod;        /*!< Under registry_lock. */

	k8s_ticker_t ticker;         /*!< Its thread: the board once a second, the file every reload_s. */
	uint64_t next_stat;          /*!< When the file is looked at next (k8s_now_ms()). */
	stamp_t stamp;               /*!< The file's, as last read. */
	char *text;                  /*!< The file's or the key's text in the table. */
	size_t text_len;
	uint64_t cm_gen;             /*!< The board's generation in the table. */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_hosts_holder_t *registry;

static void holder_log(k8s_hosts_holder_t *h, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void holder_log(k8s_hosts_holder_t *h, int priority, const char *fmt, ...)
{
	char msg[512];
	va_list args;
	va_start(args, fmt);
	vsnprintf(msg, sizeof(msg), fmt, args);
	va_end(args);
	pthread_mutex_lock(&registry_lock);
	if (h->log_mod != NULL) {
		knotd_mod_log(h->log_mod, priority, "%s", msg);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* --- options ------------------------------------------------------------------------- */

int k8s_hosts_check_file(knotd_conf_check_args_t *args)
{
	const char *path = yp_str(args->data);
	if (path[0] != '/' || strlen(path) > 1024) {
		args->err_str = "hosts-file must be an absolute file name";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief A part of an option's text. */
typedef struct {
	const char *ptr;
	size_t len;
} part_t;

/*! \brief "<namespace>/<name>/<key>" into its parts (pointers into \a text, lengths). */
static bool configmap_split(const char *text, part_t parts[3])
{
	const char *at = text;
	for (int i = 0; i < 3; i++) {
		const char *end = (i < 2) ? strchr(at, '/') : at + strlen(at);
		if (end == NULL) {
			return false;
		}
		parts[i] = (part_t){ at, (size_t)(end - at) };
		at = end + 1;
	}
	return k8s_dns_label_valid(parts[0].ptr, parts[0].len, false) &&
	       k8s_dns_subdomain_valid(parts[1].ptr, parts[1].len) &&
	       k8s_configmap_key_valid(parts[2].ptr, parts[2].len);
}

int k8s_hosts_check_configmap(knotd_conf_check_args_t *args)
{
	part_t parts[3];
	if (!configmap_split(yp_str(args->data), parts)) {
		args->err_str = "hosts-configmap must be NAMESPACE/NAME/KEY (a namespace, a "
		                "configmap's name, one of its keys)";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

int k8s_hosts_check_entry(knotd_conf_check_args_t *args)
{
	const char *line = yp_str(args->data);
	k8s_hosts_conf_t conf = { .ttl = 1 };
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&conf);
	k8s_hosts_stats_t st = { 0 };
	if (b == NULL || k8s_hosts_parse(b, line, strlen(line)) != KNOT_EOK) {
		k8s_hosts_builder_free(b);
		return KNOT_ENOMEM;
	}
	k8s_hosts_free(k8s_hosts_build(b, &st));
	if (st.lines != 1 || st.skipped > 0 || strchr(line, '\n') != NULL) {
		args->err_str = "hosts-entry must be one hosts line: an IP address and names";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief A DNAME list option, lowercased (freed with list_free()). */
static int dname_list(check_ctx_t *check, const yp_name_t *item, knot_dname_t ***out,
                      size_t *count)
{
	knotd_conf_t conf = k8s_glue_option(check, item);
	*out = calloc(conf.count + 1, sizeof(knot_dname_t *));
	*count = 0;
	int ret = (*out == NULL) ? KNOT_ENOMEM : KNOT_EOK;
	for (size_t i = 0; ret == KNOT_EOK && i < conf.count; i++) {
		(*out)[i] = k8s_glue_dname_lower(conf.multi[i].dname);
		ret = ((*out)[i] == NULL) ? KNOT_ENOMEM : KNOT_EOK;
		*count += (ret == KNOT_EOK);
	}
	knotd_conf_free(&conf);
	return ret;
}

static void list_free(knot_dname_t **list, size_t count)
{
	for (size_t i = 0; list != NULL && i < count; i++) {
		free(list[i]);
	}
	free(list);
}

static void holder_free(k8s_hosts_holder_t *h)
{
	k8s_ticker_stop(&h->ticker);
	// The last instance is unloaded: no hook reads the table any more.
	k8s_hosts_free(h->table);
	list_free(h->zones, h->conf.zone_count);
	list_free(h->fall, h->conf.fall_count);
	free(h->key);
	free(h->file);
	free(h->cm_ns);
	free(h->cm_name);
	free(h->cm_key);
	free(h->entries);
	free(h->text);
	free(h);
}

/*! \brief Appends text to a growing settings key. */
static void key_add(k8s_buf_t *key, const char *label, const char *value)
{
	(void)k8s_buf_append(key, label, strlen(label), SIZE_MAX);
	(void)k8s_buf_append(key, value, strlen(value) + 1, SIZE_MAX);
}

static void key_add_names(k8s_buf_t *key, const char *label, knot_dname_t **names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		char text[KNOT_DNAME_TXT_MAXLEN + 1];
		key_add(key, label, knot_dname_to_str(text, names[i], sizeof(text)) ? text : "?");
	}
}

/*!
 * \brief The instance's hosts settings into a new holder (not started, not shared yet),
 * checked; NULL in \a out when the instance has none.
 */
static int holder_read(check_ctx_t *check, k8s_hosts_holder_t **out)
{
	*out = NULL;
	knotd_conf_t file = k8s_glue_option(check, K8S_OPT(HOSTS_FILE));
	knotd_conf_t cm = k8s_glue_option(check, K8S_OPT(HOSTS_CONFIGMAP));
	knotd_conf_t entries = k8s_glue_option(check, K8S_OPT(HOSTS_ENTRY));
	int ret = KNOT_EOK;
	if (file.count == 0 && cm.count == 0 && entries.count == 0) {
		goto out;
	}
	if (file.count > 0 && cm.count > 0) {
		ret = k8s_glue_refuse(check, "hosts-file and hosts-configmap exclude each other");
		goto out;
	}
	k8s_hosts_holder_t *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		ret = KNOT_ENOMEM;
		goto out;
	}
	*out = h;

	h->conf.ttl = k8s_glue_option(check, K8S_OPT(HOSTS_TTL)).single.integer;
	h->conf.no_reverse = k8s_glue_option(check, K8S_OPT(HOSTS_NO_REVERSE)).single.boolean;
	h->conf.fall_unsupported =
		k8s_glue_option(check, K8S_OPT(HOSTS_FALL_UNSUPPORTED)).single.boolean;
	h->reload_s = k8s_glue_option(check, K8S_OPT(HOSTS_RELOAD)).single.integer;
	ret = dname_list(check, K8S_OPT(HOSTS_ZONE), &h->zones, &h->conf.zone_count);
	if (ret == KNOT_EOK) {
		ret = dname_list(check, K8S_OPT(HOSTS_FALLTHROUGH), &h->fall, &h->conf.fall_count);
	}
	h->conf.zones = (const knot_dname_t *const *)h->zones;
	h->conf.fall = (const knot_dname_t *const *)h->fall;
	if (ret == KNOT_EOK && h->conf.fall_unsupported && h->conf.fall_count == 0) {
		ret = k8s_glue_refuse(check, "hosts-fallthrough-unsupported needs hosts-fallthrough");
	}
	if (ret == KNOT_EOK && file.count > 0) {
		h->file = strdup(file.single.string);
		ret = (h->file == NULL) ? KNOT_ENOMEM : KNOT_EOK;
	}
	part_t parts[3];
	if (ret == KNOT_EOK && cm.count > 0 && configmap_split(cm.single.string, parts)) {
		h->cm_ns = strndup(parts[0].ptr, parts[0].len);
		h->cm_name = strndup(parts[1].ptr, parts[1].len);
		h->cm_key = strndup(parts[2].ptr, parts[2].len);
		ret = (h->cm_ns == NULL || h->cm_name == NULL || h->cm_key == NULL) ? KNOT_ENOMEM
		                                                                    : KNOT_EOK;
	}
	k8s_buf_t lines = { 0 }, key = { 0 };
	for (size_t i = 0; ret == KNOT_EOK && i < entries.count; i++) {
		ret = k8s_buf_append(&lines, entries.multi[i].string, strlen(entries.multi[i].string),
		                     SIZE_MAX);
		if (ret == KNOT_EOK) {
			ret = k8s_buf_append(&lines, "\n", 1, SIZE_MAX);
		}
	}
	if (ret == KNOT_EOK) {
		h->entries = lines.data;  // Taken over.
		h->entries_len = lines.len;
		lines.data = NULL;
		char num[64];
		key_add(&key, "file=", h->file != NULL ? h->file : "");
		key_add(&key, "configmap=", cm.count > 0 ? cm.single.string : "");
		snprintf(num, sizeof(num), "%u/%u/%d/%d", h->conf.ttl, h->reload_s,
		         h->conf.no_reverse, h->conf.fall_unsupported);
		key_add(&key, "flags=", num);
		key_add_names(&key, "zone=", h->zones, h->conf.zone_count);
		key_add_names(&key, "fall=", h->fall, h->conf.fall_count);
		(void)k8s_buf_append(&key, h->entries != NULL ? h->entries : "", h->entries_len, SIZE_MAX);
		ret = k8s_buf_append(&key, "", 1, SIZE_MAX);
		h->key = key.data;
		key.data = NULL;
	}
	k8s_buf_free(&lines);
	k8s_buf_free(&key);
out:
	knotd_conf_free(&file);
	knotd_conf_free(&cm);
	knotd_conf_free(&entries);
	if (ret != KNOT_EOK && *out != NULL) {
		holder_free(*out);
		*out = NULL;
	}
	return ret;
}

/* --- the table's sources ---------------------------------------------------------- */

static void stamp_of(const char *path, stamp_t *st)
{
	struct stat sb;
	memset(st, 0, sizeof(*st));
	if (stat(path, &sb) == 0) {
		st->present = true;
		st->dev = sb.st_dev;
		st->ino = sb.st_ino;
		st->size = sb.st_size;
		st->mtime = sb.st_mtim;
	}
}

static bool stamp_equal(const stamp_t *a, const stamp_t *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/*! \brief Reads a whole file of at most K8S_HOSTS_TEXT_MAX bytes; the reason in \a why. */
static int file_read(const char *path, char **text, size_t *len, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*why = strerror(errno);
		return KNOT_ENOENT;
	}
	k8s_buf_t buf = { 0 };
	int ret = KNOT_EOK;
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			*why = strerror(errno);
			ret = KNOT_EINVAL;
			break;
		}
		if (n == 0) {
			break;
		}
		ret = k8s_buf_append(&buf, chunk, n, K8S_HOSTS_TEXT_MAX);
		if (ret != KNOT_EOK) {
			*why = (ret == KNOT_ENOMEM) ? "out of memory" : "larger than 32 MiB";
			break;
		}
	}
	close(fd);
	if (ret != KNOT_EOK) {
		k8s_buf_free(&buf);
		return ret;
	}
	*len = buf.len;
	*text = (buf.data != NULL) ? buf.data : strdup("");
	return (*text != NULL) ? KNOT_EOK : KNOT_ENOMEM;
}

/*! \brief A table of \a text and the inline entries, published; the old one freed after a grace period. */
static int publish(k8s_hosts_holder_t *h, const char *source, char *text, size_t len)
{
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&h->conf);
	if (b == NULL || k8s_hosts_parse(b, text, len) != KNOT_EOK ||
	    (h->entries != NULL && k8s_hosts_parse(b, h->entries, h->entries_len) != KNOT_EOK)) {
		k8s_hosts_builder_free(b);
		holder_log(h, LOG_ERR, "hosts, %s not applied (out of memory)", source);
		free(text);
		return KNOT_ENOMEM;
	}
	k8s_hosts_stats_t st;
	k8s_hosts_t *table = k8s_hosts_build(b, &st);
	if (table == NULL) {
		holder_log(h, LOG_ERR, "hosts, %s not applied (out of memory)", source);
		free(text);
		return KNOT_ENOMEM;
	}
	k8s_hosts_t *old = rcu_xchg_pointer(&h->table, table);
	free(h->text);
	h->text = text;
	h->text_len = len;
	holder_log(h, LOG_INFO, "hosts, %s applied (%zu entries from %zu lines; %zu fields "
	           "skipped, %zu names outside the zones, %zu entries over the caps)",
	           source, st.entries, st.lines, st.skipped, st.outside, st.capped);
	if (old != NULL) {
		urcu_memb_synchronize_rcu();  // No hook reads the old table any more.
		k8s_hosts_free(old);
	}
	return KNOT_EOK;
}

/*! \brief The file, when it changed since it was read. */
static void file_check(k8s_hosts_holder_t *h, bool first)
{
	stamp_t now;
	stamp_of(h->file, &now);
	if (!first && stamp_equal(&now, &h->stamp)) {
		return;
	}
	h->stamp = now;
	char *text = NULL;
	size_t len = 0;
	const char *why = "";
	char source[1100];
	snprintf(source, sizeof(source), "file %s", h->file);
	int ret = file_read(h->file, &text, &len, &why);
	if (ret == KNOT_EOK) {
		(void)publish(h, source, text, len);
	} else if (first && ret == KNOT_ENOENT) {
		// As CoreDNS: served without it (the inline entries) until it appears.
		holder_log(h, LOG_WARNING, "hosts, %s not read, the inline entries only (%s)",
		           source, why);
		(void)publish(h, source, strdup(""), 0);
	} else {
		holder_log(h, LOG_WARNING, "hosts, %s not read, the table in use stays (%s)",
		           source, why);
	}
}

/*! \brief The ConfigMap's key, when the board has a new publication of it. */
static void board_check(k8s_hosts_holder_t *h)
{
	k8s_cmstate_t state = k8s_configmaps_state(h->cm_ns, h->cm_name);
	if (state.gen == h->cm_gen) {
		return;
	}
	const char *keys[1] = { h->cm_key };
	char *value = NULL;
	size_t len = 0;
	if (k8s_configmaps_read(h->cm_ns, h->cm_name, keys, 1, &state, &value, &len) != KNOT_EOK) {
		return;  // Out of memory: tried again in a second.
	}
	h->cm_gen = state.gen;
	if (state.gen == 0) {
		return;  // No watcher reads it any more: the table in use stays.
	}
	char source[400];
	snprintf(source, sizeof(source), "configmap %s/%s key %s%s", h->cm_ns, h->cm_name,
	         h->cm_key, !state.present ? " (no such configmap)" :
	                    (value == NULL) ? " (no such key)" : "");
	if (value == NULL) {
		value = strdup("");
		len = 0;
	}
	if (h->text != NULL && len == h->text_len && memcmp(value, h->text, len) == 0) {
		free(value);  // Another key changed.
		return;
	}
	(void)publish(h, source, value, len);
}

/*! \brief The thread's tick: the board's key (once a second), the file (every reload_s). */
static void holder_tick(void *arg)
{
	k8s_hosts_holder_t *h = arg;
	if (h->cm_ns != NULL) {
		board_check(h);
	}
	uint64_t now = k8s_now_ms();
	if (h->file != NULL && now >= h->next_stat) {
		file_check(h, false);
		h->next_stat = now + (uint64_t)h->reload_s * 1000;
	}
}

/*! \brief The first table (a missing file: the inline entries), and the thread if it follows changes. */
static int holder_start(k8s_hosts_holder_t *h)
{
	if (h->file != NULL) {
		file_check(h, true);
	} else {
		char *empty = strdup("");
		if (empty == NULL || publish(h, "hosts-entry", empty, 0) != KNOT_EOK) {
			return KNOT_ENOMEM;
		}
	}
	if (h->table == NULL) {
		return KNOT_ENOMEM;
	}
	// hosts-reload 0: read once, as CoreDNS's reload 0; a ConfigMap is followed all the same.
	if ((h->file != NULL && h->reload_s > 0) || h->cm_ns != NULL) {
		h->next_stat = k8s_now_ms() + (uint64_t)h->reload_s * 1000;
		char what[K8S_BEAT_NAME_MAX];
		if (h->cm_ns != NULL) {
			(void)snprintf(what, sizeof(what), "hosts of ConfigMap %s/%s", h->cm_ns, h->cm_name);
		} else {
			(void)snprintf(what, sizeof(what), "hosts of %s", h->file);
		}
		return k8s_ticker_start(&h->ticker, "k8s-hosts", what, BOARD_CHECK_MS, holder_tick, h);
	}
	return KNOT_EOK;
}

/*! \brief The holder of equal settings, or \a h started and registered; NULL on failure. */
static k8s_hosts_holder_t *acquire(k8s_hosts_holder_t *h, knotd_mod_t *mod, bool global)
{
	pthread_mutex_lock(&registry_lock);
	k8s_hosts_holder_t *found = registry;
	while (found != NULL && strcmp(found->key, h->key) != 0) {
		found = found->next;
	}
	if (found != NULL) {
		found->refs++;
		if (global || found->log_mod == NULL) {
			found->log_mod = mod;
		}
		pthread_mutex_unlock(&registry_lock);
		holder_free(h);
		return found;
	}
	h->log_mod = mod;
	pthread_mutex_unlock(&registry_lock);
	// Not under the lock: the first read logs through it.
	if (holder_start(h) != KNOT_EOK) {
		holder_free(h);
		return NULL;
	}
	pthread_mutex_lock(&registry_lock);
	h->refs = 1;
	h->next = registry;
	registry = h;
	pthread_mutex_unlock(&registry_lock);
	return h;
}

void k8s_hosts_release(k8s_hosts_holder_t *h, knotd_mod_t *mod)
{
	if (h == NULL) {
		return;
	}
	pthread_mutex_lock(&registry_lock);
	if (h->log_mod == mod) {
		h->log_mod = NULL;  // Until another instance acquires it (a reload's new one).
	}
	bool last = (--h->refs == 0);
	if (last) {
		k8s_hosts_holder_t **p = &registry;
		while (*p != h) {
			p = &(*p)->next;
		}
		*p = h->next;
	}
	pthread_mutex_unlock(&registry_lock);
	if (last) {
		holder_free(h);
	}
}

/* --- hooks ------------------------------------------------------------------------- */

/*! \brief Names in no zone (before the forwarder's BEGIN hook). */
static knotd_state_t hosts_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                      knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	if (!k8s_glue_no_zone_query(state, qdata)) {
		return state;
	}
	k8s_tsan_zone_seen();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	if (knot_pkt_begin(pkt, KNOT_ANSWER) != KNOT_EOK) {
		return state;
	}
	urcu_memb_read_lock();
	const k8s_hosts_t *table = rcu_dereference(ctx->hosts->table);
	k8s_hosts_result_t res = k8s_hosts_answer(table, &ctx->hosts->conf,
	                                          qdata->query->lower_qname,
	                                          knot_pkt_qtype(qdata->query), pkt);
	urcu_memb_read_unlock();
	switch (res) {
	case K8S_HOSTS_PASS:
		return state;
	case K8S_HOSTS_HIT:
	case K8S_HOSTS_NODATA:
	case K8S_HOSTS_TRUNC:
		knot_wire_set_aa(pkt->wire);
		qdata->rcode = KNOT_RCODE_NOERROR;
		return KNOTD_STATE_DONE;
	default:
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return KNOTD_STATE_FAIL;
	}
}

/*! \brief A zone's names where its file has none (before mod-k8s's own ANSWER hook). */
static knotd_in_state_t hosts_answer_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                          knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (state != KNOTD_IN_STATE_MISS) {
		return state;
	}
	k8s_tsan_zone_seen();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	urcu_memb_read_lock();
	const k8s_hosts_t *table = rcu_dereference(ctx->hosts->table);
	k8s_hosts_result_t res = k8s_hosts_answer(table, &ctx->hosts->conf, qdata->name,
	                                          knot_pkt_qtype(qdata->query), pkt);
	urcu_memb_read_unlock();
	switch (res) {
	case K8S_HOSTS_PASS:   return state;
	case K8S_HOSTS_HIT:    return KNOTD_IN_STATE_HIT;
	case K8S_HOSTS_NODATA: return KNOTD_IN_STATE_NODATA;
	case K8S_HOSTS_TRUNC:  return KNOTD_IN_STATE_TRUNC;
	default:
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return KNOTD_IN_STATE_ERROR;
	}
}

/* --- load ---------------------------------------------------------------------------- */

int k8s_hosts_read(check_ctx_t *check, k8s_ctx_t *ctx, bool global)
{
	k8s_hosts_holder_t *h = NULL;
	int ret = holder_read(check, &h);
	if (ret != KNOT_EOK || h == NULL || check->mod == NULL) {
		if (h != NULL) {
			holder_free(h);
		}
		return ret;
	}
	ctx->hosts = acquire(h, check->mod, global);
	if (ctx->hosts == NULL) {
		knotd_mod_log(check->mod, LOG_ERR, "failed to start the hosts table (no memory "
		              "or thread)");
		return KNOT_ENOMEM;
	}
	ret = global ? knotd_mod_hook(check->mod, KNOTD_STAGE_BEGIN, hosts_begin_hook)
	             : knotd_mod_in_hook(check->mod, KNOTD_STAGE_ANSWER, hosts_answer_hook);
	if (ret != KNOT_EOK) {
		k8s_hosts_release(ctx->hosts, check->mod);
		ctx->hosts = NULL;
	}
	return ret;
}
