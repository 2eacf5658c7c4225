"""Query parameters and content negotiation, parsed as the real API server does."""

from . import encoding



def qbool(query, name):
    """None when absent; otherwise anything but "0"/"false" is true (Convert_Slice_string_To_bool)."""
    if name not in query:
        return None
    return query[name].lower() not in ("0", "false")


def qint(query, name):
    if not query.get(name):
        return None
    try:
        return int(query[name])
    except ValueError:
        raise encoding.bad_request(f"invalid value for {name}: strconv.ParseInt: parsing "
                                   f"\"{query[name]}\": invalid syntax") from None


def negotiate(accept):
    """The representation the Accept header asks for: "json", "table" or None (406)."""
    if not accept:
        return "json"
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0]
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if media not in ("application/json", "*/*", "application/*"):
            continue
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" \
                and params.get("v") in ("v1", "v1beta1"):
            return "table"
        if "as" in params:
            continue
        return "json"
    return None
