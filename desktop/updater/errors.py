"""The updater's one exception family: every refusal names what was wrong in one line.

::

    UpdateError                 .code says which check failed; str() is the sentence to show
    ├── ManifestRejected        the manifest is untrusted, stale, a rollback, or offers nothing usable
    ├── DownloadFailed          the network failed (the partial download is kept, to resume)
    ├── BundleRejected          the bundle's bytes or contents are not what the manifest promised
    ├── InstallFailed           the disk refused the installation (the previous runtime stays)
    └── HealthCheckFailed       the new runtime did not start and answer in time (marked bad)

A refused update never changes which runtime is active: the checks all happen before the pointer
switch, which is the last step of an installation.
"""

from __future__ import annotations

__all__ = [
    "BundleRejected",
    "DownloadFailed",
    "HealthCheckFailed",
    "InstallFailed",
    "ManifestRejected",
    "UpdateError",
]


class UpdateError(Exception):
    """An update step that failed; ``code`` is stable (for tests and logs), ``str()`` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    @property
    def message(self) -> str:
        return str(self)


class ManifestRejected(UpdateError):
    """Codes: the ``ReleaseVerificationError`` codes of ``contracts.release`` (``malformed``,
    ``delegation_untrusted``, ``delegation_expired``, ``unknown_key``, ``revoked_key``,
    ``bad_signature``, ``manifest_expired``), plus ``unreachable``, ``http_status``, ``too_large``,
    ``rollback`` (an older manifest than the last trusted one) and ``older_runtime``."""


class DownloadFailed(UpdateError):
    """Codes: ``unreachable``, ``http_status``, ``stalled``, ``deadline``, ``interrupted``,
    ``bad_range``. The ``.part`` file is kept: the next attempt resumes it."""


class BundleRejected(UpdateError):
    """Codes: ``wrong_size``, ``hash_mismatch`` (the download is deleted), ``unsafe_member``,
    ``not_a_bundle``, ``file_list`` (the archive does not match its inner file list)."""


class InstallFailed(UpdateError):
    """Codes: ``disk``, ``busy`` (another updater holds the lock), ``bad_version``."""


class HealthCheckFailed(UpdateError):
    """Codes: ``no_start``, ``timeout``, ``bad_answer``, ``exit_status``."""
