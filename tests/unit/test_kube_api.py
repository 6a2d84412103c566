# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kube_api.connected: the kubeconfig's inline certificate, key and CA are in files only this user can read while the
client is in use, and gone once it is left; the Kubernetes client leaves none of its own behind (it would remove them
only at the process's exit, which an ansible worker leaves without); relative paths are the kubeconfig's."""

import base64
import http.server
import json
import os
import shutil
import stat
import threading

import pytest
import yaml
from kubernetes.client.exceptions import ApiException
from kubernetes.config import kube_config

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files, kube_api


def kubeconfig(path, cluster, user):
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin@demo",
        "clusters": [{"name": "demo", "cluster": dict(cluster, server="https://10.0.0.100:6443")}],
        "users": [{"name": "admin", "user": user}],
        "contexts": [{"name": "admin@demo", "context": {"cluster": "demo", "user": "admin"}}]}))
    return str(path)


def inline(data):
    return base64.standard_b64encode(data).decode()


@pytest.fixture
def made(monkeypatch):
    """The private directories kube_api makes while the test runs (others, a lock keeper's of an earlier test in the
    same process, come and go on their own)."""
    directories = []
    original = credential_files.private_directory

    def recorded():
        directories.append(original())
        return directories[-1]

    monkeypatch.setattr(credential_files, "private_directory", recorded)
    return directories


def test_inline_credentials_live_in_private_files_while_the_client_is_in_use(tmp_path, made):
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority-data": inline(b"ca")},
                      {"client-certificate-data": inline(b"cert"), "client-key-data": inline(b"key")})
    library_files = dict(kube_config._temp_files)
    with kube_api.connected(path) as api:
        settings = api.configuration
        for name, content in ((settings.cert_file, b"cert"), (settings.key_file, b"key"), (settings.ssl_ca_cert, b"ca")):
            with open(name, "rb") as handle:
                assert handle.read() == content
            assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
            assert stat.S_IMODE(os.stat(os.path.dirname(name)).st_mode) == 0o700
        assert settings.host == "https://10.0.0.100:6443" and settings.verify_ssl
    assert not any(os.path.exists(name) for name in (settings.cert_file, settings.key_file, settings.ssl_ca_cert))
    assert made and not any(os.path.exists(directory) for directory in made)
    assert kube_config._temp_files == library_files


def test_paths_the_kubeconfig_names_are_relative_to_its_directory(tmp_path):
    for name in ("ca.crt", "admin.crt", "admin.key"):
        (tmp_path / name).write_text(name)
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority": "ca.crt"},
                      {"client-certificate": "admin.crt", "client-key": str(tmp_path / "admin.key")})
    with kube_api.connected(path) as api:
        assert (api.configuration.ssl_ca_cert, api.configuration.cert_file, api.configuration.key_file) == \
            (str(tmp_path / "ca.crt"), str(tmp_path / "admin.crt"), str(tmp_path / "admin.key"))


def test_a_kubeconfig_that_cannot_be_used_is_unreadable_and_leaves_nothing(tmp_path, made):
    with pytest.raises(kube_api.ClusterUnreadable, match="cannot be used"):
        with kube_api.connected(str(tmp_path / "missing.conf")):
            pass
    assert not any(os.path.exists(directory) for directory in made)


def test_inline_credentials_are_named_by_their_kind_and_key(tmp_path):
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority-data": inline(b"ca")},
                      {"client-certificate-data": inline(b"cert"), "client-key-data": inline(b"key")})
    with kube_api.connected(path) as api:
        settings = api.configuration
        directory = os.path.dirname(settings.cert_file)
        assert (settings.cert_file, settings.key_file, settings.ssl_ca_cert) == (
            os.path.join(directory, "user-0-client-certificate"), os.path.join(directory, "user-0-client-key"),
            os.path.join(directory, "cluster-0-certificate-authority"))


def test_a_credential_directory_already_gone_on_leaving_is_no_error(tmp_path):
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority-data": inline(b"ca")},
                      {"client-certificate-data": inline(b"cert"), "client-key-data": inline(b"key")})
    with kube_api.connected(path) as api:
        directory = os.path.dirname(api.configuration.cert_file)
        shutil.rmtree(directory)  # say, a cleaner of the temporary directory
    assert not os.path.exists(directory)


def test_a_missing_kubeconfig_is_named_with_why_it_cannot_be_used(tmp_path):
    missing = str(tmp_path / "missing.conf")
    with pytest.raises(kube_api.ClusterUnreadable) as raised:
        with kube_api.connected(missing):
            pass
    assert str(raised.value) == "kubeconfig %s cannot be used: [Errno 2] No such file or directory: %r" % (missing, missing)
    assert raised.value.status is None


class FakeApi:
    class configuration:  # noqa: N801 (the client's attribute)
        host = "https://10.0.0.100:6443"


@pytest.mark.parametrize("raised, message, status", [
    (ApiException(status=404, reason="Not Found"), "the API server at https://10.0.0.100:6443 answered 404 Not Found", 404),
    (ApiException(status=403, reason="Forbidden"), "the API server at https://10.0.0.100:6443 answered 403 Forbidden", 403),
    (ConnectionRefusedError("[Errno 111] Connection refused"),
     "the API server at https://10.0.0.100:6443 did not answer: [Errno 111] Connection refused", None),
    (TimeoutError("timed out"), "the API server at https://10.0.0.100:6443 did not answer: timed out", None),
    (kube_api.ClusterUnreadable("already said", status=500), "already said", 500),
], ids=["an HTTP error names the server, the status and the reason", "a refusal names its status too",
        "a refused connection is no answer at all", "a timeout is no answer at all", "an unreadable cluster passes through as it is"])
def test_what_the_client_raises_is_one_unreadable_cluster_naming_the_server(raised, message, status):
    with pytest.raises(kube_api.ClusterUnreadable) as caught:
        with kube_api.answers(FakeApi()):
            raise raised
    assert str(caught.value) == message and caught.value.status == status


@pytest.mark.parametrize("exc, found", [
    (kube_api.ClusterUnreadable("gone", status=404), True),
    (kube_api.ClusterUnreadable("refused", status=403), False),
    (kube_api.ClusterUnreadable("conflict", status=405), False),
    (kube_api.ClusterUnreadable("no answer"), False),
    (ApiException(status=404, reason="Not Found"), False),
], ids=["a 404 is not found", "a 403 is not", "a 405 is not", "no answer at all is not", "the client's own 404 not turned into ours is not"])
def test_not_found_is_only_an_unreadable_cluster_answered_404(exc, found):
    assert kube_api.not_found(exc) is found


class Recorded(http.server.BaseHTTPRequestHandler):
    """An API server on loopback answering from ``ANSWERS`` by path, recording each request it was sent."""
    ANSWERS = {
        "/api/v1/nodes": (200, "application/json", b'{"kind": "NodeList", "items": [{"metadata": {"name": "cp-1"}}]}'),
        "/readyz": (200, "text/plain; charset=utf-8", b"ok"),
        "/api/v1/namespaces/kube-system/configmaps/missing": (404, "application/json", b'{"kind": "Status", "code": 404}'),
    }
    seen = []
    # path: the error statuses it answers first, one a request (an API server whose etcd member is down)
    failing = {}

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.seen.append((self.command, self.path, self.headers.get("Authorization"), self.headers.get("Content-Type"),
                          json.loads(self.rfile.read(length)) if length else None))
        status, kind, body = self.ANSWERS.get(self.path.split("?")[0], (201, "application/json", b"{}"))
        if self.failing.get(self.path):
            status, body = self.failing[self.path].pop(0), b'{"kind": "Status", "code": 504}'

        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_DELETE = answer

    def log_message(self, *_args):
        pass


@pytest.fixture
def api_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Recorded.seen = []
    Recorded.failing = {}
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def token_kubeconfig(tmp_path, server):
    path = tmp_path / "admin.conf"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin@demo",
        "clusters": [{"name": "demo", "cluster": {"server": server}}], "users": [{"name": "admin", "user": {"token": "s3cret"}}],
        "contexts": [{"name": "admin@demo", "context": {"cluster": "demo", "user": "admin"}}]}))
    return str(path)


def test_a_request_sends_the_token_query_and_body_and_decodes_what_comes_back(tmp_path, api_server):
    with kube_api.connected(token_kubeconfig(tmp_path, api_server)) as api:
        nodes = kube_api.request(api, "GET", "/api/v1/nodes", 5, query={"labelSelector": "tier=control-plane", "limit": 2})
        assert nodes["items"] == [{"metadata": {"name": "cp-1"}}]
        assert kube_api.request(api, "GET", "/readyz", 5) == "ok"
        assert kube_api.request(api, "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x", 5, body={"spec": {"a": 1}}) == {}
        with pytest.raises(kube_api.ClusterUnreadable) as missing:
            kube_api.request(api, "GET", "/api/v1/namespaces/kube-system/configmaps/missing", 5)
    assert kube_api.not_found(missing.value) and str(missing.value) == "the API server at %s answered 404 Not Found" % api_server
    assert Recorded.seen == [
        ("GET", "/api/v1/nodes?labelSelector=tier%3Dcontrol-plane&limit=2", "Bearer s3cret", None, None),
        ("GET", "/readyz", "Bearer s3cret", None, None),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x", "Bearer s3cret", "application/json", {"spec": {"a": 1}}),
        ("GET", "/api/v1/namespaces/kube-system/configmaps/missing", "Bearer s3cret", None, None),
    ]


def test_a_read_an_api_server_could_not_serve_is_made_once_more_and_a_write_never(tmp_path, api_server):
    Recorded.failing = {"/readyz": [504], "/api/v1/nodes": [503, 503], "/apis/x": [504]}
    with kube_api.connected(token_kubeconfig(tmp_path, api_server)) as api:
        assert kube_api.request(api, "GET", "/readyz", 5) == "ok"
        with pytest.raises(kube_api.ClusterUnreadable, match="answered 503") as twice:
            kube_api.request(api, "GET", "/api/v1/nodes", 5)
        with pytest.raises(kube_api.ClusterUnreadable, match="answered 504"):
            kube_api.request(api, "PUT", "/apis/x", 5, body={})
    assert twice.value.status == 503
    assert [seen[:2] for seen in Recorded.seen] == [
        ("GET", "/readyz"), ("GET", "/readyz"), ("GET", "/api/v1/nodes"), ("GET", "/api/v1/nodes"), ("PUT", "/apis/x")]


def test_a_request_nobody_answers_is_no_answer_at_all(tmp_path):
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority-data": inline(b"ca")}, {"token": "s3cret"})
    with kube_api.connected(path) as api:
        api.configuration.host = "http://127.0.0.1:9"  # the discard port: nothing listens
        with pytest.raises(kube_api.ClusterUnreadable, match="did not answer") as unanswered:
            kube_api.request(api, "GET", "/api/v1/nodes", 2)
    assert unanswered.value.status is None


def test_an_object_that_does_not_exist_reads_as_none_and_one_that_does_as_itself(tmp_path, api_server):
    with kube_api.connected(token_kubeconfig(tmp_path, api_server)) as api:
        assert kube_api.read_optional(api, "/api/v1/namespaces/kube-system/configmaps/missing", 5) is None
        assert kube_api.read_optional(api, "/api/v1/nodes", 5)["kind"] == "NodeList"
