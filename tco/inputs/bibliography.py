"""The bibliography (``docs/sources.md``) as data: what a ``source:`` string cites, and where to read it.

A source string names bibliography keys in square brackets (``[lockwood-h100]; [nvidia-hgx-dgx]``)
or says what it is (``estimate (...)``, ``derived (...)``, ``scenario assumption: ...``).
:func:`cited` returns the entries a string cites, each with its text and, where the entry
gives a public address, a link. The app shows them beside every parameter; a checkout
without ``docs/`` (a bare wheel) has an empty bibliography and shows the source string alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BIBLIOGRAPHY = Path(__file__).resolve().parents[2] / "docs" / "sources.md"
#: a key cited in a source string, as tests/test_sources.py reads them
KEY = re.compile(r"\[([a-z0-9][a-z0-9.\-]*[a-z0-9])\]")
ENTRY = re.compile(r"^- \*\*\[([^\]]+)\]\*\*\s*(.*)$", re.MULTILINE)
#: a public address as the entries write them (``glennklockwood.com/garden/processors/h100``)
ADDRESS = re.compile(r"\b((?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|gov|edu|dev|co|uk|de|fr|jp|cz|es|eu|info|me|blog|cloud|us)"
                     r"(?:/[^\s,;)'\"]*)?)", re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    """One bibliography entry: its key, its text, and a link to its public address (None when it gives none)."""

    key: str
    text: str
    url: str | None


@lru_cache(maxsize=1)
def bibliography(path: Path = BIBLIOGRAPHY) -> dict[str, Entry]:
    """Every entry of ``docs/sources.md`` by key (empty when the file is absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    out = {}
    for key, body in ENTRY.findall(text):
        address = ADDRESS.search(body)
        url = None if address is None else "https://" + address.group(1).rstrip(".")
        out[key] = Entry(key, body.strip(), url)
    return out


def cited(source: str) -> list[Entry]:
    """The bibliography entries ``source`` cites, in order (keys absent from the bibliography are left out)."""
    entries = bibliography()
    return [entries[k] for k in dict.fromkeys(KEY.findall(source or "")) if k in entries]
