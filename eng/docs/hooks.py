"""MkDocs hooks for the documentation site (mkdocs.yml `hooks:`).

Two jobs, both about pages other branches add while this one is merged:

- A nav line for a page that is being written elsewhere (PENDING) is left out until its file
  exists, so the nav can name it before it lands. Any other missing page still fails the build.
- A Markdown page in docs/ that the nav does not list is added under "More", so a page merged
  without its nav line is still reachable (move it to its place with one nav line).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.ferrodbc")

# Pages other branches are writing (see mkdocs.yml, "lands with").
PENDING = {"install.md", "adbc.md", "vectors.md", "mssql-python.md", "chaos.md"}


def _prune(items: list[Any], docs: Path, listed: set[str]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                kept = _prune(value, docs, listed)
                if kept:
                    out.append({title: kept})
                continue
            target = value
        else:
            title, target = None, item
        if isinstance(target, str) and not target.startswith(("http://", "https://")):
            if target in PENDING and not (docs / target).is_file():
                log.info("nav: %s is not there yet; left out until it lands", target)
                continue
            listed.add(target)
        out.append(item)
    return out


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    listed: set[str] = set()
    nav = _prune(config["nav"] or [], docs, listed)
    orphans = sorted(
        p.relative_to(docs).as_posix()
        for p in docs.rglob("*.md")
        if p.relative_to(docs).as_posix() not in listed
    )
    if orphans:
        log.info("nav: %s not listed in mkdocs.yml; shown under More", ", ".join(orphans))
        nav.append({"More": orphans})
    config["nav"] = nav
    return config
