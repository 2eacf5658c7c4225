"""Request bodies in the Kubernetes protobuf encoding (application/vnd.kubernetes.protobuf),
which kubectl's typed clients send (kubectl create namespace, kubectl create service ...).

A body is the magic "k8s\\0" and a runtime.Unknown envelope whose raw bytes are the object's
own message.  That message becomes the JSON dict the same Go object marshals to, so the JSON
path's checks and defaulting run unchanged:
  - fields are read from one table per message (field number -> JSON name, kind, flags),
    written in Go struct order so that keys come out in the order the real server writes;
  - gogo-protobuf always writes non-pointer fields, so a zero scalar is dropped like
    `omitempty` drops it, unless the field is a pointer or has no omitempty (KEEP);
  - sub-messages, maps and lists are present only when sent (a message field that is absent
    stays absent: nothing is defaulted here);
  - unknown field numbers are skipped, as the generated Unmarshal does (the apiserver has no
    strict mode for protobuf, even with fieldValidation=Strict).
Errors carry the generated code's texts ("unexpected EOF", "proto: wrong wireType = 0 for
field Name") inside the apiserver's 400 messages.

Field numbers: k8s.io/api core/v1, k8s.io/apimachinery meta/v1, util/intstr and runtime
generated.proto (v0.32).  Adding a kind is adding its tables and a KINDS entry."""

import datetime
import json
from typing import NamedTuple

from . import objects
from .encoding import bad_request

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
MASK64 = (1 << 64) - 1

KEEP = "keep"           # a pointer field, or a JSON tag without omitempty: zero is kept
REPEATED = "repeated"


class DecodeError(Exception):
    """A body the generated Unmarshal refuses; the text is Go's error text."""


class Scalar(NamedTuple):
    """A scalar kind: its wire type, how to read it, and its Go zero value."""
    wire: int
    read: object
    zero: object


def _signed(value, bits):
    """Two's complement of the low bits of a varint: Go's int32(v) / int64(v)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


STRING = Scalar(2, lambda raw: raw.decode("utf-8", "replace"), "")
BYTES = Scalar(2, bytes, b"")
INT32 = Scalar(0, lambda v: _signed(v, 32), 0)
INT64 = Scalar(0, lambda v: _signed(v, 64), 0)
BOOL = Scalar(0, lambda v: v != 0, False)


class Field(NamedTuple):
    number: int
    name: str
    kind: object        # a Scalar or a Message
    flags: frozenset

    @property
    def wire(self):
        return self.kind.wire if isinstance(self.kind, Scalar) else 2

    @property
    def go_name(self):
        """The Go field name the generated code's errors print (clusterIPs -> ClusterIPs)."""
        for lower in ("api", "uid", "ip"):
            rest = self.name[len(lower):]
            if self.name.startswith(lower) and (not rest or rest[0].isupper()):
                return lower.upper() + rest
        return self.name[:1].upper() + self.name[1:]


class Message:
    """One message's table: rows (number, JSON name, kind, *flags) in Go struct order.

    to_json turns the decoded fields of a type with its own JSON form (Time, IntOrString,
    FieldsV1) into that form; map_entry marks the key/value entries of a map field."""

    def __init__(self, name, *rows, to_json=None, map_entry=False):
        self.name = name
        self.fields = {n: Field(n, json_name, kind, frozenset(flags))
                       for n, json_name, kind, *flags in rows}
        self.order = [row[1] for row in rows]
        self.to_json = to_json
        self.map_entry = map_entry


# -- reading the wire --

def read_varint(data, pos):
    """(value, next position); Go's loop: at most 10 bytes, bits past 64 lost."""
    value = shift = 0
    while True:
        if shift >= 64:
            raise DecodeError("proto: integer overflow")
        if pos >= len(data):
            raise DecodeError("unexpected EOF")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & MASK64, pos
        shift += 7


