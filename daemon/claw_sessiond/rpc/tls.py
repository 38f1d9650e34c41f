"""The ``--tcp`` listener's identity: TLS with a certificate made at each start, pinned by clients.

The token (``auth.py``) proves the client to the daemon; this proves the
daemon to the client. While the daemon is down, any local user may bind its
port; a client that sent its token and messages to whoever listens would hand
them to that user, and take its empty replies for success. So the TCP port
speaks TLS only, and a client trusts exactly one certificate: the one in
``.claw/tcp-cert.pem`` of the workspace (or a copy it was given). Before the
TLS handshake has proven the peer holds that certificate's key, a client
sends nothing but its TLS ClientHello.

At every start, before the port is bound, the daemon makes a fresh ECDSA
P-256 key and a self-signed certificate for it and writes the certificate
(PEM) to ``.claw/tcp-cert.pem`` (mode 0600, written like the token: never
through a link). The key exists only in this process's memory: it is never
written anywhere, so nothing another user reads or a backup copies can
impersonate a later daemon, and a certificate left behind by a stopped daemon
proves nothing (no process holds its key). The certificate names
:data:`~claw_sessiond_client.tcp.SERVER_NAME` and the ``--tcp`` host;
clients check the name :data:`~claw_sessiond_client.tcp.SERVER_NAME`
whatever address they dial. It is valid from a day before the start (clocks
of containers differ a little) for :data:`VALID_DAYS`.

Why a file of its own and not a field of ``endpoint.json``: a PEM file is what
every TLS stack and tool takes as is (``grpcurl -cacert .claw/tcp-cert.pem``,
``credentials.createSsl`` in Node.js), it can be copied or mounted alone into a
container beside the token, and it stays when the daemon stops, so a client
still holds the pin while an impostor holds the port.

Must never: write the private key anywhere.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Final

from claw_sessiond_client.tcp import CERT_FILE, SERVER_NAME

from ..endpoint import write_private_file

if TYPE_CHECKING:
    from cryptography import x509

__all__ = ["CERT_FILE", "VALID_DAYS", "TlsIdentity", "make_identity"]

#: How long a certificate is valid. It is replaced at every start; a daemon is not expected to run longer.
VALID_DAYS: Final = 3650


class TlsIdentity:
    """A private key (in memory only) and its self-signed certificate.

    Args:
        key_pem: the private key, PKCS#8 PEM (never written to a file).
        cert_pem: the certificate, PEM.
    """

    def __init__(self, key_pem: bytes, cert_pem: bytes) -> None:
        self.key_pem = key_pem
        self.cert_pem = cert_pem

    def write_certificate(self, claw_dir: Path) -> Path:
        """Put the certificate at ``claw_dir/tcp-cert.pem`` (0600, atomically, never through a link).

        Raises:
            OSError: the file cannot be written (the caller turns this into a start-up error).
        """
        return write_private_file(claw_dir, CERT_FILE, self.cert_pem)


def _host_name(host: str) -> x509.GeneralName:
    from cryptography import x509

    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return x509.IPAddress(ipaddress.ip_address(bare))
    except ValueError:
        return x509.DNSName(bare)


def make_identity(host: str, now: dt.datetime | None = None) -> TlsIdentity:
    """A fresh key and a self-signed certificate naming :data:`SERVER_NAME` and ``host`` (the ``--tcp`` host).

    cryptography is imported here, not with the module: a daemon without ``--tcp`` does not load it (about
    60 ms of its start).
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SERVER_NAME)])
    start = now or dt.datetime.now(dt.UTC)
    names: list[x509.GeneralName] = [x509.DNSName(SERVER_NAME)]
    if host and host != SERVER_NAME:
        names.append(_host_name(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - dt.timedelta(days=1))
        .not_valid_after(start + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        # Its own issuer: the client's trust anchor is this very certificate.
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return TlsIdentity(key_pem, cert.public_bytes(serialization.Encoding.PEM))
