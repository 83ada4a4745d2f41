"""Reading YAML into plain data, bounded, with errors that name the file and line.

Every YAML text tco reads (scenario, catalog, study and suite files, an app upload, the
hidden Scenario sheet of a workbook) goes through :func:`parse_yaml`, which refuses:

- a text longer than :data:`MAX_YAML_BYTES` (the largest bundled file is ~20 kB);
- nesting deeper than :data:`MAX_YAML_DEPTH` (Python's recursion would give out first);
- more than :data:`MAX_YAML_NODES` nodes counted with every alias expanded, so a
  "billion laughs" alias bomb of a few hundred bytes is refused before anything walks
  it (anchors and ``<<`` merge keys of ordinary size stay usable);
- a recursive alias (a node that contains itself).

Only plain YAML types are built (``yaml.SafeLoader``): no Python object tags; plain scalars
follow YAML 1.2's core schema (see ``_Loader``).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tco.foundation.errors import FieldError, InputError

#: longest YAML text read [B]
MAX_YAML_BYTES = 256_000
#: deepest nesting of mappings and sequences
MAX_YAML_DEPTH = 40
#: most nodes, every alias expanded (the default scenario has ~130, the validation suite ~1,100)
MAX_YAML_NODES = 100_000

#: libyaml's composer when PyYAML was built with it (10x faster), else the pure-Python one
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOOL, _INT, _FLOAT = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


class _Loader(_BASE):
    """Plain types only, with YAML 1.2's core schema for plain scalars: ``true``/``false`` are the
    only booleans (not ``yes``, ``no``, ``on``, ``off``), and numbers are decimal without
    underscores or sexagesimal (YAML 1.1 reads ``2_56`` as 256 and ``1:30`` as 90; here they
    stay text, which the number reader then refuses with a reason); ``1e9`` is a number."""

    yaml_implicit_resolvers = {first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL, _INT, _FLOAT)]
                               for first, resolvers in _BASE.yaml_implicit_resolvers.items()}


_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(_INT, re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT, re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))
_Loader.add_constructor(_INT, lambda loader, node: int(loader.construct_scalar(node), 10))  # 012 is twelve, not octal
_LOADER = _Loader


class _Refused(yaml.YAMLError):
    def __init__(self, problem: str, mark=None):
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_node_graph(root) -> tuple[int, int]:
    """``(nodes, depth)`` of a composed YAML document, every alias expanded (what walking the data visits).

    Each distinct node is measured once (aliases share nodes), so this runs in time linear in
    the text. Raises past :data:`MAX_YAML_NODES` or :data:`MAX_YAML_DEPTH`, and on a recursive alias.
    """
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_nodes.discard(key)
            measured = [sizes[id(child)] for child in _children(node)]
            size = 1 + sum(n for n, _ in measured)
            depth = 1 + max((d for _, d in measured), default=0)
            if size > MAX_YAML_NODES:
                raise _Refused(f"more than {MAX_YAML_NODES:,} values once every alias is expanded "
                               "(an alias bomb, or far more data than a tco file holds)", node.start_mark)
            if depth > MAX_YAML_DEPTH:
                raise _Refused(f"nesting deeper than {MAX_YAML_DEPTH} levels", node.start_mark)
            sizes[key] = (size, depth)
        elif key not in sizes:
            if key in open_nodes:
                raise _Refused("an alias refers to a node that contains it (recursive alias)", node.start_mark)
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    return sizes[id(root)]


def parse_yaml(text: str | bytes, where: str) -> object:
    """Plain data from YAML ``text``; ``where`` names it in errors (a path, ``uploaded file``).

    Raises :class:`InputError` naming ``where`` (with line and column) for a text that is
    too long, not UTF-8, not YAML, or beyond the bounds above.
    """
    if len(text) > MAX_YAML_BYTES:
        raise InputError.one(where, f"{len(text):,} bytes",
                             f"is too long: a YAML text tco reads is at most {MAX_YAML_BYTES:,} bytes")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError.one(where, None, f"is not UTF-8 text (byte {exc.start}): is it a binary file?") from None
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_node_graph(node)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark else where
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError.one(at, None, f"is not valid YAML: {problem}") from None
    except RecursionError:  # the pure-Python composer, on nesting far beyond MAX_YAML_DEPTH
        raise InputError.one(where, None, f"is not valid YAML: nesting deeper than {MAX_YAML_DEPTH} levels") from None
    finally:
        loader.dispose()


def read_yaml(path: Path | str) -> object:
    """Parse a YAML file; a missing, unreadable, oversized or malformed file becomes an :class:`InputError`."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError.one(str(path), None, "file not found") from None
    except OSError as exc:
        raise InputError.one(str(path), None, f"cannot be read: {exc.strerror or exc}") from None
    return parse_yaml(data, str(path))


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
    errors = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
        path = ".".join(([prefix] if prefix else []) + loc) or prefix or "<file>"
        raised = (err.get("ctx") or {}).get("error")
        if isinstance(raised, InputError):  # a validator of ours: its paths are relative to the field
            errors.extend(FieldError(f"{path}.{e.path}", e.value, e.rule) for e in raised.errors)
        else:
            errors.append(FieldError(path, err.get("input"), err["msg"]))
    return InputError(errors)
