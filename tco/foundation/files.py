"""Files from user text: safe names, bounded reads, atomic writes that keep permissions, fresh folders."""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from tco.foundation.errors import InputError


def slug(text: str, default: str = "scenario", max_chars: int = 80) -> str:
    """A file name made from user text: letters, digits, ``.``, ``_`` and ``-`` only, never
    starting with a dot, at most ``max_chars`` long (``../../etc/x`` -> ``etc-x``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip(".-")[:max_chars].strip(".-")
    return cleaned or default


def read_bounded(path: Path | str, max_bytes: int, field: str) -> bytes:
    """The bytes of a file a user named, at most ``max_bytes`` of them.

    A missing, unreadable or oversized file (a folder, ``/dev/zero``, a 10 GB log) becomes an
    :class:`InputError` naming ``field`` and the path; nothing larger than the bound is read.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputError.one(field, str(path), "file not found") from None
    except OSError as exc:
        raise InputError.one(field, str(path), f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputError.one(field, str(path), f"is larger than {max_bytes:,} bytes, the most tco reads from such a file")
    return data


def new_file_mode(existing: Path | None = None) -> int | None:
    """Permission bits for a file that replaces ``existing``: its own, or None for a new file
    (created with mode 0o666, so the umask decides, as for any file a program writes)."""
    if existing is not None and existing.exists():
        return stat.S_IMODE(existing.stat().st_mode)
    return None


def check_target(path: Path | str, force: bool, field: str) -> Path:
    """``path`` as a :class:`Path` if a file may be written there: not a folder, in a folder that
    exists, and new unless ``force``; else an :class:`InputError` naming ``field``."""
    path = Path(path)
    if path.is_dir():
        raise InputError.one(field, str(path), "is a folder; give a file name")
    if path.exists() and not force:
        raise InputError.one(field, str(path), "exists already; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise InputError.one(field, str(path), f"the folder {path.parent} does not exist")
    return path


def atomic_write(path: Path | str, write: Callable[[Path], None], *, force: bool = False, field: str = "--out") -> Path:
    """Write ``path`` through a temporary sibling file and a rename, so it is never half-written.

    ``write(temp)`` fills the temporary file. A new file gets the umask's permissions (as
    ``open`` would give it), a replaced one (``force``) keeps its own. An existing path
    without ``force``, a folder, a missing folder or a failed write becomes an
    :class:`InputError` naming ``field`` and the path; no temporary file is left behind.
    """
    path = check_target(path, force, field)
    folder = path.parent
    mode = new_file_mode(path)
    temp = folder / f".{path.name[:100]}.{secrets.token_hex(6)}.tmp"
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        write(temp)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        raise InputError.one(field, str(path), f"cannot be written: {exc.strerror or exc}") from None
    finally:
        temp.unlink(missing_ok=True)
    return path


def new_folder(parent: Path, prefix: str) -> Path:
    """A fresh, uniquely named folder in ``parent`` with the umask's permissions (``mkdtemp`` gives 0700)."""
    for _ in range(100):
        folder = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            folder.mkdir(mode=0o777)
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a temporary folder in {parent}")
