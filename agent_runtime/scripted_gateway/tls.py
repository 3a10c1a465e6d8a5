"""HTTPS for the scripted gateway: a self-signed certificate made when the gateway starts.

Benchmarks and tests that need a real TLS endpoint on loopback (the cost of a handshake per LLM call
against keeping the connection) serve the gateway with it and trust exactly that certificate:
``GatewayCertificate.client_context()`` in process, or the PEM file the CLI writes with
``--tls-cert-out`` (``ssl.create_default_context(cafile=...)``). The certificate is its own CA, valid
for the listening address and ``localhost`` for one day, and trusted by nobody else.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["GatewayCertificate"]

_VALIDITY = datetime.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class GatewayCertificate:
    """A self-signed certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes = b""

    @classmethod
    def generate(cls, host: str = "127.0.0.1") -> GatewayCertificate:
        """A fresh P-256 key and a certificate naming ``host`` (an IP address or a DNS name) and
        ``localhost``; it may sign nothing but itself (path length 0)."""
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Cowork scripted gateway")])
        now = datetime.datetime.now(datetime.UTC)
        names: list[x509.GeneralName] = [x509.DNSName("localhost")]
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
        public = key.public_key()
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            # A trust anchor and the server's own certificate at once: strict verifiers (Python 3.13's
            # VERIFY_X509_STRICT) want the CA flag, key usages and both key identifiers spelled out.
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
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(
            cert_pem=certificate.public_bytes(serialization.Encoding.PEM),
            key_pem=key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
        )

    def server_context(self) -> ssl.SSLContext:
        """The server side: this certificate and key (``ssl`` loads them only from files, so they pass
        through a private temporary directory that is removed at once)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory(prefix="cowork-gateway-tls-") as scratch:
            cert_file, key_file = Path(scratch) / "cert.pem", Path(scratch) / "key.pem"
            cert_file.write_bytes(self.cert_pem)
            descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(self.key_pem)
            context.load_cert_chain(cert_file, key_file)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that verifies the gateway against this certificate and nothing else."""
        return ssl.create_default_context(cadata=self.cert_pem.decode("ascii"))

    def write_certificate(self, path: Path) -> None:
        """The certificate alone (public), for a client in another process to trust."""
        path.write_bytes(self.cert_pem)
