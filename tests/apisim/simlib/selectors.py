"""Label and field selectors with the grammar and meaning of k8s.io/apimachinery.

labelSelector: comma-separated requirements (AND): k, !k, k=v, k==v, k!=v,
k in (a,b), k notin (a,b), k>n, k<n.  != and notin also match objects without the key.
fieldSelector: comma-separated terms (AND): f=v, f==v, f!=v, with \\ escapes in values.
"""

import re


class SelectorError(ValueError):
    """A selector that does not parse; the server answers 400 BadRequest with its text."""


_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SPECIAL = "!=(),<>"


def _check_key(key):
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise SelectorError(f"unable to parse requirement: key: Invalid value: \"{key}\": "
                            "prefix part must be a valid DNS subdomain")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise SelectorError(f"unable to parse requirement: key: Invalid value: \"{key}\": "
                            "name part must consist of alphanumeric characters, '-', '_' or '.', "
                            "and must start and end with an alphanumeric character")


def _check_value(value):
    if value and (len(value) > 63 or not _NAME_RE.match(value)):
        raise SelectorError(f"unable to parse requirement: values[0]: Invalid value: \"{value}\": "
                            "a valid label must be an empty string or consist of alphanumeric "
                            "characters, '-', '_' or '.', and must start and end with an "
                            "alphanumeric character")


