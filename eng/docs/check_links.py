"""Checks every link of the built documentation site: `python eng/docs/check_links.py SITE_DIR`.

MkDocs (--strict) already refuses a Markdown link to a missing page or heading. This reads the
HTML it wrote, which also holds the links the theme, the API reference and the included READMEs
make, and checks:

- internal links (relative paths, `#anchors`): the file exists in the site and, for an anchor,
  an element of the target page has that id;
- external links (http, https, mailto): well formed only, since CI has no internet; they are
  listed, so a reader of the log sees every address the site points at.

The README's relative links (the repository's front page) must name files of the repository;
a link to a page another branch is still writing (hooks.PENDING) is allowed until it lands.

Exit 1 with one line per broken link.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Pages the theme writes that no reader navigates to by a content link.
SKIP_PAGES = {"404.html"}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"] or "")
        for key in ("href", "src"):
            value = a.get(key)
            if value and not (tag == "link" and key == "href" and a.get("rel") == "canonical"):
                self.links.append(value)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def external_ok(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "mailto":
        return "@" in parts.path
    return bool(parts.netloc) and "." in parts.netloc and " " not in url


REPO = Path(__file__).resolve().parents[2]
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_links() -> list[str]:
    sys.path.insert(0, str(Path(__file__).parent))
    from hooks import PENDING

    broken = []
    for link in MD_LINK.findall((REPO / "README.md").read_text(encoding="utf-8")):
        parts = urlsplit(link)
        if parts.scheme or not parts.path:
            continue
        target = REPO / unquote(parts.path)
        if not target.exists() and not (target.parent.name == "docs" and target.name in PENDING):
            broken.append(f"README.md: {link}: no such file in the repository")
    return broken


def main(site: Path) -> int:
    pages = {p: parse(p) for p in site.rglob("*.html") if p.name not in SKIP_PAGES}
    broken: list[str] = readme_links()
    external: set[str] = set()
    for path, page in sorted(pages.items()):
        where = path.relative_to(site).as_posix()
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "mailto"):
                if not external_ok(link):
                    broken.append(f"{where}: malformed external link {link}")
                external.add(link)
                continue
            if parts.scheme in ("data", "javascript") or link.startswith("//"):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{where}: {link}: no such file in the site")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = (pages.get(target) or parse(target)).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: {link}: no anchor #{parts.fragment}")
    print(f"check_links: {len(pages)} pages, {sum(len(p.links) for p in pages.values())} links, "
          f"{len(external)} external (form checked only, no internet):")
    for url in sorted(external):
        print(f"  {url}")
    for line in broken:
        print(f"BROKEN {line}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve()))