def read_length(data, pos):
    """(start, end) of a length-delimited value."""
    length, pos = read_varint(data, pos)
    if length >> 63:
        raise DecodeError("proto: negative length found during unmarshaling")
    if pos + length > len(data):
        raise DecodeError("unexpected EOF")
    return pos, pos + length


def skip_field(data, pos):
    """The position after the unknown field starting at pos (skipGenerated, groups too)."""
    depth = 0
    while True:
        tag, pos = read_varint(data, pos)
        wire = tag & 7
        if wire == 0:
            _, pos = read_varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            pos = read_length(data, pos)[1]
        elif wire == 3:
            depth += 1
        elif wire == 4:
            if depth == 0:
                raise DecodeError("proto: unexpected end of group")
            depth -= 1
        elif wire == 5:
            pos += 4
        else:
            raise DecodeError(f"proto: illegal wireType {wire}")
        if pos > len(data):
            raise DecodeError("unexpected EOF")
        if depth == 0:
            return pos


def decode(message, data, values=None):
    """The JSON value of one message; values holds fields of an earlier occurrence of the
    same field, which a later one merges into as proto does."""
    values = dict(values or {})
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = read_varint(data, pos)
        wire, number = tag & 7, _signed(tag >> 3, 32)
        if wire == 4:
            raise DecodeError(f"proto: {message.name}: wiretype end group for non-group")
        if number <= 0:
            raise DecodeError(f"proto: {message.name}: illegal tag {number} (wire type {tag})")
        field = message.fields.get(number)
        if field is None:
            pos = skip_field(data, start)
            continue
        if wire != field.wire:
            raise DecodeError(f"proto: wrong wireType = {wire} for field {field.go_name}")
        if wire == 0:
            raw, pos = read_varint(data, pos)
        else:
            begin, pos = read_length(data, pos)
            raw = data[begin:pos]
        store(field, raw, values)
    ordered = {name: values[name] for name in message.order if name in values}
    return message.to_json(ordered) if message.to_json else ordered


def store(field, raw, values):
    """Sets (or appends to) one field of values from its raw wire value."""
    kind, name = field.kind, field.name
    if isinstance(kind, Message):
        if kind.map_entry:
            entry = decode(kind, raw)
            values.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
        elif REPEATED in field.flags:
            values.setdefault(name, []).append(decode(kind, raw))
        else:
            earlier = values.get(name) if kind.to_json is None else None
            values[name] = decode(kind, raw, earlier)
        return
    value = kind.read(raw)
    if REPEATED in field.flags:
        values.setdefault(name, []).append(value)
    elif value == kind.zero and KEEP not in field.flags:
        values.pop(name, None)
    else:
        values[name] = value


# -- types with their own JSON form --

