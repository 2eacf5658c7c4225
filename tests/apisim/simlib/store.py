"""Objects, the global resourceVersion, per-resource bounded history and watchers.

One counter stands for etcd's revision: every write of any type takes the next value, the
written object carries it as metadata.resourceVersion, and a LIST reports the current value.
Each type keeps a ring of its recent events, like the watch cache: a watch may start from any
RV at or after the ring's floor (oldest event RV - 1); older RVs are "too old" (410).

Generated objects (generator.py) are not stored one by one: a type may hold one generated
set, index-addressable in key order; a write to a generated key stores an override.
"""

import bisect
import collections
import json
import threading

from . import encoding
from .encoding import ApiError

# Event types on the wire.
ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"


def make_key(namespace, name):
    """The etcd-style key the store orders by: "ns/name", or "name" for cluster-scoped types."""
    return f"{namespace}/{name}" if namespace else name


class Record:
    """A stored object (a dict, never mutated once stored) and its cached JSON."""

    __slots__ = ("rtype", "key", "namespace", "name", "rv", "obj", "_item")

    def __init__(self, rtype, obj):
        meta = obj["metadata"]
        self.rtype = rtype
        self.namespace = meta.get("namespace", "")
        self.name = meta["name"]
        self.key = make_key(self.namespace, self.name)
        self.rv = int(meta["resourceVersion"])
        self.obj = obj
        self._item = None

    def item_json(self):
        """The object as a list item (built-in types without kind/apiVersion)."""
        if self._item is None:
            if self.rtype.builtin:
                self._item = encoding.compact(self.obj)
            else:
                self._item = encoding.compact(self.obj, sort_keys=True)
        return self._item

    def event_json(self):
        """The object as a watch event or GET carries it: with kind and apiVersion."""
        return with_type_meta(self.rtype, self.item_json())

    def to_dict(self):
        return self.obj

    def labels(self):
        return self.obj["metadata"].get("labels") or {}

    def field(self, label):
        from .selectors import field_value
        return field_value(self.obj, label)

    def uid(self):
        return self.obj["metadata"].get("uid", "")

    def owner_uids(self):
        return [ref.get("uid") for ref in self.obj["metadata"].get("ownerReferences") or ()]

    def with_rv(self, rv):
        """A copy carrying another resourceVersion (DELETED events carry the deletion RV)."""
        obj = dict(self.obj)
        obj["metadata"] = dict(obj["metadata"], resourceVersion=str(rv))
        return Record(self.rtype, obj)


class GenRecord:
    """A generated object, produced from its index on demand."""

    __slots__ = ("gen", "index", "key", "namespace", "name", "rv", "rtype")

    def __init__(self, gen, index):
        self.gen = gen
        self.index = index
        self.rtype = gen.rtype
        self.namespace = gen.namespace(index)
        self.name = gen.name(index)
        self.key = make_key(self.namespace, self.name)
        self.rv = gen.rv(index)

    def item_json(self):
        return self.gen.item_json(self.index)

    def event_json(self):
        return with_type_meta(self.rtype, self.item_json())

    def to_dict(self):
        return json.loads(self.item_json())

    def labels(self):
        return self.gen.labels(self.index)

    def field(self, label):
        return self.gen.field(self.index, label)

    def uid(self):
        return self.gen.uid(self.index)

    def owner_uids(self):
        return self.gen.owner_uids(self.index)

    def with_rv(self, rv):
        obj = self.to_dict()
        obj["metadata"]["resourceVersion"] = str(rv)
        return Record(self.rtype, obj)


def with_type_meta(rtype, item_json):
    """Adds kind/apiVersion in front of a built-in item (CRD items already carry them)."""
    if not rtype.builtin:
        return item_json
    return '{"kind":"%s","apiVersion":"%s",%s' % (rtype.kind, rtype.api_version, item_json[1:])


class Event:
    """One write: its RV, the object after it (None when deleted) and before it (None when created)."""

    __slots__ = ("rv", "key", "new", "prev", "_deleted_json")

    def __init__(self, rv, key, new, prev):
        self.rv = rv
        self.key = key
        self.new = new
        self.prev = prev
        self._deleted_json = None

    def object_json(self, event_type):
        """ADDED/MODIFIED carry the new state; DELETED the previous state with this event's RV."""
        if event_type == DELETED:
            if self._deleted_json is None:
                self._deleted_json = self.prev.with_rv(self.rv).event_json()
            return self._deleted_json
        return self.new.event_json()

    def object_record(self, event_type):
        return self.prev.with_rv(self.rv) if event_type == DELETED else self.new


