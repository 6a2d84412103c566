# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST API: one request in, one response out, independent of HTTP and TLS plumbing (server.py).

Routes: discovery (``/api``, ``/apis``, …), ``/version``, health (``/livez``, ``/readyz``, ``/healthz`` and their
``/<check>`` paths), and resources at ``/api/v1/…`` and ``/apis/<group>/<version>/…``: list (with label and field
selectors, or as a Table for kubectl), watch, get, create, update (PUT), patch (the three patch types),
delete, deletecollection, and the subresources status, approval, finalize, pods/eviction (deletes the pod; no
PodDisruptionBudget check), pods/binding and pods/log (asked of the pod's kubelet, as the real server does, with its
--kubelet-client-certificate: the kubelet decides whether that identity may read it). A SubjectAccessReview is
answered by the authorizers and not stored. ``?dryRun=All`` does everything but the write.

Writes follow the real server's optimistic concurrency: an update or patch that carries a resourceVersion other
than the stored one is a 409 Conflict; one that carries none is retried on a fresh read when a concurrent
write got there first. An update that changes nothing is not written (the resourceVersion stays). Deleting a
namespace deletes what it holds at once (no Terminating phase); ``default``, ``kube-system`` and
``kube-public`` cannot be deleted. Objects are deleted at once: no finalizers, no graceful deletion.
"""

import collections
import datetime
import json
import queue
import random
import threading
import time
import ssl
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

import yaml

from kcpsim import version
from kcpsim.apiserver import (auth, authz, bootstrap_policy, cache, discovery, disruption, errors, health, patch,
                              protobuf, resources, selectors, storage, strategy, tables)

# ``alive()`` says whether the client is still connected (a watch ends when it is not).
Request = collections.namedtuple("Request", "method path query headers body peer_cert alive")
Response = collections.namedtuple("Response", "status content_type body stream")

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
UPDATE_ATTEMPTS = 8
WATCH_CHECK = 0.5
WATCH_DEFAULT_TIMEOUT = 1800
BOOKMARK_PERIOD = 60.0  # the real server sends a watch that allows bookmarks one about every minute
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")
_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NON_RESOURCE_VERBS = {"HEAD": "get"}
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_PLURALS = ("clusterroles", "roles", "clusterrolebindings", "rolebindings")

Target = collections.namedtuple("Target", "resource namespace name subresource")


def json_response(status, body):
    return Response(status, JSON, json.dumps(body, separators=(",", ":")).encode("utf-8"), None)


def text_response(status, text):
    return Response(status, TEXT, text.encode("utf-8"), None)


def rfc3339(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def parse_target(path):
    """The resource request a path names, None for a non-resource path, or ApiError 404."""
    parts = [urllib.parse.unquote(part) for part in path.split("/") if part]
    if parts[:1] == ["api"] and len(parts) > 2:
        group, version_name, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) > 3:
        group, version_name, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        inner = resources.lookup(group, version_name, rest[2])
        if inner is not None and inner.namespaced:
            namespace, rest = rest[1], rest[2:]
    resource = resources.lookup(group, version_name, rest[0])
    if resource is None or len(rest) > 3:
        raise errors.not_found_path()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if subresource and subresource not in resource.subresources:
        raise errors.not_found_path()
    if resource.namespaced and name and namespace is None:
        raise errors.not_found_path()
    return Target(resource, namespace, name, subresource)


def _list_kind(resource, items, revision):
    for item in items:
        # The real server leaves kind and apiVersion out of list items.
        item.pop("kind", None)
        item.pop("apiVersion", None)
    return {"kind": resource.kind + "List", "apiVersion": resources.group_version(resource),
            "metadata": {"resourceVersion": str(revision)}, "items": items}


def _send_initial_events(query, from_now):
    """Whether a watch starts with the current objects as ADDED events: the ``sendInitialEvents`` parameter, which
    the real server only takes with ``resourceVersionMatch=NotOlderThan`` (and, when true, with
    ``allowWatchBookmarks``); without it, when the watch has no resourceVersion (or "0")."""
    flag, match = query.get("sendInitialEvents"), query.get("resourceVersionMatch", "")
    causes = []
    if flag is not None:
        if flag not in ("true", "false"):
            raise errors.bad_request("sendInitialEvents must be true or false")
        if match != "NotOlderThan":
            causes.append("resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch "
                          "to NotOlderThan")
        if flag == "true" and query.get("allowWatchBookmarks") != "true":
            causes.append("allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks "
                          "to true")
    elif match:
        causes.append("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                      "sendInitialEvents is provided")
    if causes:
        raise errors.ApiError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: %s' % ", ".join(causes))
    return flag == "true" if flag is not None else from_now


def _success(code=200, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        body["details"] = details
    if code != 200:
        body["code"] = code
    return body


class Api:
    """The API server's behaviour over a Store. Thread-safe; one instance serves every connection."""

    def __init__(self, store, server_address, bootstrap_token_auth=True, ready_timeout=1.0, clock=utcnow,
                 log=None, kubelet_client=None):
        self.store = store
        # (certificate, key) the server reaches kubelets with (--kubelet-client-certificate / -key), or None
        self.kubelet_client = kubelet_client
        self.server_address = server_address
        self.bootstrap_token_auth = bootstrap_token_auth
        self.ready_timeout = ready_timeout
        self.clock = clock
        self.log = log or (lambda message, level="I": None)
        self.bootstrapped = threading.Event()
        self.stopping = threading.Event()
        self._etcd_healthy = None
        # Rate-limited as the real server's etcd check (health.py): at most one etcd read per ready_timeout / 2.
        self.etcd_check = health.RateLimitedCheck(lambda timeout: store.revision(timeout=timeout), ready_timeout,
                                                  errors=(storage.StoreUnavailable, storage.StoreError))
        secrets = resources.lookup("", "v1", "secrets")
        # The bootstrap token authenticator reads Secrets through an informer, so it keeps authenticating
        # while etcd is unreachable.
        self.token_secrets = cache.WatchCache(store, resources.key(secrets, "kube-system", auth.TOKEN_SECRET_PREFIX),
                                              self.stopping, log=self.log)
        # The RBAC authorizer reads its objects through informers too.
        self.rbac = {plural: cache.WatchCache(store, resources.prefix(resources.lookup(RBAC_GROUP, "v1", plural)),
                                              self.stopping, log=self.log) for plural in RBAC_PLURALS}
        self._policy = (None, None)
        # The watch cache LISTs and WATCHes are served from (ConsistentListFromCache, on by default since 1.31).
        self.registry = cache.RegistryCache(store, self.stopping, log=self.log)

    def start(self):
        """The background work of a serving API server: the caches, the system namespaces and the bootstrap
        RBAC policy."""
        for watched in self.caches():
            watched.start()
        threading.Thread(target=self.bootstrap, name="bootstrap", daemon=True).start()

    def caches(self):
        return [self.registry, self.token_secrets] + [self.rbac[plural] for plural in RBAC_PLURALS]

    def close(self):
        self.stopping.set()
        for watched in self.caches():
            watched.close()

    def policy(self):
        """The RBAC objects in force, rebuilt only when one of their caches has seen a change."""
        generations = tuple(self.rbac[plural].generation for plural in RBAC_PLURALS)
        seen, built = self._policy
        if seen != generations:
            roles = {}
            for role in self.rbac["roles"].objects():
                roles[(role["metadata"].get("namespace"), role["metadata"]["name"])] = role.get("rules") or []
            built = authz.Policy({role["metadata"]["name"]: role.get("rules") or []
                                  for role in self.rbac["clusterroles"].objects()}, roles,
                                 self.rbac["clusterrolebindings"].objects(), self.rbac["rolebindings"].objects())
            self._policy = (generations, built)
        return built

    # --- start-up --------------------------------------------------------------------------------------

    def bootstrap(self, retry_interval=1.0):
        """Create the system namespaces and the bootstrap RBAC objects that are missing; retried until etcd
        answers or the server stops."""
        wanted = [("namespaces", None, {"metadata": {"name": name}}) for name in resources.SYSTEM_NAMESPACES]
        wanted += bootstrap_policy.objects()
        while not self.stopping.is_set():
            try:
                existing = {}  # plural -> {(namespace, name)}: one list per kind, not one read per object
                for plural, namespace, body in wanted:
                    resource = resources.lookup("" if plural == "namespaces" else RBAC_GROUP, "v1", plural)
                    if plural not in existing:
                        existing[plural] = {(obj["metadata"].get("namespace"), obj["metadata"]["name"])
                                            for obj in self.store.list(resources.prefix(resource))[0]}
                    key = resources.key(resource, namespace, body["metadata"]["name"])
                    if (namespace, body["metadata"]["name"]) not in existing[plural]:
                        obj = strategy.prepare_create(resource, json.loads(json.dumps(body)), namespace,
                                                      auth.User("system:apiserver", (), ""), str(uuid.uuid4()),
                                                      rfc3339(self.clock()), "")
                        try:
                            self.store.create(key, obj)
                        except storage.Exists:
                            pass
                self.bootstrapped.set()
                self.log("system namespaces and bootstrap RBAC policy are in place")
                return
            except (storage.StoreUnavailable, storage.StoreError) as exc:
                self.log("waiting for etcd to create the system namespaces: %s" % exc)
                self.stopping.wait(retry_interval)

    # --- entry point -----------------------------------------------------------------------------------

    def handle(self, request):
        try:
            return self._handle(request)
        except errors.ApiError as exc:
            return json_response(exc.code, exc.status())
        except storage.StoreUnavailable as exc:
            self.log("%s %s: etcd unavailable: %s" % (request.method, request.path, exc))
            error = errors.timeout()
            return json_response(error.code, error.status())
        except storage.StoreError as exc:
            error = errors.internal(str(exc))
            return json_response(error.code, error.status())
        except Exception:  # noqa: BLE001 - a bug in the emulation answers 500, like a recovered panic
            self.log("%s %s: %s" % (request.method, request.path, traceback.format_exc()), "E")
            error = errors.internal("the emulated API server failed; see its log")
            return json_response(error.code, error.status())

    def _handle(self, request):
        # As in the real server: authenticate, authorize, then route (an unknown path is 403 unless the user
        # may see it, then 404).
        user = self._authenticate(request)
        try:
            target = parse_target(request.path)
        except errors.ApiError:
            self._authorize(user, request, None)
            raise
        self._authorize(user, request, target)
        if target is None:
            return self._non_resource(request)
        return self._resource(request, target, user)

    def _attributes(self, request, target):
        if target is None:
            return authz.Attributes(_NON_RESOURCE_VERBS.get(request.method, request.method.lower()), "", "", "",
                                    None, None, request.path, None)
        verb = _VERBS.get(request.method, request.method.lower())
        selector = None
        if not target.name and request.method in ("GET", "HEAD", "DELETE"):
            verb = {"get": "watch" if request.query.get("watch") in ("true", "1") else "list",
                    "delete": "deletecollection"}[verb]
            try:
                selector = selectors.parse_fields(request.query.get("fieldSelector", ""), target.resource.plural)
            except selectors.SelectorError:
                selector = None
        return authz.Attributes(verb, target.resource.group, target.resource.plural, target.subresource or "",
                                target.namespace, target.name, None, selector)

    def _authorize(self, user, request, target):
        attrs = self._attributes(request, target)
        identities = ()
        if user.name == bootstrap_policy.KCM:
            identities = tuple(auth.User("system:serviceaccount:kube-system:" + account,
                                         ("system:serviceaccounts", "system:serviceaccounts:kube-system",
                                          auth.AUTHENTICATED), "")
                               for account in sorted(set(bootstrap_policy.CONTROLLER_ACCOUNTS.values())))
        allowed, reason = authz.decide(user, attrs, self.policy(), lambda: self._pods_on(authz.node_name(user)),
                                       identities)
        if allowed:
            return
        if target is None:
            raise errors.forbidden(user.name, attrs.verb, None, None, None, path=request.path, reason=reason)
        raise errors.forbidden(user.name, attrs.verb, target.resource.plural, target.resource.group,
                               target.namespace, target.name, subresource=target.subresource, reason=reason)

    def _pods_on(self, node):
        # The Node authorizer's graph comes from informers: the watch cache as it is, etcd only without it.
        prefix = resources.prefix(resources.lookup("", "v1", "pods"))
        pods = (self.registry.list(prefix) or self.store.list(prefix))[0]
        return [pod for pod in pods if (pod.get("spec") or {}).get("nodeName") == node]

    def _authenticate(self, request):
        user = auth.certificate_user(request.peer_cert)
        if user:
            return user
        header = request.headers.get("authorization", "")
        if not header:
            return auth.ANONYMOUS
        scheme, bearer = header.partition(" ")[::2]
        token = auth.bootstrap_token_id(bearer.strip()) if scheme.lower() == "bearer" else None
        if token is None or not self.bootstrap_token_auth:
            raise errors.unauthorized()
        user = auth.bootstrap_token_user(self._token_secret(token[0]), token[0], token[1], self.clock())
        if user is None:
            raise errors.unauthorized()
        return user

    def _token_secret(self, token_id):
        """The token's Secret as the cache holds it. A miss is read from etcd (the cache may trail a token created
        a moment ago, or still be catching up after an etcd outage) and what is found is kept in the cache;
        without etcd (within the readiness timeout) a miss stays a miss."""
        name = auth.TOKEN_SECRET_PREFIX + token_id
        secret = self.token_secrets.get("kube-system", name)
        if secret is not None:
            return secret
        try:
            secret = self.store.get(resources.key(resources.lookup("", "v1", "secrets"), "kube-system", name),
                                    timeout=self.ready_timeout)
        except (storage.StoreUnavailable, storage.StoreError):
            return None
        if secret is not None:
            self.token_secrets.remember(secret)
        return secret

    # --- non-resource paths ----------------------------------------------------------------------------

    def _non_resource(self, request):
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed(request.method)
        path = request.path.rstrip("/") or "/"
        parts = [part for part in path.split("/") if part]
        if path == "/":
            return json_response(200, discovery.root_paths())
        if path == "/version":
            return json_response(200, version.info())
        if parts[0] in ("livez", "readyz", "healthz"):
            return self._health(parts[0], parts[1:], "verbose" in request.query)
        if path == "/openapi/v3":
            return json_response(200, discovery.openapi_v3_root(version.current()))
        if parts[:2] == ["openapi", "v3"]:
            group, version_name = ("", parts[3]) if parts[2:3] == ["api"] and len(parts) == 4 else (
                (parts[3], parts[4]) if parts[2:3] == ["apis"] and len(parts) == 5 else (None, None))
            document = discovery.openapi_v3_document(group, version_name, version.current())
            if group is not None and document:
                return json_response(200, document)
        if path == "/api":
            return json_response(200, discovery.api_versions(self.server_address))
        if path == "/api/v1":
            return json_response(200, discovery.api_resource_list("", "v1"))
        if path == "/apis":
            return json_response(200, discovery.api_group_list())
        if parts[0] == "apis" and len(parts) == 2:
            versions = resources.groups().get(parts[1])
            if versions:
                return json_response(200, discovery.api_group(parts[1], versions))
        if parts[0] == "apis" and len(parts) == 3:
            listing = discovery.api_resource_list(parts[1], parts[2])
            if listing:
                return json_response(200, listing)
        raise errors.not_found_path()

    def _etcd_ok(self):
        error = self.etcd_check()
        healthy = error is None
        if healthy != self._etcd_healthy:
            # Logged on change only: load balancers probe every half second.
            self._etcd_healthy = healthy
            self.log("health check: etcd %s" % ("answers" if healthy else "failed: " + error))
        return healthy

    def _health(self, endpoint, sub, verbose):
        """``/livez`` answers while the process serves; ``/readyz`` and ``/healthz`` also need etcd and the
        system namespaces. ``/<endpoint>/<check>`` runs one check."""
        checks = [("ping", lambda: True)]
        if endpoint != "livez":
            checks += [("etcd", self._etcd_ok),
                       ("poststarthook/bootstrap-namespaces", self.bootstrapped.is_set)]
        if sub:
            wanted = "/".join(sub)
            chosen = [check for check in checks if check[0] == wanted]
            if not chosen:
                raise errors.not_found_path()
            name, probe = chosen[0]
            if probe():
                return text_response(200, "ok")
            return text_response(500, "internal server error: %s check failed" % name)
        results = [(name, probe()) for name, probe in checks]
        healthy = all(ok for name, ok in results)
        if healthy and not verbose:
            return text_response(200, "ok")
        lines = ["[+]%s ok" % name if ok else "[-]%s failed: reason withheld" % name for name, ok in results]
        lines.append("%s check %s" % (endpoint, "passed" if healthy else "failed"))
        return text_response(200 if healthy else 500, "\n".join(lines) + "\n")

    # --- resources -------------------------------------------------------------------------------------

    def _resource(self, request, target, user):
        method, name, sub = request.method, target.name, target.subresource
        if method in ("GET", "HEAD"):
            if name is None:
                if request.query.get("watch") in ("true", "1"):
                    return self._watch(request, target)
                return self._list(request, target)
            if sub in (None, "status", "approval"):
                return self._get(request, target)
            if sub == "log":
                return self._pod_log(request, target)
        elif method == "POST":
            if target.resource.plural == "subjectaccessreviews" and name is None:
                return self._review(request)
            if name is None and (target.namespace or not target.resource.namespaced):
                return self._create(request, target, user)
            if sub == "eviction":
                return self._evict(request, target, user)
            if sub == "binding":
                return self._bind(request, target)
        elif method == "PUT" and name and sub != "eviction" and sub != "binding":
            return self._update(request, target, user)
        elif method == "PATCH" and name and sub in (None, "status", "approval"):
            return self._patch(request, target, user)
        elif method == "DELETE" and sub is None:
            if name:
                return self._delete(request, target, user=user)
            return self._delete_collection(request, target)
        raise errors.method_not_allowed(method)

    def _review(self, request):
        """A SubjectAccessReview: may ``spec.user`` (with ``spec.groups``) do ``spec.resourceAttributes`` or
        ``spec.nonResourceAttributes``? Answered by the same authorizers as a request, never stored."""
        review = self._body(request)
        spec = (review or {}).get("spec") if isinstance(review, dict) else None
        if not isinstance(spec, dict) or not (spec.get("user") or spec.get("groups")):
            raise errors.invalid(resources.lookup("authorization.k8s.io", "v1", "subjectaccessreviews"), "", [
                ("spec.user", "Invalid value: \"\": at least one of user or group must be specified")])
        subject = auth.User(spec.get("user") or "", tuple(spec.get("groups") or ()), spec.get("uid") or "")
        wanted = spec.get("resourceAttributes")
        if isinstance(wanted, dict):
            attrs = authz.Attributes(wanted.get("verb") or "", wanted.get("group") or "", wanted.get("resource") or "",
                                     wanted.get("subresource") or "", wanted.get("namespace") or None,
                                     wanted.get("name") or None, None, None)
        else:
            other = spec.get("nonResourceAttributes") or {}
            attrs = authz.Attributes(other.get("verb") or "", "", "", "", None, None, other.get("path") or "", None)
        allowed, reason = authz.decide(subject, attrs, self.policy(), lambda: self._pods_on(authz.node_name(subject)))
        status = {"allowed": allowed}
        if reason:
            status["reason"] = reason
        return json_response(201, {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                                   "metadata": {"creationTimestamp": None}, "spec": spec, "status": status})

    def _pod_log(self, request, target):
        """pods/log: the container's output, asked of the kubelet of the pod's node over TLS with the server's
        kubelet client certificate (no check of the kubelet's serving certificate: kubeadm sets no
        --kubelet-certificate-authority). The kubelet's refusal comes back as the real server words it."""
        pod = self._read(target)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = request.query.get("container") or (containers[0] if len(containers) == 1 else None)
        if container is None:
            raise errors.bad_request("a container name must be specified for pod %s, choose one of: [%s]"
                                     % (target.name, " ".join(containers)))
        if container not in containers:
            raise errors.bad_request("container %s is not valid for pod %s" % (container, target.name))
        node_name = (pod.get("spec") or {}).get("nodeName")
        node = self.store.get(resources.key(resources.lookup("", "v1", "nodes"), None, node_name)) if node_name else None
        status = (node or {}).get("status") or {}
        address = next((a["address"] for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), None)
        if address is None:
            raise errors.bad_request("pod %s does not have a host assigned" % target.name if not node_name
                                     else "node %s has no InternalIP address" % node_name)
        port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 10250
        query = {key: request.query[key] for key in ("previous", "tailLines", "timestamps") if key in request.query}
        url = "https://%s:%d/containerLogs/%s/%s/%s%s" % (
            "[%s]" % address if ":" in address else address, port, target.namespace, target.name, container,
            "?" + urllib.parse.urlencode(query) if query else "")
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        if self.kubelet_client:
            context.load_cert_chain(*self.kubelet_client)
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
            with opener.open(url, timeout=10) as answer:
                return Response(200, TEXT, answer.read(), None)
        except urllib.error.HTTPError as exc:
            message = exc.read().decode("utf-8", "replace").strip()
            reason = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound"}.get(exc.code, "InternalError")
            raise errors.ApiError(exc.code if exc.code in (401, 403, 404) else 500, reason,
                                  "%s ( pods/log %s)" % (message, target.name))
        except (OSError, ssl.SSLError) as exc:
            raise errors.internal('Get "%s": %s' % (url, getattr(exc, "reason", exc)))

    def _admitted(self, user, verb, target, old, new):
        """``new`` when admission lets ``user`` make this change; the NodeRestriction plugin's 403 otherwise."""
        node = authz.node_name(user)
        if node is not None:
            name = target.name or ((new or {}).get("metadata") or {}).get("name")
            refusal = authz.node_restriction(node, verb, target.resource.plural, target.subresource or "", name,
                                             old, new)
            if refusal:
                raise errors.forbidden_because(errors.qualified(target.resource), name, refusal)
        return new

    def _key(self, target, name=None):
        return resources.key(target.resource, target.namespace, name or target.name)

    def _body(self, request):
        content_type = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
        try:
            if content_type == protobuf.MEDIA_TYPE:
                return protobuf.decode(request.body or b"")
            if "yaml" in content_type:
                return yaml.safe_load(request.body or b"")
            return json.loads(request.body or b"null")
        except protobuf.UnsupportedKind as exc:
            raise errors.ApiError(415, "UnsupportedMediaType", str(exc))
        except protobuf.ProtobufError as exc:
            raise errors.bad_request("couldn't decode the protobuf body: %s" % exc)
        except (ValueError, yaml.YAMLError) as exc:
            raise errors.bad_request("couldn't get version/kind; json parse error: %s" % exc)

    def _dry_run(self, request):
        return request.query.get("dryRun") == "All"

    def _wants_table(self, request):
        return "as=Table" in request.headers.get("accept", "")

    def _matcher(self, request, target):
        """A predicate for the request's label and field selectors; 400 when they do not parse."""
        try:
            labels = selectors.parse_labels(request.query.get("labelSelector", ""))
            fields = selectors.parse_fields(request.query.get("fieldSelector", ""), target.resource.plural)
        except selectors.SelectorError as exc:
            raise errors.bad_request(str(exc))
        return lambda obj: (selectors.labels_match(labels, (obj.get("metadata") or {}).get("labels"))
                            and selectors.fields_match(fields, obj))

    def _selected(self, request, target, objects):
        matches = self._matcher(request, target)
        return [obj for obj in objects if matches(obj)]

    def _read(self, target):
        obj = self.store.get(self._key(target))
        if obj is None:
            raise errors.not_found(target.resource, target.name)
        return obj

    def _get(self, request, target):
        if target.resource.dropped:
            raise errors.not_found(target.resource, target.name)
        obj = None
        if request.query.get("resourceVersion") == "0":
            # As the real server: resourceVersion=0 is served from the watch cache as it is (etcd when not ready).
            ready, obj = self.registry.get(self._key(target))
            if ready and obj is None:
                raise errors.not_found(target.resource, target.name)
        obj = obj or self._read(target)
        if self._wants_table(request):
            return json_response(200, tables.table(target.resource, [obj], obj["metadata"]["resourceVersion"],
                                                   self.clock(), request.query.get("includeObject")))
        return json_response(200, obj)

    def _list(self, request, target):
        if target.resource.dropped:
            return json_response(200, _list_kind(target.resource, [], 0))
        objects, revision = self._list_objects(request, resources.prefix(target.resource, target.namespace))
        objects = self._selected(request, target, objects)
        if self._wants_table(request):
            return json_response(200, tables.table(target.resource, objects, revision, self.clock(),
                                                   request.query.get("includeObject")))
        return json_response(200, _list_kind(target.resource, objects, revision))

    def _list_objects(self, request, prefix):
        """``(objects, revision)`` for a LIST, as the real server serves it: ``resourceVersion=0`` from the watch
        cache as it is; without a resourceVersion (a consistent read) from the watch cache once it has caught up
        with etcd's current revision (read linearizably, so without etcd quorum the LIST fails as before), from
        etcd when it does not within FRESH_TIMEOUT; any other resourceVersion from etcd."""
        since = request.query.get("resourceVersion", "")
        if since == "0" and request.query.get("resourceVersionMatch", "") != "Exact":
            cached = self.registry.list(prefix)
            if cached is not None:
                return cached
        elif not since and self.registry.wait_fresh(self.store.revision()):
            cached = self.registry.list(prefix)
            if cached is not None:
                return cached
        return self.store.list(prefix)

    def _create(self, request, target, user):
        resource = target.resource
        suffix = "".join(random.choice(_NAME_SUFFIX_ALPHABET) for position in range(5))
        obj = strategy.prepare_create(resource, self._body(request), target.namespace, user, str(uuid.uuid4()),
                                      rfc3339(self.clock()), suffix)
        if resource.dropped:
            return json_response(201, obj)
        self._admitted(user, "create", target, None, obj)
        if resource.namespaced:
            namespaces = resources.lookup("", "v1", "namespaces")
            if self.store.get(resources.key(namespaces, None, target.namespace)) is None:
                raise errors.namespace_not_found(target.namespace)
        if self._dry_run(request):
            return json_response(201, obj)
        try:
            stored = self.store.create(self._key(target, obj["metadata"]["name"]), obj)
        except storage.Exists:
            raise errors.already_exists(resource, obj["metadata"]["name"])
        return json_response(201, stored)

    def _write(self, request, target, change):
        """Read, ``change(old) -> new``, compare-and-swap; retried on a concurrent write unless the new object
        pins a resourceVersion (then that write wins and this one is a 409)."""
        if target.resource.dropped:
            raise errors.not_found(target.resource, target.name)
        key = self._key(target)
        for attempt in range(UPDATE_ATTEMPTS):
            old = self._read(target)
            new = change(old)
            wanted = (new.get("metadata") or {}).get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise errors.conflict(target.resource, target.name)
            if storage.encode(new) == storage.encode(old) or self._dry_run(request):
                new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
                return json_response(200, new)
            try:
                return json_response(200, self.store.update(key, new, int(old["metadata"]["resourceVersion"])))
            except storage.Stale:
                continue
            except storage.Missing:
                raise errors.not_found(target.resource, target.name)
        raise errors.conflict(target.resource, target.name)

    def _update(self, request, target, user):
        body = self._body(request)
        strategy.check_body(target.resource, body, target.namespace, target.name)
        sub = target.subresource if target.subresource != "finalize" else None
        return self._write(request, target, lambda old: self._admitted(
            user, "update", target, old, strategy.prepare_update(target.resource, old, body, sub)))

    def _patch(self, request, target, user):
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in patch.TYPES:
            raise errors.unsupported_media_type(content_type)
        body = self._body(request)

        def change(old):
            try:
                patched = patch.apply(content_type, old, body)
            except patch.PatchError as exc:
                raise errors.ApiError(422, "Invalid", str(exc))
            strategy.check_body(target.resource, patched, target.namespace, target.name)
            return self._admitted(user, "patch", target, old,
                                  strategy.prepare_update(target.resource, old, patched, target.subresource))

        return self._write(request, target, change)

    def _delete(self, request, target, options=None, user=None):
        """Delete one object, honouring DeleteOptions preconditions. A pod terminates gracefully
        (disruption.graceful_deletion): it is stored with its deletion timestamp and answered as it is now,
        and its kubelet removes it; everything else goes at once."""
        resource = target.resource
        if resource.dropped:
            raise errors.not_found(resource, target.name)
        if resource.plural == "namespaces" and target.name in UNDELETABLE_NAMESPACES:
            raise errors.ApiError(403, "Forbidden", 'namespaces "%s" is forbidden: this namespace may not be deleted'
                                  % target.name)
        if options is None:
            options = dict(self._body(request) or {}) if request.body else {}
            if "gracePeriodSeconds" in request.query:
                options["gracePeriodSeconds"] = request.query["gracePeriodSeconds"]
        preconditions = (options or {}).get("preconditions") or {}
        for attempt in range(UPDATE_ATTEMPTS):
            old = self._read(target)
            if user is not None:
                self._admitted(user, "delete", target, old, None)
            metadata = old["metadata"]
            for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if preconditions.get(field) and preconditions[field] != metadata.get(field):
                    raise errors.conflict(resource, target.name, "Precondition failed: %s in precondition: %s, %s "
                                          "in object meta: %s" % (label, preconditions[field], label,
                                                                  metadata.get(field)))
            if resource.plural == "pods":
                at_once, terminating = disruption.graceful_deletion(old, options, self.clock())
                if not at_once:
                    if terminating is None or self._dry_run(request):
                        return json_response(200, terminating or old)
                    try:
                        return json_response(200, self.store.update(self._key(target), terminating,
                                                                    int(metadata["resourceVersion"])))
                    except storage.Stale:
                        continue
                    except storage.Missing:
                        raise errors.not_found(resource, target.name)
            if self._dry_run(request):
                break
            if resource.plural == "namespaces":
                for inner in resources.RESOURCES:
                    if inner.namespaced and not inner.dropped:
                        self.store.delete_prefix(resources.prefix(inner, target.name))
            try:
                self.store.delete(self._key(target), int(metadata["resourceVersion"]))
                break
            except storage.Stale:
                continue
            except storage.Missing:
                raise errors.not_found(resource, target.name)
        else:
            raise errors.conflict(resource, target.name)
        if resource.plural == "pods":
            return json_response(200, old)
        details = {"name": target.name, "kind": resource.plural, "uid": metadata.get("uid")}
        if resource.group:
            details["group"] = resource.group
        return json_response(200, _success(details=details))

    def _delete_collection(self, request, target):
        if target.resource.dropped:
            return json_response(200, _list_kind(target.resource, [], 0))
        objects, revision = self.store.list(resources.prefix(target.resource, target.namespace))
        deleted = []
        for obj in self._selected(request, target, objects):
            one = Target(target.resource, obj["metadata"].get("namespace"), obj["metadata"]["name"], None)
            try:
                self._delete(request, one, options={})
                deleted.append(obj)
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise
        return json_response(200, _list_kind(target.resource, deleted, revision))

    def _evict(self, request, target, user):
        """``pods/<name>/eviction``: delete the pod unless its PodDisruptionBudget forbids it (the rules are in
        disruption.py). The budget's disruption is taken first (a compare-and-swap on its status), then the pod
        gets the DisruptionTarget condition and is deleted as a DELETE would (gracefully)."""
        body = self._body(request) or {}
        if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
            raise errors.bad_request("the body of an eviction must be a policy/v1 Eviction")
        named = (body.get("metadata") or {}).get("name")
        if named != target.name:
            raise errors.bad_request("name in URL does not match name in Eviction object")
        options = dict(body.get("deleteOptions") or {})
        dry_run = self._dry_run(request) or options.get("dryRun") == ["All"]
        pod_target = Target(target.resource, target.namespace, target.name, None)
        budgets_resource = resources.lookup("policy", "v1", "poddisruptionbudgets")
        for attempt in range(UPDATE_ATTEMPTS):
            pod = self._read(pod_target)
            self._admitted(user, "create", target, pod, None)
            budgets = [] if disruption.ignores_budgets(pod) else self.store.list(
                resources.prefix(budgets_resource, target.namespace))[0]
            plan, subject = disruption.eviction_plan(pod, budgets)
            if plan == "take":
                try:
                    self._take_disruption(request, budgets_resource, subject, target.name, dry_run)
                except storage.Stale:
                    continue
            elif plan == "delete-unchanged" and not (options.get("preconditions") or {}).get("resourceVersion"):
                options["preconditions"] = dict(options.get("preconditions") or {},
                                                resourceVersion=pod["metadata"]["resourceVersion"])
            break
        else:
            raise errors.ApiError(504, "Timeout", 'couldn\'t update PodDisruptionBudget "%s" due to conflicts'
                                  % subject["metadata"]["name"])
        if dry_run:
            return json_response(201, _success(code=201))
        try:
            self._mark_disruption_target(request, pod_target, options)
            self._delete(request, pod_target, options=options)
        except errors.ApiError as exc:
            if exc.code == 409 and plan == "delete-unchanged":
                raise disruption.still_processing(subject)
            raise
        return json_response(201, _success(code=201))

    def _take_disruption(self, request, resource, budget, pod_name, dry_run):
        """Store the budget's status with one disruption taken (storage.Stale when it changed meanwhile)."""
        status = disruption.take_disruption(budget, pod_name, self.clock(), dry_run)
        if dry_run:
            return
        updated = dict(budget, status=status)
        key = resources.key(resource, budget["metadata"]["namespace"], budget["metadata"]["name"])
        self.store.update(key, updated, int(budget["metadata"]["resourceVersion"]))

    def _mark_disruption_target(self, request, target, options):
        """The DisruptionTarget condition an evicted pod carries into its termination (preconditions checked
        against the pod as it is; a resourceVersion precondition moves on with this write)."""
        preconditions = options.get("preconditions") or {}

        def change(old):
            for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if preconditions.get(field) and preconditions[field] != old["metadata"].get(field):
                    raise errors.conflict(target.resource, target.name, "the %s in the precondition (%s) does not "
                                          "match the %s in record (%s). The object might have been modified"
                                          % (label, preconditions[field], label, old["metadata"].get(field)))
            new = json.loads(json.dumps(old))
            conditions = [c for c in (new.get("status") or {}).get("conditions") or []
                          if c.get("type") != "DisruptionTarget"]
            new.setdefault("status", {})["conditions"] = conditions + [
                disruption.disruption_target_condition(self.clock())]
            return new

        written = json.loads(self._write(request, target, change).body)
        if preconditions.get("resourceVersion"):
            options["preconditions"] = dict(preconditions, resourceVersion=written["metadata"]["resourceVersion"])

    def _bind(self, request, target):
        body = self._body(request) or {}
        node = ((body or {}).get("target") or {}).get("name")
        if not node:
            raise errors.invalid(target.resource, target.name, [("target.name", "Required value")])

        def change(old):
            assigned = (old.get("spec") or {}).get("nodeName")
            if assigned:
                raise errors.conflict(target.resource, target.name, 'pod %s is already assigned to node "%s"'
                                      % (target.name, assigned))
            new = json.loads(json.dumps(old))
            new["spec"]["nodeName"] = node
            return new

        self._write(request, Target(target.resource, target.namespace, target.name, None), change)
        return json_response(201, _success(code=201))

    # --- watch -----------------------------------------------------------------------------------------

    def _watch(self, request, target):
        """etcd's own watch on the resource's prefix, relayed as watch events. Without a resourceVersion (or
        with "0") the current objects come first as ADDED; with one, every change after it. An object that
        starts or stops matching the selectors is ADDED / DELETED, as in the real server. ``sendInitialEvents``
        (with ``resourceVersionMatch=NotOlderThan``) overrides that default: true sends the current objects as
        ADDED followed by the ``k8s.io/initial-events-end`` BOOKMARK, false none. Either way the initial state and
        the changes come from one etcd revision (the list's), so nothing made after it is missed. The stream ends
        at ``timeoutSeconds``, when the client leaves, or when etcd ends it (a compacted start revision is a 410
        ERROR event)."""
        resource = target.resource
        matches = self._matcher(request, target)
        since = request.query.get("resourceVersion", "")
        try:
            timeout = float(request.query.get("timeoutSeconds") or WATCH_DEFAULT_TIMEOUT)
            start = int(since) + 1 if since and since != "0" else 0
        except ValueError:
            raise errors.bad_request("timeoutSeconds and resourceVersion must be numbers")
        send_initial = _send_initial_events(request.query, not start)
        initial, end_bookmark, subscriber = [], None, None
        prefix = resources.prefix(resource, target.namespace)
        if (send_initial or not start) and not resource.dropped:
            # From the watch cache once it has caught up with etcd's current revision (read linearizably: at
            # least any resourceVersion the client has seen); "0" takes the cache as it is. Else from etcd.
            if since == "0" or self.registry.wait_fresh(self.store.revision()):
                subscribed = self.registry.subscribe(prefix)
                if subscribed is not None:
                    subscriber, objects, revision = subscribed
            if subscriber is None:
                objects, revision = self.store.list(prefix)
            start = revision + 1
            if send_initial:
                initial = [obj for obj in objects if matches(obj)]
                if "sendInitialEvents" in request.query:
                    end_bookmark = {"kind": resource.kind, "apiVersion": resources.group_version(resource),
                                    "metadata": {"resourceVersion": str(revision),
                                                 "annotations": {INITIAL_EVENTS_END: "true"}}}
        table, include = self._wants_table(request), request.query.get("includeObject")

        def event(kind, obj):
            if table and kind not in ("ERROR", "BOOKMARK"):
                obj = tables.table(resource, [obj], obj["metadata"]["resourceVersion"], self.clock(), include)
            return (json.dumps({"type": kind, "object": obj}, separators=(",", ":")) + "\n").encode("utf-8")

        def translate(change):
            was = change.previous is not None and matches(change.previous)
            now = change.obj is not None and matches(change.obj)
            if change.obj is None:
                if not was:
                    return None
                gone = change.previous
                gone["metadata"]["resourceVersion"] = str(change.revision)
                return event("DELETED", gone)
            if now:
                return event("MODIFIED" if was else "ADDED", change.obj)
            return event("DELETED", change.obj) if was else None

        if start and subscriber is None and not resource.dropped:
            subscriber = self.registry.subscribe(prefix, since=start - 1)
        bookmarks = subscriber is not None and request.query.get("allowWatchBookmarks") == "true"
        watch = None if resource.dropped or subscriber is not None else self.store.watch(prefix, start)
        changes = subscriber.queue if subscriber is not None else queue.Queue()

        def pump():
            try:
                for change in watch.changes():
                    changes.put(change)
            except storage.Compacted as exc:
                changes.put(exc)
            changes.put(None)

        if watch is not None:
            threading.Thread(target=pump, name="watch-pump", daemon=True).start()

        def stream():
            try:
                for obj in initial:
                    yield event("ADDED", obj)
                if end_bookmark is not None:
                    yield event("BOOKMARK", end_bookmark)
                ends = time.monotonic() + timeout
                next_bookmark = time.monotonic() + BOOKMARK_PERIOD
                while not self.stopping.is_set() and time.monotonic() < ends and request.alive():
                    try:
                        item = changes.get(timeout=WATCH_CHECK)
                    except queue.Empty:
                        if bookmarks and time.monotonic() >= next_bookmark:
                            revision = self.registry.bookmark(subscriber)
                            if revision is not None:
                                next_bookmark = time.monotonic() + BOOKMARK_PERIOD
                                yield event("BOOKMARK", {"kind": resource.kind,
                                                         "apiVersion": resources.group_version(resource),
                                                         "metadata": {"resourceVersion": str(revision)}})
                        continue
                    if isinstance(item, storage.Compacted):
                        yield event("ERROR", errors.expired("too old resource version: %s" % since).status())
                    if item is None or isinstance(item, Exception):
                        return
                    chunk = translate(item)
                    if chunk:
                        yield chunk
            finally:
                if watch is not None:
                    watch.close()
                if subscriber is not None:
                    self.registry.unsubscribe(subscriber)

        return Response(200, JSON, None, stream())
