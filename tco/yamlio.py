"""Reading YAML files into plain data, with errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import yaml

from .errors import InputError


def read_yaml(path: Path | str) -> object:
    """Parse a YAML file; a missing file or a syntax error becomes an :class:`InputError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError.one(str(path), None, "file not found") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError.one(str(path), None, f"cannot be read: {exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError.one(where, None, f"is not valid YAML: {problem}") from None


def bundled_or_path(name_or_path: str | Path, folder: Path, field: str, kind: str) -> Path:
    """A YAML file given by path, or bundled in ``folder`` by its name (``default``, ``tornado-default``).

    Raises :class:`InputError` naming ``field`` and listing the bundled names.
    """
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    bundled = folder / f"{name_or_path}.yaml"
    if bundled.exists():
        return bundled
    names = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
    raise InputError.one(field, str(name_or_path), f"is neither a file nor a bundled {kind} ({names})")


def pydantic_errors(exc, prefix: str = "") -> InputError:
    """Turn a pydantic ``ValidationError`` into an :class:`InputError` with dotted paths."""
    from .errors import FieldError

    errors = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
        path = ".".join(([prefix] if prefix else []) + loc) or prefix or "<file>"
        errors.append(FieldError(path, err.get("input"), err["msg"]))
    return InputError(errors)
