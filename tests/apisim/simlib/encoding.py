"""JSON as the real API server writes it: Go's escaping, compact or pretty, Status bodies,
continue tokens."""

import base64
import binascii
import json

_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
               ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_escape(text):
    """Go's encoding/json escapes <, >, & and U+2028/2029 even inside strings; JSON stays valid."""
    for raw, escaped in _GO_ESCAPES:
        if raw in text:
            text = text.replace(raw, escaped)
    return text


def compact(obj, sort_keys=False):
    """One-line JSON (what every watch event and non-pretty body uses)."""
    return go_escape(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys))


def pretty(obj):
    """Multi-line JSON, as json.MarshalIndent(obj, "", "  ") writes it."""
    return go_escape(json.dumps(obj, indent=2, ensure_ascii=False))


def pretty_fragment(compact_json, level):
    """Re-indents a compact JSON value for nesting at level (two spaces per level)."""
    text = json.dumps(json.loads(compact_json), indent=2, ensure_ascii=False)
    pad = "  " * level
    return go_escape(text.replace("\n", "\n" + pad))


STATUS_ORDER = ("kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code")


def status(code, reason, message, details=None, continue_token=None):
    """A metav1.Status failure object with the field order of the Go struct."""
    obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message}
    if continue_token:
        obj["metadata"]["continue"] = continue_token
    if reason:
        obj["reason"] = reason
    if details:
        obj["details"] = details
    obj["code"] = code
    return obj


def status_success(details):
    """The Status a DELETE returns for types whose registry does not return the object."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


class ApiError(Exception):
    """A failure the server answers with a Status body (and the same HTTP code)."""

    def __init__(self, code, reason, message, details=None, retry_after=None, continue_token=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = dict(details or {})
        if retry_after:
            self.details["retryAfterSeconds"] = retry_after
        self.retry_after = retry_after
        self.continue_token = continue_token

    def body(self):
        return status(self.code, self.reason, self.message, self.details or None, self.continue_token)


def not_found(rtype, name):
    return ApiError(404, "NotFound", f"{rtype.group_resource} \"{name}\" not found",
                    {"name": name, "group": rtype.group, "kind": rtype.plural} if rtype.group
                    else {"name": name, "kind": rtype.plural})


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def invalid(kind, group, name, causes):
    """422 Invalid with field causes [(field, reason, message)], as validation errors read."""
    parts = [f"{field}: {message}" for field, _, message in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details = {"name": name, "kind": kind,
               "causes": [{"reason": reason, "message": message, "field": field}
                          for field, reason, message in causes]}
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f"{qualified} \"{name}\" is invalid: {text}", details)


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")


def expired(message, continue_token=None):
    return ApiError(410, "Expired", message, continue_token=continue_token)


def encode_continue(rv, last_key):
    """The token the etcd3 store hands out: base64url JSON with the RV and the next start key."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"},
                     separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token):
    """Returns (rv, start_key); raises ApiError 400 for a token that is not ours."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unsupported version")
        rv = int(data["rv"])
        start = str(data["start"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError) as err:
        raise bad_request(f"continue key is not valid: {err}") from None
    return rv, start
