"""The seeds' code in tests/data/seed is the documentation's, to the letter."""

import pytest

from conftest import ROOT

SEEDS = ROOT.parent / "shared" / "seeds"
COPIES = ROOT / "tests" / "data" / "seed"


def seed_text(prefix):
    found = sorted(SEEDS.glob(f"{prefix}_*.txt"))
    if not found:
        pytest.skip(f"the seeds are not beside the repository ({SEEDS})")
    return found[0].read_text()


def test_notify_py_is_the_seeds():
    text = seed_text("000")
    start = text.index('"""Receives Tigris object notifications')
    end = text.index("Start it with a random token")
    assert (COPIES / "notify.py").read_text() == text[start:end].rstrip() + "\n"


def test_python_example_is_the_seeds():
    text = seed_text("003")
    assert (COPIES / "example.py").read_text() == text[text.index("import datetime as dt") :].rstrip() + "\n"
