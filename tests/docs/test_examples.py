"""Every Python example of the documentation runs: README.md and docs/**/*.md.

One test per page. A page's ```python blocks run in order in one namespace (as a reader would
paste them one after another), in a fresh temporary directory, against a TDS peer of the page's
own (eng/tds-peer, started with TLS so that `Encrypt=yes;TrustServerCertificate=yes` works)
holding a small `people` table. The server the examples name is rewritten to that peer:

    db,1433 / db:1433   ->  127.0.0.1,PORT / 127.0.0.1:PORT   (connection strings / URLs)
    UID=app, user="app", //app:   ->  the peer's login, sa
    WAITFOR DELAY '00:00:SS'  ->  the peer's `fault:stall=SS` (the peer's WAITFOR does not
                                  answer a cancel: Driver 18 waits it out, pyodbc too)

SQLite3 ODBC examples (`Driver={SQLite3};Database=x.db`) need nothing: the file is made in the
temporary directory. A block that cannot run here (Azure, a feature not merged yet) is preceded
by `<!-- docs-test: skip REASON -->`; the reason is required. Text pulled in with
`--8<-- "path"` (pymdownx.snippets) is part of the page and runs too.

Outside CI a missing peer binary or ODBC driver skips; with CI=true it fails.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "eng" / "peers"))
import tdspeer  # noqa: E402

PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>```+|~~~+)\s*(?P<info>[^\n`]*)$")
MARKER = re.compile(r"^<!--\s*docs-test:\s*(?P<verb>\w+)\s*(?P<reason>.*?)\s*-->\s*$")
SNIPPET = re.compile(r'^--8<--\s+"(?P<path>[^":]+)(?::(?P<start>\d*)(?::(?P<end>\d*))?)?"\s*$')
WAITFOR = re.compile(r"WAITFOR DELAY '00:00:(\d\d)'")
PYTHON = {"python", "py", "python3"}

PEOPLE = [(1, "Ada", 1.72), (2, "Grace", 1.60), (3, "Linus", 1.80)]


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence (in the page after snippet expansion)
    code: str
    skip: str | None  # the reason, when marked skip


def expand(text: str, depth: int = 0) -> str:
    """Inline `--8<-- "path[:start[:end]]"` lines as pymdownx.snippets does (base path: REPO)."""
    out = []
    for line in text.splitlines():
        m = SNIPPET.match(line.strip())
        if m and depth < 4:
            lines = (REPO / m["path"]).read_text(encoding="utf-8").splitlines()
            start = int(m["start"]) if m["start"] else 1
            end = int(m["end"]) if m["end"] else len(lines)
            out.append(expand("\n".join(lines[start - 1 : end]), depth + 1))
        else:
            out.append(line)
    return "\n".join(out)


def blocks(page: Path) -> list[Block]:
    lines = expand(page.read_text(encoding="utf-8")).splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, indent = m["ticks"], len(m["indent"])
        lang = m["info"].strip().split(" ")[0].strip("{}.").lower()
        j = i + 1
        # The closing fence: the same character, at least as many, nothing else on the line.
        close = re.compile(rf"^ *{re.escape(ticks[0])}{{{len(ticks)},}}\s*$")
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if lang in PYTHON:
            body = "\n".join(ln[indent:] for ln in lines[i + 1 : j])
            skip = None
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            mark = MARKER.match(lines[k].strip()) if k >= 0 else None
            if mark:
                if mark["verb"] != "skip" or not mark["reason"]:
                    raise ValueError(f"{page}:{k + 1}: use <!-- docs-test: skip REASON -->")
                skip = mark["reason"]
            found.append(Block(page, i + 1, textwrap.dedent(body), skip))
        i = j + 1
    return found


def page_id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


RUNNABLE = [p for p in PAGES if blocks(p)]


def test_pages_found():
    assert REPO / "README.md" in RUNNABLE and len(RUNNABLE) > 10, RUNNABLE


def missing(reason: str) -> None:
    if tdspeer.in_ci():
        pytest.fail(f"{reason} (CI=true: a missing peer fails, never skips)")
    pytest.skip(reason)


@pytest.fixture
def peer():
    if tdspeer.peer_binary() is None:
        missing("tds-peer binary not built (cargo build --release -p tds-peer)")
    import ferrodbc

    if tdspeer.MSODBCSQL not in ferrodbc.drivers():
        missing("ODBC Driver 18 is not registered (bash eng/setup.sh)")
    with tdspeer.start_peer(encrypt="on") as p:
        with ferrodbc.connect(tdspeer.conn_str(p), autocommit=True) as c:
            c.execute("CREATE TABLE people (id int PRIMARY KEY, name nvarchar(50), height float)")
            c.cursor().executemany("INSERT INTO people VALUES (?, ?, ?)", PEOPLE)
        yield p
        ferrodbc.clear_pool()


def rewrite(code: str, port: int) -> str:
    for old, new in (
        ("db,1433", f"127.0.0.1,{port}"),
        ("db:1433", f"127.0.0.1:{port}"),
        ("UID=app", "UID=sa"),
        ('user="app"', 'user="sa"'),
        ("//app:", "//sa:"),
    ):
        code = code.replace(old, new)
    return WAITFOR.sub(r"SELECT 1 AS waited /* fault:stall=\1 */", code)


@pytest.mark.parametrize("page", RUNNABLE, ids=page_id)
def test_examples_run(page: Path, peer, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    skipped = []
    for block in blocks(page):
        where = f"{page_id(page)}:{block.line}"
        if block.skip:
            skipped.append(f"{where} ({block.skip})")
            continue
        code = rewrite(block.code, peer.port)
        try:
            exec(compile(code, where, "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - any failure of an example is the test's failure
            out = capsys.readouterr().out
            pytest.fail(
                f"example at {where} raised {type(e).__name__}: {e}\n--- code\n{block.code}\n"
                f"--- its output\n{out}",
                pytrace=False,
            )
    if skipped:
        print("skipped blocks:", *skipped, sep="\n  ", file=sys.stderr)
