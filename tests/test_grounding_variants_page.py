"""docs/grounding-variants.md is generated from benchmarks/results/grounding/*.json: regenerating it gives the same
page, so a hand edit (or a stored variant changed without regenerating) fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_variant_page_is_what_its_command_generates():
    spec = importlib.util.spec_from_file_location("grounding_variants", REPO / "benchmarks" / "grounding_variants.py")
    variants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(variants)
    stored = sorted(str(path) for path in (REPO / "benchmarks" / "results" / "grounding").glob("*.json"))
    table = variants.markdown_table(variants.read_variants(stored))
    assert (REPO / "docs" / "grounding-variants.md").read_text() == table + "\n"
