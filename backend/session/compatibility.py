"""The compatibility check of the client's versions (seed 001 §10 version skew, §11; 000 §3.2 step 4)."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from backend.common.settings import VersionRange
from contracts.enums import CompatibilityStatus
from contracts.methods import ClientInfo
from contracts.rest.sessions import ComponentCompatibility

__all__ = ["CompatibilityChecker"]

_RANK = {
    CompatibilityStatus.COMPATIBLE: 0,
    CompatibilityStatus.DEPRECATED: 1,
    CompatibilityStatus.INCOMPATIBLE: 2,
}


class _Range:
    def __init__(self, spec: VersionRange) -> None:
        try:
            self.supported = SpecifierSet(spec.supported)
            self.deprecated = None if spec.deprecated is None else SpecifierSet(spec.deprecated)
        except InvalidSpecifier as exc:
            raise ValueError(f"not a PEP 440 version specifier: {exc}") from None

    def verdict(self, version: str) -> ComponentCompatibility:
        try:
            parsed: Version | None = Version(version)
        except InvalidVersion:
            parsed = None
        if parsed is None or not self.supported.contains(parsed, prereleases=True):
            status = CompatibilityStatus.INCOMPATIBLE
        elif self.deprecated is not None and self.deprecated.contains(parsed, prereleases=True):
            status = CompatibilityStatus.DEPRECATED
        else:
            status = CompatibilityStatus.COMPATIBLE
        return ComponentCompatibility(
            version=version,
            supported=str(self.supported),
            deprecated=None if self.deprecated is None else str(self.deprecated),
            status=status,
        )


class CompatibilityChecker:
    """Each component's version against its configured range; the worst verdict is the overall one.

    A version that is not PEP 440 at all is ``incompatible``: nothing can be promised about it.
    """

    def __init__(self, host: VersionRange, desktop: VersionRange) -> None:
        self._host = _Range(host)
        self._desktop = _Range(desktop)
        # Few distinct versions are in use at once; parsing and matching them is not free.
        self._known: dict[tuple[str, str], tuple[CompatibilityStatus, dict[str, ComponentCompatibility]]] = {}

    def check(self, client: ClientInfo) -> tuple[CompatibilityStatus, dict[str, ComponentCompatibility]]:
        key = (client.local_agent_host_version, client.desktop_app_version)
        known = self._known.get(key)
        if known is None:
            verdicts = {
                "localAgentHostVersion": self._host.verdict(client.local_agent_host_version),
                "desktopAppVersion": self._desktop.verdict(client.desktop_app_version),
            }
            known = (max((v.status for v in verdicts.values()), key=_RANK.__getitem__), verdicts)
            if len(self._known) >= 1024:
                self._known.clear()
            self._known[key] = known
        return known[0], dict(known[1])
