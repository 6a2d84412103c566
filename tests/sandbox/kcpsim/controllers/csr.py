# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CSR approver's and signer's decisions. Pure, no I/O (the request PEM is parsed in memory).

Approval (csrapproving): only kubelet client certificates are approved automatically — signer
``kubernetes.io/kube-apiserver-client-kubelet``, subject ``O=system:nodes`` only and ``CN=system:node:<name>``,
no SANs, usages within {digital signature, key encipherment, client auth} and including client auth — and only
when asked by a bootstrap token (group ``system:bootstrappers``, kubeadm's ``nodeclient`` binding) or by the
node itself renewing (group ``system:nodes`` and user = CN, ``selfnodeclient``). The real controller asks a
SubjectAccessReview; the emulation's authorizer allows everything, so the groups decide. Condition:
``Approved`` / ``AutoApproved`` / "Auto approving kubelet client certificate after SubjectAccessReview.".

Signing (csrsigning): an approved, not denied, not failed CSR without a certificate, for one of the signers
below, gets a certificate from the cluster CA valid for ``--cluster-signing-duration`` (default 1 year) or the
CSR's ``spec.expirationSeconds`` when shorter (never under 10 minutes).
"""

import base64
import datetime

from cryptography import x509
from cryptography.x509.oid import NameOID

KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
SIGNERS = (KUBELET_CLIENT, "kubernetes.io/kubelet-serving", "kubernetes.io/kube-apiserver-client",
           "kubernetes.io/legacy-unknown")
CLIENT_USAGES = {"digital signature", "key encipherment", "client auth"}
MIN_EXPIRATION = 600
APPROVED_MESSAGE = "Auto approving kubelet client certificate after SubjectAccessReview."


class BadRequest(ValueError):
    """``spec.request`` is not a PEM certificate request."""


def condition_true(csr, kind):
    return any(c.get("type") == kind and c.get("status", "True") == "True"
               for c in (csr.get("status") or {}).get("conditions") or [])


def request_pem(csr):
    try:
        return base64.b64decode((csr.get("spec") or {}).get("request") or "", validate=True)
    except ValueError:
        raise BadRequest("spec.request is not base64")


def subject(csr):
    """``(common name, [organizations], has SANs)`` of the request."""
    try:
        request = x509.load_pem_x509_csr(request_pem(csr))
    except ValueError as exc:
        raise BadRequest("spec.request is not a PEM certificate request: %s" % exc)
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    organizations = [a.value for a in request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    try:
        request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        has_sans = True
    except x509.ExtensionNotFound:
        has_sans = False
    return (names[0].value if names else ""), organizations, has_sans


def approval_reason(csr):
    """Why the CSR may be approved automatically, or None. Raises BadRequest for an unreadable request."""
    if condition_true(csr, "Approved") or condition_true(csr, "Denied") or condition_true(csr, "Failed"):
        return None
    spec = csr.get("spec") or {}
    if spec.get("signerName") != KUBELET_CLIENT:
        return None
    usages = set(spec.get("usages") or [])
    if "client auth" not in usages or not usages <= CLIENT_USAGES:
        return None
    common_name, organizations, has_sans = subject(csr)
    if organizations != ["system:nodes"] or not common_name.startswith("system:node:") or has_sans:
        return None
    groups = spec.get("groups") or []
    if "system:bootstrappers" in groups:
        return "nodeclient"
    if "system:nodes" in groups and spec.get("username") == common_name:
        return "selfnodeclient"
    return None


def approved_condition(stamp):
    return {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": APPROVED_MESSAGE,
            "lastUpdateTime": stamp, "lastTransitionTime": stamp}


def failed_condition(stamp, message):
    return {"type": "Failed", "status": "True", "reason": "SignerValidationFailure", "message": message,
            "lastUpdateTime": stamp, "lastTransitionTime": stamp}


def wants_signing(csr):
    status = csr.get("status") or {}
    return (condition_true(csr, "Approved") and not condition_true(csr, "Denied")
            and not condition_true(csr, "Failed") and not status.get("certificate")
            and (csr.get("spec") or {}).get("signerName") in SIGNERS)


def certificate_usages(csr):
    """The pki.sign_csr usages ("client" / "server") the CSR asks for; BadRequest when it asks for neither."""
    usages = set((csr.get("spec") or {}).get("usages") or [])
    chosen = tuple(name for name, usage in (("client", "client auth"), ("server", "server auth")) if usage in usages)
    if not chosen:
        raise BadRequest("the CSR asks for neither client auth nor server auth")
    return chosen


def validity(csr, max_duration):
    """How long the certificate is valid (a timedelta)."""
    requested = (csr.get("spec") or {}).get("expirationSeconds")
    seconds = max_duration.total_seconds()
    if requested:
        seconds = min(seconds, max(int(requested), MIN_EXPIRATION))
    return datetime.timedelta(seconds=seconds)
