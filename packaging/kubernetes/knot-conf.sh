#!/bin/sh
# knotd's configuration in the pod, from the ConfigMap (doc/mod-k8s.rst, Configuration changes).
#   knot-conf.sh render   the init container: /run/knot/knot.conf from /etc/knot/knot.conf,
#                         its line marked @upstream set to the node's resolvers
#   knot-conf.sh watch    the reloader container: when the kubelet updates the ConfigMap's
#                         files, render again, check, and `knotc reload` (the watcher and its
#                         table are kept: no rollout, no query dropped)
# The paths and the check period come from the environment (defaults: the pod's).
# Indented with spaces: a ConfigMap shows a file with tabs as one quoted string.
set -eu

config_dir=${KNOT_CONFIG_DIR:-/etc/knot}
run_dir=${KNOT_RUN_DIR:-/run/knot}
resolv_conf=${KNOT_RESOLV_CONF:-/etc/resolv.conf}
knotc=${KNOTC:-knotc}
interval=${RELOAD_CHECK_SECONDS:-10}

# The addresses a NodeLocal DNSCache listens on (comma-separated): a node whose resolv.conf
# names one would send our outside names back to the cache in front of us, a loop.
node_local=${NODE_LOCAL_DNS-169.254.20.10}
# systemd-resolved's list of the node's real resolvers, read when the kubelet hands the pod
# the stub's resolv.conf (127.0.0.53): the node's /run/systemd/resolve, mounted read-only.
resolved_conf=${KNOT_RESOLVED_CONF:-/run/systemd/resolve/resolv.conf}

# nameservers FILE: the nameserver addresses of a resolv.conf, one per line.
nameservers() {
    awk '$1 == "nameserver" { print $2 }' "$1"
}

# The node's resolvers: every address of resolv.conf that a pod can reach, link-local ones
# included (GCE's 169.254.169.254, AWS's 169.254.169.253, Azure's 168.63.129.16 are the
# node's resolvers there, and answer pods as CoreDNS's `forward . /etc/resolv.conf` relies
# on). Left out, each with its reason: loopback (the pod's own, not the node's), an IPv6
# link-local address (it needs the node's interface), a node-local cache's listen address.
render() {
    source=$resolv_conf
    if nameservers "$resolv_conf" | grep -qx '127\.0\.0\.53' && [ -r "$resolved_conf" ]; then
        echo "upstream: $resolv_conf names systemd-resolved's stub 127.0.0.53: the node's resolvers from $resolved_conf" >&2
        source=$resolved_conf
    fi
    upstream=""
    for ns in $(nameservers "$source"); do
        case ",$node_local," in
        *",$ns,"*)
            echo "upstream: leaving out $ns (a NodeLocal DNSCache address, NODE_LOCAL_DNS: it forwards to us, a loop)" >&2
            continue ;;
        esac
        case "$ns" in
        127.*|::1|0:0:0:0:0:0:0:1|::ffff:127.*)
            echo "upstream: leaving out $ns (loopback: the pod's own address, not the node's resolver)" >&2 ;;
        [fF][eE]80:*)
            echo "upstream: leaving out $ns (IPv6 link-local: reachable only through the node's own interface)" >&2 ;;
        *[!0-9a-fA-F.:]*)
            echo "upstream: leaving out $ns (not an IP address)" >&2 ;;
        *)
            upstream="${upstream:+$upstream, }$ns" ;;
        esac
    done
    if [ -z "$upstream" ]; then
        echo "upstream: no usable nameserver in $source (give the kubelet --resolv-conf a file with the node's real resolvers)" >&2
        return 1
    fi
    sed "s/^\( *forward:\).*# @upstream\$/\1 [ $upstream ]  # @upstream/" \
        "$config_dir/knot.conf" > "$1"
    grep '# @upstream' "$1" || echo "upstream: no line marked @upstream in $config_dir/knot.conf" >&2
}

# What the ConfigMap holds now: the kubelet swaps its files at once (the ..data link).
config_sum() {
    cat "$config_dir"/* 2>/dev/null | cksum
}

# The ConfigMap's state /run/knot/knot.conf was rendered from: a change made between the
# init container and the reloader's start is applied too.
applied_sum="$run_dir/knot.conf.source"

watch() {
    applied=$(cat "$applied_sum" 2>/dev/null || config_sum)
    # SIGTERM ends the container at once (a shell as PID 1 would ignore it).
    trap 'exit 0' TERM INT
    while sleep "$interval" & wait $!; do
        now=$(config_sum)
        [ "$now" = "$applied" ] && continue
        applied=$now
        next="$run_dir/knot.conf.next"
        if ! render "$next" >/dev/null || ! "$knotc" -c "$next" conf-check >&2; then
            echo "reloader: the changed configuration is not valid, knotd keeps the running one" >&2
            rm -f "$next"
            continue
        fi
        mv "$next" "$run_dir/knot.conf"
        echo "$now" > "$applied_sum"
        if "$knotc" -c "$run_dir/knot.conf" reload; then
            echo "reloader: configuration changed, knotd reloaded"
        else
            echo "reloader: knotc reload failed (knotd's log says why)" >&2
        fi
    done
}

case "${1:-}" in
render)
    # The sum first: a change while rendering is seen by the reloader.
    sum=$(config_sum)
    render "$run_dir/knot.conf"
    echo "$sum" > "$applied_sum" ;;
watch) watch ;;
*) echo "usage: knot-conf.sh render|watch" >&2; exit 2 ;;
esac
