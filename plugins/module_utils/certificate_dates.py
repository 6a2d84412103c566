# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a certificate expires, read on a host with the Python standard library alone (the hosts have no
``cryptography``): the notAfter of a DER X.509 certificate (RFC 5280 4.1.2.5), and of the first certificate of a PEM
file. I/O for the file only; shared by machine_info and certificate_renewal."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
from datetime import datetime, timezone

PEM = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)


class NotACertificate(ValueError):
    pass


def _tlv(data, pos):
    """(tag, start of content, end of content) of the DER element at ``pos``."""
    if pos + 2 > len(data):
        raise NotACertificate("truncated")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise NotACertificate("bad length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise NotACertificate("truncated")
    return tag, pos, pos + length


def not_after(der):
    """The notAfter of a DER X.509 certificate, as an aware datetime (RFC 5280 4.1)."""
    tag, start, _end = _tlv(der, 0)  # Certificate
    tag, start, _end = _tlv(der, start)  # tbsCertificate
    if tag != 0x30:
        raise NotACertificate("no tbsCertificate")
    pos = start
    tag, _s, end = _tlv(der, pos)
    if tag == 0xA0:  # [0] version
        pos = end
    for _field in ("serialNumber", "signature", "issuer"):
        _tag, _s, pos = _tlv(der, pos)
    tag, start, _end = _tlv(der, pos)  # validity
    _tag, _s, after = _tlv(der, start)  # notBefore
    tag, start, end = _tlv(der, after)  # notAfter
    text = der[start:end].decode("ascii")
    if tag == 0x17:  # UTCTime: years 1950-2049 (RFC 5280)
        year = int(text[:2])
        text = "%d%s" % (1900 + year if year >= 50 else 2000 + year, text[2:])
    elif tag != 0x18:
        raise NotACertificate("no notAfter")
    return datetime.strptime(text, "%Y%m%d%H%M%SZ").replace(tzinfo=timezone.utc)


def first_pem_certificate(text):
    """The DER bytes of the first PEM certificate in ``text`` (bytes)."""
    match = PEM.search(text)
    if not match:
        raise NotACertificate("no PEM certificate")
    return base64.b64decode(b"".join(match.group(1).split()))


def expiry_of_file(path):
    """When the first certificate of the PEM file ``path`` expires (aware datetime); OSError or ValueError."""
    with open(path, "rb") as handle:
        return not_after(first_pem_certificate(handle.read()))
