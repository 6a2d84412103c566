# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""API errors as the real API server reports them: a ``Status`` object with ``reason``, ``code`` and a message
worded like Kubernetes' own (``configmaps "x" not found``), so clients that switch on ``reason`` behave."""


class ApiError(Exception):
    """One failed request; ``status()`` is the body the server sends."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self):
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


def qualified(resource):
    """``configmaps`` for the core group, ``leases.coordination.k8s.io`` otherwise, as messages name them."""
    return resource.plural + ("." + resource.group if resource.group else "")


def _details(resource, name, **extra):
    details = {"name": name, "kind": resource.plural}
    if resource.group:
        details["group"] = resource.group
    details.update(extra)
    return details


def not_found(resource, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(resource), name), _details(resource, name))


def namespace_not_found(name):
    return ApiError(404, "NotFound", 'namespaces "%s" not found' % name, {"name": name, "kind": "namespaces"})


def already_exists(resource, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(resource), name),
                    _details(resource, name))


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def conflict(resource, name, why=STALE):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (qualified(resource), name, why),
                    _details(resource, name))


def invalid(resource, name, causes):
    """422 listing every broken field: ``causes`` = ``[(field, rule message)]``."""
    text = "; ".join("%s: %s" % cause for cause in causes)
    details = _details(resource, name, kind=resource.kind, causes=[
        {"reason": "FieldValueRequired" if message.startswith("Required value") else "FieldValueInvalid",
         "message": message, "field": field} for field, message in causes])
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (resource.kind, name, text), details)


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(user, verb, resource_name, group, namespace, name=None, path=None, subresource=None, reason=""):
    """403 in the real server's words, for a request or a non-resource path; ``reason`` is what the
    authorizers said, appended after a colon when there is any."""
    suffix = ": " + reason if reason else ""
    if path is not None:
        return ApiError(403, "Forbidden", 'forbidden: User "%s" cannot %s path "%s"%s' % (user, verb, path, suffix))
    what = '%s "%s"' % (resource_name, name) if name else resource_name
    where = ' in the namespace "%s"' % namespace if namespace else " at the cluster scope"
    resource = resource_name + ("/" + subresource if subresource else "")
    return ApiError(403, "Forbidden", '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s%s'
                    % (what, user, verb, resource, group, where, suffix), {"name": name or "", "kind": resource_name})


def forbidden_because(qualified_resource, name, why):
    """403 for a reason other than authorization (the server's NewForbidden)."""
    return ApiError(403, "Forbidden", '%s "%s" is forbidden: %s' % (qualified_resource, name, why),
                    {"name": name, "kind": qualified_resource.partition(".")[0]})


def too_many_requests(message, causes=(), retry_after=0):
    """429 with the causes the client shows (an eviction a disruption budget refuses)."""
    details = {"causes": [{"reason": reason, "message": text} for reason, text in causes]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests", message, details)


def method_not_allowed(method):
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource (%s)"
                    % method)


def unsupported_media_type(content_type):
    return ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - accepted media '
                    'types include: application/json-patch+json, application/merge-patch+json, '
                    'application/strategic-merge-patch+json (got "%s")' % content_type)


def expired(message):
    return ApiError(410, "Expired", message)


def timeout():
    """The store did not answer within its deadline (etcd without quorum, or unreachable)."""
    return ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout - context deadline "
                                    "exceeded")


def internal(message):
    return ApiError(500, "InternalError", "Internal error occurred: %s" % message)


def not_found_path():
    return ApiError(404, "NotFound", "the server could not find the requested resource")
