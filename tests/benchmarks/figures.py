"""What the IPC benchmarks measure, their targets, and the table they print."""

from __future__ import annotations

TARGETS: dict[str, tuple[str, str, str | None, float | None]] = {
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


def verdict(key: str, value: float) -> str:
    _, _, op, target = TARGETS[key]
    if op is None or target is None:
        return ""
    ok = value <= target if op == "<=" else value >= target
    return f"{op} {target:,.0f}  {'ok' if ok else 'MISSED'}"


def report(figures: dict[str, float]) -> str:
    """A table of the figures measured, in the order above, each against its target."""
    lines = [f"{'measure':<42} {'value':>14}  target", "-" * 76]
    for key, (label, unit, _, _) in TARGETS.items():
        if key in figures:
            lines.append(f"{label:<42} {figures[key]:>11,.1f} {unit:<3} {verdict(key, figures[key])}")
    return "\n".join(lines)
