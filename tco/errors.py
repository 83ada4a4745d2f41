"""Errors a user can fix: each names the field path, the value and the rule it broke."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One broken rule: where (dotted path), what was given, and what is required."""

    path: str
    value: object
    rule: str

    def __str__(self) -> str:
        return f"{self.path}: got {self.value!r}; {self.rule}"


class InputError(ValueError):
    """Bad user input (scenario, catalog, study or command-line value).

    The command line prints ``str(error)`` and exits with code 2; no traceback.
    """

    def __init__(self, errors: list[FieldError] | FieldError):
        self.errors = [errors] if isinstance(errors, FieldError) else list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    @classmethod
    def one(cls, path: str, value: object, rule: str) -> InputError:
        return cls(FieldError(path, value, rule))