class Watcher:
    """One open watch: its filter and the queue of events waiting to be written."""

    def __init__(self, rtype, namespace, label_selector, field_selector, max_queue=100000):
        self.rtype = rtype
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.start_rv = 0
        self.queue = collections.deque()
        self.wake = threading.Event()
        self.max_queue = max_queue
        self.closed = False       # the store ended this watch (restart, resource removed)
        self.close_mode = "clean"  # "clean": terminating chunk; "drop": connection closed
        self.overflow = False     # the client reads too slowly: end the watch like the cacher does
        self.cut = None           # a pending stream cut (fault), set by the control API

    def selects(self, record):
        if self.namespace and record.namespace != self.namespace:
            return False
        if not self.label_selector.empty and not self.label_selector.matches(record.labels()):
            return False
        if not self.field_selector.empty and not self.field_selector.matches(record.field):
            return False
        return True

    def offer(self, event):
        """Queues the event as this watcher sees it (selector transitions: ADDED/DELETED)."""
        if event.rv <= self.start_rv:
            return
        old_in = event.prev is not None and self.selects(event.prev)
        new_in = event.new is not None and self.selects(event.new)
        if old_in and new_in:
            kind = MODIFIED
        elif new_in:
            kind = ADDED
        elif old_in:
            kind = DELETED
        else:
            return
        self.push((kind, event))

    def push(self, item):
        self.queue.append(item)
        if len(self.queue) > self.max_queue:
            self.overflow = True
        self.wake.set()

    def close(self, mode="clean"):
        self.close_mode = mode
        self.closed = True
        self.wake.set()


class _KeyView:
    """A read-only sequence of a generated set's keys, for bisect."""

    def __init__(self, gen):
        self.gen = gen

    def __len__(self):
        return self.gen.count

    def __getitem__(self, i):
        return self.gen.key(i)


class Snapshot:
    """A consistent view of one type at one RV, iterated in key order."""

    def __init__(self, rtype, rv, gen, overrides, extras):
        self.rtype = rtype
        self.rv = rv
        self.gen = gen
        self.overrides = overrides
        self.extras = extras
        self.extra_keys = sorted(extras)

    def iter_from(self, start="", prefix=""):
        """Records with key >= start (and starting with prefix), in key order."""
        start = max(start, prefix)
        ek, extras = self.extra_keys, self.extras
        j = bisect.bisect_left(ek, start)
        gen = self.gen
        if gen is not None:
            ov = self.overrides
            i = bisect.bisect_left(_KeyView(gen), start)
            for i in range(i, gen.count):
                gkey = gen.key(i)
                if prefix and not gkey.startswith(prefix):
                    break
                while j < len(ek) and ek[j] < gkey:
                    if prefix and not ek[j].startswith(prefix):
                        return
                    yield extras[ek[j]]
                    j += 1
                if ov and gkey in ov:
                    rec = ov[gkey]
                    if rec is not None:
                        yield rec
                else:
                    yield GenRecord(gen, i)
        while j < len(ek):
            if prefix and not ek[j].startswith(prefix):
                return
            yield extras[ek[j]]
            j += 1

    def count_after(self, key):
        """How many objects have a key greater than key (for remainingItemCount)."""
        n = len(self.extra_keys) - bisect.bisect_right(self.extra_keys, key)
        if self.gen is not None:
            first = bisect.bisect_right(_KeyView(self.gen), key)
            n += self.gen.count - first
            for k, rec in self.overrides.items():
                if rec is None and k > key:
                    n -= 1
        return n



class ResourceState:
    """Everything the store keeps for one type."""

    def __init__(self, rtype):
        self.rtype = rtype
        self.gen = None
        self.overrides = {}       # generated key -> Record, or None once deleted
        self.extras = {}          # every other key -> Record
        self.history = collections.deque()
        self.floor = 0            # the oldest RV a watch may start from
        self.watchers = set()


