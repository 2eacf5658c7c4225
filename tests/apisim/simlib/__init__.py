"""The Kubernetes API simulator of mod-k8s (Python 3 standard library only).

Modules, in the order data flows through them:
  resources   the served resource types (what discovery announces)
  objects     defaulting, validation and key order of objects written through the API
  generator   lazily generated objects for scale tests
  store       objects, the global resourceVersion, bounded history, watchers
  selectors   label and field selectors
  encoding    JSON as the real server writes it, Status bodies, continue tokens
  tables      server-side printing for kubectl (meta.k8s.io/v1 Table)
  discovery   /version, /api, /apis, OpenAPI documents for kubectl
  faults      switchable faults and tunables, shared by the server and the control API
  query       query parameters and content negotiation
  apiserver   the HTTPS API: authentication, faults, routing, discovery
  reads       LIST and GET
  watches     WATCH streams
  writes      POST, PUT, PATCH, DELETE, garbage collection
  protobuf    request bodies in the Kubernetes protobuf encoding (Namespace, Service)
  httpio      response bodies and chunked streams on the wire
  listener    accept loop, TLS, connection tracking, outages
  credentials certificates, tokens and kubeconfig files
  control     the plain-HTTP control API for tests
  manifests   JSON manifest loading
"""
