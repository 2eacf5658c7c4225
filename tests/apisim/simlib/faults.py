"""Tunables, switchable faults and request counters, shared by the API server and the control API."""

import collections
import threading
import time

# Tunables a test may change at run time (POST /config), with their defaults.
CONFIG_DEFAULTS = {
    "bookmark_interval": 60.0,        # seconds between periodic BOOKMARKs (real: about 1 min)
    "pretty_user_agents": True,       # pretty-print non-stream bodies for curl/Wget/Mozilla UAs
    "split_probability": 0.3,         # chance that a watch write is split into two chunks
    "bookmark_creation_timestamp_null": True,   # 1.32 bookmarks carry "creationTimestamp":null
    "empty_items_null": False,        # encode an empty LIST as "items":null instead of []
    "too_large_wait": 3.0,            # seconds a LIST waits for a too-new RV before 504
    "watch_queue_limit": 100000,      # events queued for a slow watcher before it is closed
    "gzip_threshold": 128 * 1024,     # gzip non-watch bodies larger than this when accepted
    "watch_cache": True,              # False: LISTs go to etcd, as with --watch-cache=false
    "watch_list": "served",           # sendInitialEvents: "served" (1.34+), "refused" (422, the
                                      # WatchList gate off: 1.27-1.31, 1.33), "ignored" (as unknown)
}

APF_TEXT = "Too many requests, please try again later.\n"


class State:
    """Everything the control API can switch, read by request handlers."""

    def __init__(self):
        self.lock = threading.Lock()
        self.config = dict(CONFIG_DEFAULTS)
        self.too_many = []          # rules: {"count", "body", "retry_after", "match", "verbs"}
        self.hang = {}              # resource plural or "*" -> True
        self.slow_list = {}         # resource plural or "*" -> bytes per second
        self.forbid = set()         # resource plurals answered with 403
        self.absent = set()         # resource plurals served as "404 page not found"
        self.initializing_until = 0.0
        self.requests = collections.Counter()     # "GET /api/v1/services"
        self.verbs = collections.Counter()        # "list services"
        self.codes = collections.Counter()        # "200"
        self.watches_opened = collections.Counter()
        self.log = collections.deque(maxlen=10000)
        self.log_seq = 0

    # -- tunables --

    def get(self, name):
        with self.lock:
            return self.config[name]

    def set_config(self, values):
        with self.lock:
            unknown = [k for k in values if k not in self.config]
            if unknown:
                raise KeyError(", ".join(unknown))
            for key, value in values.items():
                self.config[key] = type(CONFIG_DEFAULTS[key])(value)

    # -- faults --

    def take_too_many(self, verb, path):
        """The 429 rule this request consumes, or None."""
        with self.lock:
            for rule in self.too_many:
                if rule["match"] and rule["match"] not in path:
                    continue
                if rule["verbs"] and verb not in rule["verbs"]:
                    continue
                rule["count"] -= 1
                if rule["count"] <= 0:
                    self.too_many.remove(rule)
                return dict(rule)
            return None

    def hung(self, plural):
        with self.lock:
            return bool(self.hang.get(plural) or self.hang.get("*"))

    def list_rate(self, plural):
        with self.lock:
            return self.slow_list.get(plural) or self.slow_list.get("*") or 0

    def initializing(self):
        """Seconds left of the "storage is (re)initializing" phase after a restart, or 0."""
        with self.lock:
            return max(0.0, self.initializing_until - time.monotonic())

    def clear_faults(self):
        with self.lock:
            self.too_many.clear()
            self.hang.clear()
            self.slow_list.clear()
            self.forbid.clear()
            self.initializing_until = 0.0

    # -- counters --

    def count(self, method, path, query, verb, resource, code, served_from=None):
        with self.lock:
            self.requests[f"{method} {path}"] += 1
            if verb:
                self.verbs[f"{verb} {resource}" if resource else verb] += 1
            self.codes[str(code)] += 1
            self.log_seq += 1
            self.log.append({"seq": self.log_seq, "time": time.time(), "method": method,
                             "path": path, "query": query, "verb": verb, "resource": resource,
                             "code": code, "served_from": served_from})

    def counters(self, open_watches):
        with self.lock:
            return {"requests": dict(self.requests), "verbs": dict(self.verbs),
                    "codes": dict(self.codes), "watches_opened": dict(self.watches_opened),
                    "open_watches": open_watches, "last_seq": self.log_seq}

    def requests_since(self, seq):
        with self.lock:
            return [entry for entry in self.log if entry["seq"] > seq]

    def reset_counters(self):
        with self.lock:
            self.requests.clear()
            self.verbs.clear()
            self.codes.clear()
            self.watches_opened.clear()