class Store:
    """The object database of the simulator. All methods are thread-safe."""

    def __init__(self, rtypes, history_size=10000, start_rv=100):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = start_rv
        self.history_size = history_size
        self.states = {r.plural: ResourceState(r) for r in rtypes}

    # -- loading (no history, no events: the state before the simulator "started") --

    def reserve(self, count):
        """Takes count consecutive RVs for generated objects; returns the first."""
        with self.lock:
            first = self.rv + 1
            self.rv += count
            return first

    def add_generated(self, gen):
        with self.lock:
            self.states[gen.rtype.plural].gen = gen

    def load(self, rtype, obj):
        """Stores an object as existing before start; its RV is the next value."""
        with self.lock:
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            rec = Record(rtype, obj)
            self._set(self.states[rtype.plural], rec.key, rec)
            return rec

    def seal(self):
        """Ends loading: history starts now, so every RV up to the current one is valid."""
        with self.lock:
            for st in self.states.values():
                st.floor = self.rv

    # -- reads --

    def current_rv(self):
        with self.lock:
            return self.rv

    def wait_for_rv(self, rv, timeout):
        """Waits until the store reached rv; False if it did not within timeout."""
        with self.changed:
            return self.changed.wait_for(lambda: self.rv >= rv, timeout)

    def get(self, rtype, key):
        with self.lock:
            return self._get(self.states[rtype.plural], key)

    def snapshot(self, rtype, at_rv=None):
        """The type's objects at the current RV or, going back through history, at at_rv.

        Raises ApiError 410 when at_rv is older than the history floor."""
        with self.lock:
            st = self.states[rtype.plural]
            overrides, extras = dict(st.overrides), dict(st.extras)
            rv = self.rv
            if at_rv is not None and at_rv < rv:
                if at_rv < st.floor:
                    raise encoding.expired("The resourceVersion for the provided list is too old.")
                for ev in reversed(st.history):
                    if ev.rv <= at_rv:
                        break
                    self._put(st.gen, overrides, extras, ev.key, ev.prev)
                rv = at_rv
            return Snapshot(rtype, rv, st.gen, overrides, extras)

    def floor(self, rtype):
        with self.lock:
            return self.states[rtype.plural].floor

    # -- writes --

    def mutate(self, rtype, key, change):
        """Read-modify-write of one key under the lock.

        change(current Record or None) returns the new object dict, None to delete, or
        the current record itself for "no change"; it may raise ApiError. Returns the
        Event (or None for no change)."""
        with self.lock:
            st = self.states[rtype.plural]
            cur = self._get(st, key)
            new_obj = change(cur)
            if new_obj is cur and cur is not None:
                return None
            if new_obj is None and cur is None:
                raise ApiError(404, "NotFound", f"{rtype.group_resource} \"{key}\" not found")
            self.rv += 1
            if new_obj is None:
                self._set(st, key, None)
                ev = Event(self.rv, key, None, cur)
            else:
                new_obj["metadata"]["resourceVersion"] = str(self.rv)
                rec = Record(rtype, new_obj)
                self._set(st, key, rec)
                ev = Event(self.rv, key, rec, cur)
            self._record(st, ev)
            self.changed.notify_all()
            return ev

    def _record(self, st, ev):
        st.history.append(ev)
        self._trim(st)
        for w in st.watchers:
            w.offer(ev)

    # -- watches --

    def open_watch(self, watcher, rv, initial):
        """Registers a watcher.

        initial=True ("Get State and Start at Most Recent"): returns a Snapshot whose objects
        the caller sends as synthetic ADDED events before the queued ones.  Otherwise queues
        the history after rv ("Start at Exact") and returns None.  Raises ApiError 410 when
        rv is older than the floor."""
        with self.lock:
            st = self.states[watcher.rtype.plural]
            snap = None
            if initial:
                snap = Snapshot(watcher.rtype, self.rv, st.gen, dict(st.overrides), dict(st.extras))
                watcher.start_rv = self.rv
            else:
                if rv < st.floor:
                    raise encoding.expired(f"too old resource version: {rv} ({st.floor})")
                watcher.start_rv = rv
                for ev in st.history:
                    if ev.rv > rv:
                        watcher.offer(ev)
            st.watchers.add(watcher)
            return snap

    def close_watch(self, watcher):
        with self.lock:
            self.states[watcher.rtype.plural].watchers.discard(watcher)

    def bookmark(self, watcher):
        """Queues a BOOKMARK at the current RV behind every event already queued."""
        with self.lock:
            watcher.push((BOOKMARK, max(self.rv, watcher.start_rv)))

    def watchers(self, rtype=None):
        with self.lock:
            out = []
            for st in self.states.values():
                if rtype is None or st.rtype is rtype:
                    out.extend(st.watchers)
            return out

    # -- history control --

    def compact(self):
        """Drops all history: every RV before now becomes too old to watch from."""
        with self.lock:
            for st in self.states.values():
                st.history.clear()
                st.floor = self.rv

    def restart(self):
        """What an API server restart does to the watch cache: history lost, watches ended.

        The RV counter continues (etcd's revision survives a restart)."""
        with self.lock:
            self.compact()
            for st in self.states.values():
                for w in st.watchers:
                    w.close("drop")

    def set_history_size(self, size):
        with self.lock:
            self.history_size = max(1, int(size))
            for st in self.states.values():
                self._trim(st)

    # -- internals --

    def _trim(self, st):
        """Drops the oldest events beyond the history size; the floor follows them."""
        while len(st.history) > self.history_size:
            st.floor = st.history.popleft().rv

    def _get(self, st, key):
        if key in st.extras:
            return st.extras[key]
        if st.gen is not None:
            idx = st.gen.index_of(key)
            if idx is not None:
                if key in st.overrides:
                    return st.overrides[key]
                return GenRecord(st.gen, idx)
        return None

    def _set(self, st, key, rec):
        self._put(st.gen, st.overrides, st.extras, key, rec)

    @staticmethod
    def _put(gen, overrides, extras, key, rec):
        if gen is not None and gen.index_of(key) is not None:
            if isinstance(rec, GenRecord):
                overrides.pop(key, None)
            else:
                overrides[key] = rec
        elif rec is None:
            extras.pop(key, None)
        else:
            extras[key] = rec
