"""Markdown helpers shared by the drivers and compare reports."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .rounds import Summary

OUT = Path(__file__).resolve().parent / "out"


def table(headers: list[str], rows: list[list[str]]) -> str:
    align = ["---"] + ["---:"] * (len(headers) - 1)
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def ms(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f} ms"
    if x >= 10:
        return f"{x:.1f} ms"
    return f"{x:.2f} ms"


def cell(s: Summary) -> str:
    """Median (and spread) or the reason there is no time. Never 0 ms for a broken task."""
    if s.status == "ok":
        return f"{ms(s.median)} ±{s.spread * 50:.0f}%"
    if s.status == "n/a":
        return f"n/a ({s.reason})"
    return f"**FAILED** ({short(s.reason, 40)})"  # the full reason is listed under the table


def short(text: str, n: int = 90) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= n else text[: n - 1] + "…"


def counters(c: dict | None) -> str:
    if not c:
        return ""
    return ", ".join(f"{k}={v}" for k, v in c.items() if v)


def write(stem: str, markdown: str, data: dict) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    ts = time.strftime("%Y%m%d-%H%M%S")
    md, js = OUT / f"{stem}-{ts}.md", OUT / f"{stem}-{ts}.json"
    md.write_text(markdown)
    js.write_text(json.dumps(data, indent=1, default=str))
    return md, js
