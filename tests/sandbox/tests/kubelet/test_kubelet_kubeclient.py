# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcpsim.kubeclient speaks the Kubernetes REST conventions over verified TLS.

The server here is a recording TLS endpoint on loopback that answers canned responses; what is checked is
what the client sends (paths, queries, content types, credentials) and how it maps answers to errors.
"""

import http.server
import json
import socket
import ssl
import threading

import pytest

from kcpsim import kubeclient, kubeconfig, pki


class _Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                 "body": body, "peer_cert": self.connection.getpeercert()})
        status, payload = self.server.replies.get((self.command, self.path.split("?")[0]), (404, {
            "kind": "Status", "status": "Failure", "reason": "NotFound", "message": "not found", "code": 404}))
        if status == "hang":
            self.server.release.wait(5)
            return
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(payload, bytes) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    d = tmp_path_factory.mktemp("kubeclient")
    ca_cert, ca_key = pki.new_ca("kubernetes", algorithm="ECDSA-P256")
    server_cert, server_key = pki.new_leaf(ca_cert, ca_key, "kube-apiserver", ip_addresses=["127.0.0.1"],
                                           usages=("server",), algorithm="ECDSA-P256")
    client_cert, client_key = pki.new_leaf(ca_cert, ca_key, "kubernetes-admin", ["kubeadm:cluster-admins"],
                                           usages=("client",), algorithm="ECDSA-P256")
    other_ca = pki.new_ca("someone-else", algorithm="ECDSA-P256")[0]
    pki.write_pair(str(d), "ca", ca_cert, ca_key)
    pki.write_pair(str(d), "server", server_cert, server_key)
    return {"dir": d, "ca": pki.cert_pem(ca_cert), "other_ca": pki.cert_pem(other_ca),
            "client_cert": pki.cert_pem(client_cert), "client_key": pki.key_pem(client_key)}


@pytest.fixture
def server(tls):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(tls["dir"] / "server.crt"), str(tls["dir"] / "server.key"))
    ctx.load_verify_locations(str(tls["dir"] / "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    httpd.seen, httpd.replies, httpd.release = [], {}, threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd
    httpd.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def _client(server, tls, **kwargs):
    options = dict(ca_pem=tls["ca"], client_cert_pem=tls["client_cert"], client_key_pem=tls["client_key"], timeout=2)
    options.update(kwargs)
    return kubeclient.KubeClient("https://127.0.0.1:%d" % server.server_address[1], **options)


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-1", "resourceVersion": "7"}}


@pytest.mark.parametrize("call, method, path, content_type", [
    (lambda c: c.get("v1", "nodes", "cp-1"), "GET", "/api/v1/nodes/cp-1", None),
    (lambda c: c.list("v1", "pods", "kube-system", label_selector="component=etcd,tier=control-plane"),
     "GET", "/api/v1/namespaces/kube-system/pods?labelSelector=component%3Detcd%2Ctier%3Dcontrol-plane", None),
    (lambda c: c.list("v1", "pods", "kube-system", field_selector="spec.nodeName=cp-1"),
     "GET", "/api/v1/namespaces/kube-system/pods?fieldSelector=spec.nodeName%3Dcp-1", None),
    (lambda c: c.create("coordination.k8s.io/v1", "leases", {"metadata": {"name": "cp-1"}}, "kube-node-lease"),
     "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "application/json"),
    (lambda c: c.update("v1", "nodes", NODE, subresource="status"),
     "PUT", "/api/v1/nodes/cp-1/status", "application/json"),
    (lambda c: c.patch("v1", "nodes", "cp-1", {"metadata": {"labels": {"a": "b"}}}),
     "PATCH", "/api/v1/nodes/cp-1", "application/merge-patch+json"),
    (lambda c: c.patch("v1", "nodes", "cp-1", {"spec": {"taints": []}}, patch_type="strategic"),
     "PATCH", "/api/v1/nodes/cp-1", "application/strategic-merge-patch+json"),
    (lambda c: c.delete("v1", "pods", "etcd-cp-1", "kube-system"),
     "DELETE", "/api/v1/namespaces/kube-system/pods/etcd-cp-1", None),
], ids=[
    "get addresses a cluster-scoped core object",
    "list passes a label selector",
    "list passes a field selector",
    "create posts to a namespaced group collection",
    "update puts the status subresource",
    "a merge patch says so in its content type",
    "a strategic merge patch says so in its content type",
    "delete addresses a namespaced object",
])
def test_requests_follow_the_rest_conventions(server, tls, call, method, path, content_type):
    server.replies[(method, path.split("?")[0])] = (200, {"ok": True})
    assert call(_client(server, tls)) == {"ok": True}
    seen = server.seen[-1]
    assert (seen["method"], seen["path"]) == (method, path)
    assert seen["headers"].get("Content-Type") == content_type
    assert dict(x[0] for x in seen["peer_cert"]["subject"])["commonName"] == "kubernetes-admin"


@pytest.mark.parametrize("status, error, reason", [
    (404, kubeclient.NotFound, "NotFound"),
    (409, kubeclient.Conflict, "Conflict"),
    (401, kubeclient.Unauthorized, "Unauthorized"),
    (403, kubeclient.Forbidden, "Forbidden"),
    (500, kubeclient.ServerError, "InternalError"),
    (504, kubeclient.ServerError, "Timeout"),
    (422, kubeclient.ApiError, "Invalid"),
], ids=[
    "404 raises NotFound",
    "409 raises Conflict",
    "401 raises Unauthorized",
    "403 raises Forbidden",
    "500 raises ServerError",
    "504 raises ServerError",
    "422 raises a plain ApiError with the server's reason",
])
def test_error_statuses_map_to_typed_errors(server, tls, status, error, reason):
    server.replies[("GET", "/api/v1/nodes/x")] = (status, {"kind": "Status", "reason": reason, "message": "m"})
    with pytest.raises(error) as caught:
        _client(server, tls).get("v1", "nodes", "x")
    assert (caught.value.status, caught.value.reason, caught.value.message) == (status, reason, "m")


def test_a_bearer_token_is_sent_and_no_client_cert_needed(server, tls):
    server.replies[("GET", "/version")] = (200, {"gitVersion": "v1.37.1"})
    client = _client(server, tls, client_cert_pem=None, client_key_pem=None, token="abcdef.0123456789abcdef")
    assert client.get_path("/version") == {"gitVersion": "v1.37.1"}
    assert server.seen[-1]["headers"]["Authorization"] == "Bearer abcdef.0123456789abcdef"
    assert server.seen[-1]["peer_cert"] is None


def test_plain_text_answers_are_returned_as_text(server, tls):
    server.replies[("GET", "/readyz")] = (200, b"ok")
    assert _client(server, tls).get_path("/readyz") == "ok"


def test_a_server_outside_the_trusted_ca_is_refused(server, tls):
    with pytest.raises(kubeclient.ApiUnavailable, match="TLS handshake failed"):
        _client(server, tls, ca_pem=tls["other_ca"]).get_path("/version")


def test_insecure_discovery_mode_reads_without_verifying(server, tls):
    server.replies[("GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info")] = (200, {"data": {}})
    client = _client(server, tls, ca_pem=None, client_cert_pem=None, client_key_pem=None,
                     insecure_skip_tls_verify=True)
    assert client.get("v1", "configmaps", "cluster-info", "kube-public") == {"data": {}}


def test_a_missing_ca_without_insecure_mode_is_refused():
    with pytest.raises(ValueError, match="CA certificate is required"):
        kubeclient.KubeClient("https://127.0.0.1:6443")


def test_a_server_that_does_not_answer_times_out(server, tls):
    server.replies[("GET", "/readyz")] = ("hang", None)
    with pytest.raises(kubeclient.ApiUnavailable, match="no answer within"):
        _client(server, tls, timeout=0.3).get_path("/readyz")


def test_a_closed_port_is_unavailable(tls):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = kubeclient.KubeClient("https://127.0.0.1:%d" % port, ca_pem=tls["ca"], timeout=1)
    with pytest.raises(kubeclient.ApiUnavailable):
        client.get_path("/readyz")


def test_a_client_is_built_from_a_kubeconfig(server, tls, tmp_path):
    path = str(tmp_path / "admin.conf")
    kubeconfig.write(path, kubeconfig.build("https://127.0.0.1:%d" % server.server_address[1], tls["ca"],
                                            "kubernetes-admin", client_cert_pem=tls["client_cert"],
                                            client_key_pem=tls["client_key"]))
    server.replies[("GET", "/api/v1/nodes")] = (200, {"items": []})
    assert kubeclient.KubeClient.from_kubeconfig(path).list("v1", "nodes") == {"items": []}


def test_the_connection_is_kept_alive_between_requests(server, tls):
    server.replies[("GET", "/readyz")] = (200, b"ok")
    client = _client(server, tls)
    client.get_path("/readyz")
    first = client._conn.sock
    client.get_path("/readyz")
    assert client._conn.sock is first
