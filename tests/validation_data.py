"""The committed datasets of validation/data, read as the tests need them."""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def data_rows(name: str) -> list[dict]:
    """Rows of the CSV ``validation/data/<name>`` as dicts of strings (its ``#`` comment lines skipped)."""
    with (DATA / name).open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))
