"""Download one bundle: streamed to a ``.part`` file, resumable, bounded, hashed as it arrives.

* **Resume** (HTTP Range): an interrupted download leaves ``NAME.part``; the next attempt re-hashes
  that prefix (constant memory) and asks for the rest. A server that ignores Range (200) or answers
  with a range that does not start where we are is restarted cleanly from byte 0.
* **Bounded**: the manifest declares the size; the body may not exceed it (an endless body stops at
  ``size + 1`` bytes), and a ``Content-Length`` or ``Content-Range`` that disagrees is refused before
  a byte is written. No byte for ``stall_seconds`` is a stalled server; the whole download also has
  a deadline, so a server trickling a byte at a time cannot hold it forever.
* **Verified while streaming**: SHA-256 is updated chunk by chunk, so the file is never read twice
  and memory stays flat whatever the size.

Wrong size or wrong hash deletes what was downloaded (it can never become right by resuming);
network trouble keeps the ``.part`` for the next attempt.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from desktop.updater.errors import BundleRejected, DownloadFailed

__all__ = ["DownloadLimits", "ProgressCallback", "download_verified", "file_sha256"]

ProgressCallback = Callable[[int, int], None]
"""Called with (bytes done, bytes total) as the download advances."""

_HASH_CHUNK = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


@dataclass(frozen=True, slots=True)
class DownloadLimits:
    stall_seconds: float = 30.0
    """No byte received for this long: the server stalled."""
    deadline_seconds: float = 3600.0
    """The whole download, resumed prefix excluded: an hour is ~100 KB/s for a 300 MB bundle."""
    connect_seconds: float = 15.0


def file_sha256(path: Path, limit: int | None = None) -> tuple[str, int]:
    """SHA-256 (hex) and length of ``path``'s first ``limit`` bytes (all of it if None), in 1 MiB reads."""
    hasher = hashlib.sha256()
    done = 0
    with path.open("rb") as stream:
        while limit is None or done < limit:
            want = _HASH_CHUNK if limit is None else min(_HASH_CHUNK, limit - done)
            chunk = stream.read(want)
            if not chunk:
                break
            hasher.update(chunk)
            done += len(chunk)
    return hasher.hexdigest(), done


async def download_verified(
    client: httpx.AsyncClient,
    url: str,
    destination: Path,
    *,
    size: int,
    sha256: str,
    limits: DownloadLimits | None = None,
    on_progress: ProgressCallback | None = None,
) -> Path:
    """Download ``url`` to ``destination``, which then holds exactly ``size`` bytes hashing to ``sha256``.

    Raises :class:`BundleRejected` (``wrong_size``, ``hash_mismatch``: nothing is kept) or
    :class:`DownloadFailed` (network trouble: ``destination.part`` is kept and the next call resumes).
    """
    limits = limits or DownloadLimits()
    if await asyncio.to_thread(_finished_before, destination, size, sha256):
        if on_progress is not None:
            on_progress(size, size)
        return destination
    part = destination.with_name(destination.name + ".part")
    deadline = asyncio.timeout(limits.deadline_seconds)
    try:
        async with deadline:
            await _fetch(client, url, part, size, sha256, limits, on_progress)
    except TimeoutError:
        if deadline.expired():
            raise DownloadFailed(
                "deadline",
                f"The download of {_name(url)} did not finish within {limits.deadline_seconds:g} s; "
                "it will resume from where it stopped",
            ) from None
        raise
    os.replace(part, destination)
    return destination


def _finished_before(destination: Path, size: int, sha256: str) -> bool:
    """Whether an earlier attempt finished this download (e.g. the install after it was interrupted);
    anything else under that name is removed."""
    try:
        if file_sha256(destination) == (sha256, size):
            return True
        destination.unlink()
    except FileNotFoundError:
        pass
    return False


async def _fetch(
    client: httpx.AsyncClient,
    url: str,
    part: Path,
    size: int,
    sha256: str,
    limits: DownloadLimits,
    on_progress: ProgressCallback | None,
) -> None:
    transfer = _Transfer(client, url, part, size, limits, on_progress)
    # Two attempts: the second only after the first found a .part the server could not continue.
    for _ in range(2):
        await asyncio.to_thread(transfer.resume_point)
        if transfer.done == size or await transfer.stream():
            transfer.verify(sha256)
            return
        transfer.discard()
    raise DownloadFailed("bad_range", f"The server of {transfer.name} keeps answering with the wrong range")


