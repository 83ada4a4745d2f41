"""Errors a user can fix: each names the field path, the value and the rule it broke.

Values are shown through :func:`brief`, which never builds the full ``repr`` of a large
value (a YAML alias bomb, a 10,000-digit integer, a megabyte of text): a message stays
under :data:`VALUE_CHARS` characters whatever the user sent.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

#: most characters of a value shown in a message
VALUE_CHARS = 200
#: most broken rules an :class:`InputError` spells out (the rest are counted)
SHOWN_ERRORS = 20

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = VALUE_CHARS
_REPR.maxother = VALUE_CHARS
_REPR.maxlong = 40
for _attr in ("maxlist", "maxtuple", "maxdict", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(_REPR, _attr, 8)


def brief(value: object) -> str:
    """A bounded ``repr`` of ``value``: containers cut after a few items and levels, text and
    numbers after a few hundred characters (computed on the cut value, never on the whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"<{'-' if value < 0 else ''}integer of about {digits:,} digits>"
    text = _REPR.repr(value)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 3] + "..."


@dataclass(frozen=True)
class FieldError:
    """One broken rule: where (dotted path), what was given, and what is required.

    A value of None (a whole file, or nothing given) is left out of the message.
    """

    path: str
    value: object
    rule: str

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.path}: {self.rule}"
        return f"{self.path}: got {brief(self.value)}; {self.rule}"


@dataclass(frozen=True)
class FieldWarning:
    """An input that was accepted but deserves a look (outside its sourced range, or ignored)."""

    path: str
    value: object
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {brief(self.value)} {self.message}"


class InputError(ValueError):
    """Bad user input (scenario, catalog, study or command-line value).

    The command line prints ``str(error)`` and exits with code 2; no traceback. ``errors``
    holds every broken rule; the message spells out the first :data:`SHOWN_ERRORS`.
    """

    def __init__(self, errors: list[FieldError] | FieldError):
        self.errors = [errors] if isinstance(errors, FieldError) else list(errors)
        super().__init__("\n".join(shown_lines(self.errors)))

    @classmethod
    def one(cls, path: str, value: object, rule: str) -> InputError:
        return cls(FieldError(path, value, rule))


def shown_lines(items: list) -> list[str]:
    """Each item as a line, the first :data:`SHOWN_ERRORS` of them, then how many more there were."""
    lines = [str(item) for item in items[:SHOWN_ERRORS]]
    if len(items) > SHOWN_ERRORS:
        lines.append(f"... and {len(items) - SHOWN_ERRORS:,} more")
    return lines