def _tokens(text):
    """Splits a label selector into identifiers and operators, as the apimachinery lexer does."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in _SPECIAL:
            two = text[i:i + 2]
            if two in ("!=", "=="):
                out.append(two)
                i += 2
            else:
                out.append(c)
                i += 1
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            out.append(text[i:j])
            i = j
    return out


class LabelSelector:
    """A parsed labelSelector; matches(labels_dict) tells whether an object is selected."""

    def __init__(self, text):
        self.text = text or ""
        self.requirements = self._parse(self.text)

    @property
    def empty(self):
        return not self.requirements

    def _parse(self, text):
        toks = _tokens(text)
        reqs = []
        pos = 0

        def peek():
            return toks[pos] if pos < len(toks) else None

        def is_ident(tok):
            return tok is not None and tok not in _SPECIAL and tok not in ("!=", "==")

        while pos < len(toks):
            tok = toks[pos]
            if tok == "!":
                pos += 1
                key = peek()
                if not is_ident(key):
                    raise SelectorError(f"unable to parse requirement: found '{key or ''}', "
                                        "expected: identifier after '!'")
                _check_key(key)
                pos += 1
                reqs.append(("!", key, ()))
            elif is_ident(tok):
                key = tok
                _check_key(key)
                pos += 1
                op = peek()
                if op is None or op == ",":
                    reqs.append(("exists", key, ()))
                elif op in ("=", "==", "!="):
                    pos += 1
                    value = ""
                    if is_ident(peek()):
                        value = peek()
                        pos += 1
                    _check_value(value)
                    reqs.append(("!=" if op == "!=" else "=", key, (value,)))
                elif op in ("in", "notin"):
                    pos += 1
                    if peek() != "(":
                        raise SelectorError(f"unable to parse requirement: found '{peek() or ''}', "
                                            "expected: '('")
                    pos += 1
                    values = []
                    expect_value = True
                    while True:
                        t = peek()
                        if t is None:
                            raise SelectorError("unable to parse requirement: found '', expected: ')'")
                        if t == ")":
                            if expect_value and values:
                                values.append("")
                            pos += 1
                            break
                        if t == ",":
                            if expect_value:
                                values.append("")
                            expect_value = True
                            pos += 1
                            continue
                        if not is_ident(t) or not expect_value:
                            raise SelectorError(f"unable to parse requirement: found '{t}', "
                                                "expected: ',', ')' or identifier")
                        _check_value(t)
                        values.append(t)
                        expect_value = False
                        pos += 1
                    if not values:
                        raise SelectorError("unable to parse requirement: values: Invalid value: "
                                            "[]: for 'in', 'notin' operators, values set can't be empty")
                    reqs.append((op, key, tuple(values)))
                elif op in ("<", ">"):
                    pos += 1
                    value = peek()
                    if not is_ident(value) or not re.match(r"^-?[0-9]+$", value):
                        raise SelectorError(f"unable to parse requirement: values[0]: Invalid value: "
                                            f"\"{value or ''}\": for 'Gt', 'Lt' operators, the value "
                                            "must be an integer")
                    pos += 1
                    reqs.append((op, key, (int(value),)))
                else:
                    raise SelectorError(f"unable to parse requirement: found '{op}', expected: "
                                        "'=', '!=', '==', 'in', notin'")
            else:
                raise SelectorError(f"unable to parse requirement: found '{tok}', expected: "
                                    "!, identifier, or 'end of string'")
            if pos < len(toks):
                if toks[pos] != ",":
                    raise SelectorError(f"unable to parse requirement: found '{toks[pos]}', "
                                        "expected: ',' or 'end of string'")
                pos += 1
                if pos == len(toks):
                    raise SelectorError("unable to parse requirement: found '', expected: "
                                        "!, identifier, or 'end of string'")
        return reqs

    def matches(self, labels):
        labels = labels or {}
        for op, key, values in self.requirements:
            have = key in labels
            if op == "exists":
                ok = have
            elif op == "!":
                ok = not have
            elif op in ("=", "in"):
                ok = have and labels[key] in values
            elif op in ("!=", "notin"):
                ok = not have or labels[key] not in values
            else:
                try:
                    number = int(labels[key]) if have else None
                except ValueError:
                    number = None
                ok = number is not None and (number > values[0] if op == ">" else number < values[0])
            if not ok:
                return False
        return True


def _split_unescaped(text, sep):
    """Splits on sep where it is not escaped with a backslash; keeps the escapes."""
    parts, cur, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if c == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(value):
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value):
            if value[i + 1] not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{value[i + 1]}")
            out.append(value[i + 1])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


class FieldSelector:
    """A parsed fieldSelector; labels are checked against the type's field set."""

    def __init__(self, text, allowed):
        self.text = text or ""
        self.terms = []
        if not self.text:
            return
        for term in _split_unescaped(self.text, ","):
            for op in ("!=", "==", "="):
                idx = self._find_op(term, op)
                if idx >= 0:
                    field_name, value = term[:idx], _unescape(term[idx + len(op):])
                    self.terms.append((field_name, "!=" if op == "!=" else "=", value))
                    break
            else:
                raise SelectorError(f"invalid selector: '{self.text}'; can't understand '{term}'")
        for field_name, _, _ in self.terms:
            if field_name not in allowed:
                raise SelectorError(f"field label not supported: {field_name}")

    @staticmethod
    def _find_op(term, op):
        i = 0
        while i < len(term):
            if term[i] == "\\":
                i += 2
                continue
            if term.startswith(op, i):
                return i
            i += 1
        return -1

    @property
    def empty(self):
        return not self.terms

    def matches(self, field_of):
        """field_of(name) returns the object's value of a field label."""
        for name, op, value in self.terms:
            equal = field_of(name) == value
            if equal != (op == "="):
                return False
        return True

    def single_name(self):
        """The name when the selector pins metadata.name (kubectl delete --wait uses this)."""
        for name, op, value in self.terms:
            if name == "metadata.name" and op == "=":
                return value
        return None


def field_value(obj, label):
    """Value of a field label in an object dict, as the registry's GetAttrs computes it."""
    meta = obj.get("metadata") or {}
    if label in ("metadata.name", "name"):
        return meta.get("name", "")
    if label == "metadata.namespace":
        return meta.get("namespace", "")
    cur = obj
    for part in label.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if cur is None:
        return "false" if label == "spec.hostNetwork" else ""
    return str(cur)
