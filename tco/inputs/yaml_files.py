"""Reading YAML into plain data, bounded, with errors that name the file and line.

Every YAML text tco reads (scenario, catalog, study and suite files, an app upload, the
hidden Scenario sheet of a workbook) goes through :func:`parse_yaml`, which refuses:

- a text longer than :data:`MAX_YAML_BYTES` (the largest bundled file is ~20 kB);
- nesting deeper than :data:`MAX_YAML_DEPTH` (Python's recursion would give out first);
- more than :data:`MAX_YAML_NODES` nodes counted with every alias expanded, so a
  "billion laughs" alias bomb of a few hundred bytes is refused before anything walks
  it (anchors and ``<<`` merge keys of ordinary size stay usable);
- a recursive alias (a node that contains itself);
- an integer of more than :data:`MAX_INT_DIGITS` digits (Python refuses to convert it), named by its
  key path like any value out of its field's domain;
- a key given twice in one mapping (the last would win silently).

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

#: most digits of an integer read (Python's own bound on converting decimal text, ``sys.int_info.default_max_str_digits``)
MAX_INT_DIGITS = 4300
_LONG_DIGITS = re.compile(rf"[0-9]{{{MAX_INT_DIGITS + 1}}}")

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


def _key_path(path: str, key) -> str:
    text = key.value if isinstance(key, yaml.ScalarNode) else "<key>"
    return f"{path}.{text}" if path else str(text)


def _nodes_by_path(root):
    """Each node of a composed YAML document once (an alias's target is not visited twice), with its key path
    (``set.workload.prompt_tokens``, ``options[0].name``; a mapping's key carries the path of its value)."""
    seen, stack = set(), [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node, path
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += [(key, _key_path(path, key)), (value, _key_path(path, key))]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]


def long_integer_errors(root) -> list[FieldError]:
    """Each integer of more than :data:`MAX_INT_DIGITS` digits in a composed YAML document, named by its key path
    (``set.workload.prompt_tokens``, ``options[0].name``).

    Parameters
    ----------
    root : yaml.Node
        The composed document.

    Returns
    -------
    list of FieldError
        One per such integer (each distinct node once).
    """
    return [FieldError(path or "<document>", None, f"is an integer of {len(node.value.lstrip('+-')):,} digits: too "
                       "large for any field (a number tco reads is at most ~1.8e308)")
            for node, path in _nodes_by_path(root)
            if isinstance(node, yaml.ScalarNode) and node.tag == _INT and len(node.value.lstrip("+-")) > MAX_INT_DIGITS]


def duplicate_key_errors(root) -> list[FieldError]:
    """Each key given twice in one mapping of a composed YAML document (``name: default`` then ``name: other``:
    the last would win without a word), named by its key path with both lines.

    Parameters
    ----------
    root : yaml.Node
        The composed document.

    Returns
    -------
    list of FieldError
        One per repeated key (``<<`` merge keys are YAML's own and may repeat).
    """
    errors = []
    for node, path in _nodes_by_path(root):
        if not isinstance(node, yaml.MappingNode):
            continue
        first: dict[tuple, int] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                ident = (key.tag, key.value)
                if ident in first:
                    errors.append(FieldError(_key_path(path, key), None, f"is given twice (lines {first[ident]} and "
                                             f"{key.start_mark.line + 1}); give each key once"))
                else:
                    first[ident] = key.start_mark.line + 1
    return errors


def parse_yaml(text: str | bytes, where: str) -> object:
    """Plain data from YAML ``text``; ``where`` names it in errors (a path, ``uploaded file``).

    Raises :class:`InputError` naming ``where`` (with line and column) for a text that is
    too long, not UTF-8, not YAML, or beyond the bounds above; a repeated key or an integer
    too long to convert is named by its key path.
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
        errors = duplicate_key_errors(node) + (long_integer_errors(node) if _LONG_DIGITS.search(text) else [])
        if errors:
            raise InputError(errors)
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
        elif err["type"] == "missing":  # the input is the mapping that lacks the field: never echo it
            errors.append(FieldError(path, None, "is required (missing)"))
        elif err["type"] == "value_error" and isinstance(err.get("input"), (dict, list)):
            # a rule over several fields of a section: the rule names the values, the section is not echoed
            errors.append(FieldError(path, None, err["msg"].removeprefix("Value error, ")))
        else:
            errors.append(FieldError(path, err.get("input"), err["msg"].removeprefix("Value error, ")))
    return InputError(errors)