class _Transfer:
    """One download's state: the .part file, how much of it is there, and the hash of that much."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        part: Path,
        size: int,
        limits: DownloadLimits,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.client = client
        self.url = url
        self.part = part
        self.size = size
        self.limits = limits
        self.on_progress = on_progress
        self.name = _name(url)
        self.done = 0
        self.hasher = hashlib.sha256()

    def resume_point(self) -> None:
        """Re-hash what an earlier attempt left (a .part longer than the file is discarded)."""
        self.hasher = hashlib.sha256()
        self.done = 0
        try:
            have = self.part.stat().st_size
        except FileNotFoundError:
            return
        if have > self.size:
            self.part.unlink()
            return
        with self.part.open("rb") as stream:
            while chunk := stream.read(_HASH_CHUNK):
                self.hasher.update(chunk)
                self.done += len(chunk)

    def discard(self) -> None:
        self.part.unlink(missing_ok=True)

    async def stream(self) -> bool:
        """Append the rest of the body to the .part; False if the server cannot continue where it is."""
        # identity: the declared size and hash are of the file's bytes, and Range counts those bytes.
        headers = {"Accept-Encoding": "identity"}
        if self.done:
            headers["Range"] = f"bytes={self.done}-"
        limits = self.limits
        timeout = httpx.Timeout(limits.stall_seconds, connect=limits.connect_seconds)
        try:
            async with self.client.stream("GET", self.url, headers=headers, timeout=timeout) as response:
                start = self._body_start(response)
                if start is None:
                    return False
                if start != self.done:  # the server ignored Range and sends the whole file again
                    self.hasher = hashlib.sha256()
                    self.done = 0
                await self._append(response)
        except httpx.ConnectTimeout as exc:
            raise DownloadFailed(
                "unreachable", f"Could not connect to the server of {self.name} in time"
            ) from exc
        except httpx.TimeoutException as exc:
            raise DownloadFailed(
                "stalled",
                f"The server sent nothing for {limits.stall_seconds:g} s while downloading {self.name}; "
                "it will resume from where it stopped",
            ) from exc
        except httpx.RemoteProtocolError as exc:
            raise DownloadFailed(
                "interrupted",
                f"The connection broke while downloading {self.name} ({exc}); "
                "it will resume from where it stopped",
            ) from exc
        except httpx.TransportError as exc:
            raise DownloadFailed("unreachable", f"Could not download {self.name}: {exc}") from exc
        return True

    def _body_start(self, response: httpx.Response) -> int | None:
        """Where the body starts in the file (0 or where the .part ends); None: start again."""
        status, offset, size = response.status_code, self.done, self.size
        if status == 206 and offset:
            match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", "").strip())
            if match is None:
                return None
            first, last, total = int(match[1]), int(match[2]), match[3]
            if total != "*" and int(total) != size:
                self._reject_size(
                    f"The server's {self.name} is {total} bytes; the signed manifest says {size}"
                )
            if first != offset or last >= size:
                return None
            self._check_length(response, size - offset)
            return offset
        if status == 200:
            self._check_length(response, size)
            return 0
        if status == 416 and offset:
            return None  # our .part is not a prefix of what the server has
        raise DownloadFailed("http_status", f"The server answered HTTP {status} for {self.name}")

    def _check_length(self, response: httpx.Response, expected: int) -> None:
        announced = response.headers.get("content-length", "").strip()
        if announced.isdigit() and int(announced) != expected:
            self._reject_size(
                f"The server announces {int(announced)} bytes of {self.name} where the signed manifest "
                f"needs {expected} (of {self.size})"
            )

    def _reject_size(self, message: str) -> None:
        self.discard()
        raise BundleRejected("wrong_size", f"{message}; the download was deleted")

    async def _append(self, response: httpx.Response) -> None:
        size, on_progress = self.size, self.on_progress
        with self.part.open("ab" if self.done else "wb") as stream:
            async for chunk in response.aiter_raw():
                self.done += len(chunk)
                if self.done > size:
                    stream.close()
                    # An endless (or oversized) body can never become right: keep none of it.
                    self._reject_size(
                        f"The server sent more than the {size} bytes the signed manifest declares "
                        f"for {self.name}"
                    )
                stream.write(chunk)
                self.hasher.update(chunk)
                if on_progress is not None:
                    on_progress(self.done, size)
            stream.flush()
            os.fsync(stream.fileno())
        if self.done < size:
            raise DownloadFailed(
                "interrupted",
                f"The server ended {self.name} after {self.done} of {size} bytes; "
                "it will resume from where it stopped",
            )

    def verify(self, sha256: str) -> None:
        actual = self.hasher.hexdigest()
        if actual != sha256:
            self.discard()
            raise BundleRejected(
                "hash_mismatch",
                f"The downloaded {self.name} does not match the signed manifest (SHA-256 "
                f"{actual[:16]}…, expected {sha256[:16]}…); it was deleted",
            )


def _name(url: str) -> str:
    return url.rsplit("/", 1)[-1] or url