def _time_json(fields):
    """metav1.Time: an empty message is the zero time (JSON null); seconds, RFC 3339 in UTC
    (the decoder drops nanos, as the real one does)."""
    if not fields:
        return None
    try:
        stamp = datetime.datetime.fromtimestamp(fields.get("seconds", 0), datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise DecodeError(f"proto: Time seconds out of range: {fields.get('seconds')}") from None
    return stamp.isoformat().replace("+00:00", "Z")


def _int_or_string_json(fields):
    kind = fields.get("type", 0)
    if kind not in (0, 1):
        raise DecodeError("impossible IntOrString.Type")
    return fields.get("intVal", 0) if kind == 0 else fields.get("strVal", "")


def _fields_v1_json(fields):
    """metav1.FieldsV1: its Raw bytes are the JSON of the field set."""
    if "Raw" not in fields:
        return None
    try:
        return json.loads(fields["Raw"])
    except ValueError as err:
        raise DecodeError(f"metav1.FieldsV1 is not JSON: {err}") from None


TIME = Message("Timestamp", (1, "seconds", INT64, KEEP), (2, "nanos", INT32, KEEP),
               to_json=_time_json)
INT_OR_STRING = Message("IntOrString", (1, "type", INT64), (2, "intVal", INT32),
                        (3, "strVal", STRING), to_json=_int_or_string_json)
FIELDS_V1 = Message("FieldsV1", (1, "Raw", BYTES, KEEP), to_json=_fields_v1_json)
STRING_MAP = Message("StringMapEntry", (1, "key", STRING), (2, "value", STRING),
                     map_entry=True)

# -- runtime and meta/v1 --

TYPE_META = Message("TypeMeta", (1, "apiVersion", STRING), (2, "kind", STRING))
UNKNOWN = Message("Unknown", (1, "typeMeta", TYPE_META), (2, "raw", BYTES),
                  (3, "contentEncoding", STRING), (4, "contentType", STRING))

OWNER_REFERENCE = Message(
    "OwnerReference",
    (5, "apiVersion", STRING, KEEP), (1, "kind", STRING, KEEP), (3, "name", STRING, KEEP),
    (4, "uid", STRING, KEEP), (6, "controller", BOOL, KEEP),
    (7, "blockOwnerDeletion", BOOL, KEEP))
MANAGED_FIELDS_ENTRY = Message(
    "ManagedFieldsEntry",
    (1, "manager", STRING), (2, "operation", STRING), (3, "apiVersion", STRING),
    (4, "time", TIME), (6, "fieldsType", STRING), (7, "fieldsV1", FIELDS_V1),
    (8, "subresource", STRING))
OBJECT_META = Message(
    "ObjectMeta",
    (1, "name", STRING), (2, "generateName", STRING), (3, "namespace", STRING),
    (4, "selfLink", STRING), (5, "uid", STRING), (6, "resourceVersion", STRING),
    (7, "generation", INT64), (8, "creationTimestamp", TIME), (9, "deletionTimestamp", TIME),
    (10, "deletionGracePeriodSeconds", INT64, KEEP), (11, "labels", STRING_MAP),
    (12, "annotations", STRING_MAP), (13, "ownerReferences", OWNER_REFERENCE, REPEATED),
    (14, "finalizers", STRING, REPEATED), (17, "managedFields", MANAGED_FIELDS_ENTRY, REPEATED))
CONDITION = Message(
    "Condition",
    (1, "type", STRING, KEEP), (2, "status", STRING, KEEP), (3, "observedGeneration", INT64),
    (4, "lastTransitionTime", TIME), (5, "reason", STRING, KEEP),
    (6, "message", STRING, KEEP))

# -- core/v1 Namespace --

NAMESPACE_CONDITION = Message(
    "NamespaceCondition",
    (1, "type", STRING, KEEP), (2, "status", STRING, KEEP), (4, "lastTransitionTime", TIME),
    (5, "reason", STRING), (6, "message", STRING))
NAMESPACE = Message(
    "Namespace",
    (1, "metadata", OBJECT_META),
    (2, "spec", Message("NamespaceSpec", (1, "finalizers", STRING, REPEATED))),
    (3, "status", Message("NamespaceStatus", (1, "phase", STRING),
                          (2, "conditions", NAMESPACE_CONDITION, REPEATED))))

# -- core/v1 Service --

SERVICE_PORT = Message(
    "ServicePort",
    (1, "name", STRING), (2, "protocol", STRING), (6, "appProtocol", STRING, KEEP),
    (3, "port", INT32, KEEP), (4, "targetPort", INT_OR_STRING), (5, "nodePort", INT32))
SESSION_AFFINITY_CONFIG = Message(
    "SessionAffinityConfig",
    (1, "clientIP", Message("ClientIPConfig", (1, "timeoutSeconds", INT32, KEEP))))
SERVICE_SPEC = Message(
    "ServiceSpec",
    (1, "ports", SERVICE_PORT, REPEATED), (2, "selector", STRING_MAP),
    (3, "clusterIP", STRING), (18, "clusterIPs", STRING, REPEATED), (4, "type", STRING),
    (5, "externalIPs", STRING, REPEATED), (7, "sessionAffinity", STRING),
    (8, "loadBalancerIP", STRING), (9, "loadBalancerSourceRanges", STRING, REPEATED),
    (10, "externalName", STRING), (11, "externalTrafficPolicy", STRING),
    (12, "healthCheckNodePort", INT32), (13, "publishNotReadyAddresses", BOOL),
    (14, "sessionAffinityConfig", SESSION_AFFINITY_CONFIG),
    (19, "ipFamilies", STRING, REPEATED), (17, "ipFamilyPolicy", STRING, KEEP),
    (20, "allocateLoadBalancerNodePorts", BOOL, KEEP), (21, "loadBalancerClass", STRING, KEEP),
    (22, "internalTrafficPolicy", STRING, KEEP), (23, "trafficDistribution", STRING, KEEP))
PORT_STATUS = Message(
    "PortStatus",
    (1, "port", INT32, KEEP), (2, "protocol", STRING, KEEP), (3, "error", STRING, KEEP))
LOAD_BALANCER_INGRESS = Message(
    "LoadBalancerIngress",
    (1, "ip", STRING), (2, "hostname", STRING), (3, "ipMode", STRING, KEEP),
    (4, "ports", PORT_STATUS, REPEATED))
SERVICE_STATUS = Message(
    "ServiceStatus",
    (1, "loadBalancer", Message("LoadBalancerStatus",
                                (1, "ingress", LOAD_BALANCER_INGRESS, REPEATED))),
    (2, "conditions", CONDITION, REPEATED))
SERVICE = Message(
    "Service",
    (1, "metadata", OBJECT_META), (2, "spec", SERVICE_SPEC), (3, "status", SERVICE_STATUS))

# (apiVersion, kind) -> the table of the object inside the envelope.
KINDS = {("v1", "Namespace"): NAMESPACE, ("v1", "Service"): SERVICE}


# -- the request body --

def readable(rtype):
    """Whether protobuf bodies of this resource can be read (the others get 415)."""
    return (rtype.api_version, rtype.kind) in KINDS


def read_object(rtype, body):
    """The JSON dict of a protobuf body written to rtype, or ApiError 400 with the texts of
    the apiserver's protobuf serializer and transformDecodeError."""
    envelope = read_envelope(rtype, body)
    type_meta = envelope.get("typeMeta", {})
    # Kind and version the envelope leaves out come from the URL (copyKindDefaults).
    kind = type_meta.get("kind") or rtype.kind
    api_version = type_meta.get("apiVersion") or rtype.api_version
    header = {"kind": kind, "apiVersion": api_version}
    objects.check_type_meta(rtype, header)
    try:
        obj = decode(KINDS[(api_version, kind)], envelope.get("raw", b""))
    except DecodeError as err:
        version = api_version.rsplit("/", 1)[-1]
        raise bad_request(f"{kind} in version \"{version}\" cannot be handled as a "
                          f"{rtype.kind}: {err}") from None
    return {**header, **obj}


def read_envelope(rtype, body):
    """The runtime.Unknown of a body (its contentEncoding and contentType are ignored, as the
    real decoder ignores them)."""
    if not body:
        problem = "empty data"
    elif not body.startswith(MAGIC):
        problem = ("provided data does not appear to be a protobuf message, expected prefix "
                   "[107 56 115 0]")
    elif len(body) == len(MAGIC):
        problem = "empty body"
    else:
        try:
            return decode(UNKNOWN, body[len(MAGIC):])
        except DecodeError as err:
            problem = str(err)
    raise bad_request(f"the object provided is unrecognized (must be of type {rtype.kind}): "
                      f"{problem} ({summarize(body)})")


def summarize(body, limit=30):
    """The start of a body as the apiserver's summarizeData shows it: text or hex."""
    if not body:
        return "<empty>"
    part = body[:limit]
    text = part.decode("utf-8", "replace") if body[:1] == b"{" else part.hex()
    return text + (" ..." if len(body) > limit else "")
