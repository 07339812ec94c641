"""The documentation's generated listings are current (regenerated and compared)."""

import importlib.util
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_examples_page_is_current():
    gen = _load("gen_examples")
    assert (DOCS / "examples.md").read_text() == gen.render(), (
        "docs/examples.md is stale: run `python docs/gen_examples.py`")


def test_examples_page_shows_the_seed_jacobian_columns():
    text = (DOCS / "examples.md").read_text()
    assert "[1.0, 3.0, -0.416147]" in text and "[1.0, 2.0, -0.0]" in text
