"""Every relative link in the README and docs/ reaches a file, and every #anchor a heading of it, so a reader
following the manual never lands on a missing page or section (docs are rewritten often; links rot silently).
Anchors follow GitHub's rule: the heading lower-cased, punctuation but '-' and '_' dropped, spaces to '-',
'-1', '-2' ... for repeats."""

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
CODE_BLOCK = re.compile(r"```.*?```", flags=re.S)
HEADING = re.compile(r"^#+\s+(.*?)\s*$", flags=re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(page: Path) -> str:
    return CODE_BLOCK.sub("", page.read_text())


@cache
def anchors(page: Path) -> frozenset[str]:
    """Each page's headings are read once, however many links point into it."""
    found: set[str] = set()
    repeats: dict[str, int] = {}
    for heading in HEADING.findall(prose(page)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = repeats.get(slug, 0)
        repeats[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(found)


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target} (no such heading)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_links_resolve(page):
    assert broken_links(page) == []


def test_the_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A heading\n\n[ok](#a-heading) [gone](missing.md) [wrong](#no-heading)\n")
    assert broken_links(page) == ["missing.md (no such file)", "#no-heading (no such heading)"]
