"""The table every benchmark prints, and what the IPC benchmarks measure against which targets.

Each benchmark script has a ``TARGETS`` table: figure key → (label, unit, comparison, target), where
comparison is ``"<="``, ``">="`` or ``None`` for a figure shown without a target."""

from __future__ import annotations

Targets = dict[str, tuple[str, str, str | None, float | None]]

TARGETS: Targets = {
    "asyncio_p50_us": ("asyncio client: no-op round trip p50", "µs", "<=", 100.0),
    "asyncio_p99_us": ("asyncio client: no-op round trip p99", "µs", "<=", 1000.0),
    "asyncio_notifications_per_s": ("asyncio client: notifications/s", "/s", ">=", 50_000.0),
    "qt_p50_us": ("Qt client: no-op round trip p50", "µs", None, None),
    "qt_p99_us": ("Qt client: no-op round trip p99", "µs", None, None),
    "qt_notifications_per_s": ("Qt client: notifications/s", "/s", ">=", 20_000.0),
    "qt_max_heartbeat_stall_ms": ("Qt client: longest 10 ms heartbeat gap", "ms", "<=", 50.0),
}


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def verdict(value: float, comparison: str | None, target: float | None) -> str:
    if comparison is None or target is None:
        return ""
    ok = value <= target if comparison == "<=" else value >= target
    shown = f"{target:,.0f}" if target == int(target) else f"{target:,.1f}"  # 4.4 is not "4"
    return f"{comparison} {shown}  {'ok' if ok else 'MISSED'}"


def report(figures: dict[str, float], targets: Targets = TARGETS) -> str:
    """A table of the figures measured, in the order of ``targets``, each against its target."""
    width = max(len(label) for label, _, _, _ in targets.values()) + 2
    lines = [f"{'measure':<{width}} {'value':>14}  target", "-" * (width + 36)]
    for key, (label, unit, comparison, target) in targets.items():
        if key in figures:
            value = figures[key]
            shown = f"{value:>11,.2f}" if abs(value) < 10 else f"{value:>11,.1f}"
            lines.append(f"{label:<{width}} {shown} {unit:<4} {verdict(value, comparison, target)}")
    return "\n".join(lines)
