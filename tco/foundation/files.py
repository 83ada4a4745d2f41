"""Files from user text: safe names, bounded reads, atomic writes that keep permissions, fresh folders.

Temporary siblings (``.<name>.<pid>.<hex>.tmp``, folders ``.<name>.<pid>.<hex>``) carry the id of the process
that writes them, so a later run removes those a killed process left (:func:`remove_stale`) and never one a
live process is writing.
"""

from __future__ import annotations

import errno
import gc
import os
import re
import secrets
import shutil
import stat
import sys
import time
import traceback
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


#: a temporary sibling without a process id (tco before it named them so) is a leftover once this old [s]
STALE_UNOWNED_S = 3600.0


def process_alive(pid: int) -> bool:
    """Whether a process runs on this machine (one of another user's counts as alive).

    Parameters
    ----------
    pid : int
        Its id.

    Returns
    -------
    bool
        False once it has exited.
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def remove_stale(folder: Path, prefix: str, suffix: str = "") -> list[Path]:
    """Remove what a killed run left in ``folder``: entries named ``<prefix><pid>.<12 hex><suffix>`` whose process
    no longer runs, and ``<prefix><12 hex><suffix>`` (no process id: written by tco before it named them so) older
    than :data:`STALE_UNOWNED_S`. Never an entry of a live process or of another user; errors are ignored.

    Parameters
    ----------
    folder : pathlib.Path
        Where the temporaries live (the target's folder).
    prefix : str
        Their names' start (``.book.xlsx.``).
    suffix : str
        Their names' end (``.tmp`` for files, empty for folders).

    Returns
    -------
    list of pathlib.Path
        What was removed.
    """
    pattern = re.compile(rf"^{re.escape(prefix)}(?:(\d+)\.)?[0-9a-f]{{12}}{re.escape(suffix)}$")
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = pattern.match(entry.name)
        if not match:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != os.getuid() or stat.S_ISLNK(info.st_mode):
                continue
            pid = match.group(1)
            stale = not process_alive(int(pid)) if pid else now - info.st_mtime > STALE_UNOWNED_S
            if not stale:
                continue
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def temporary_name(name: str, suffix: str = "") -> str:
    """The name of a temporary sibling of ``name`` owned by this process: ``.<name>.<pid>.<12 hex><suffix>``.

    Parameters
    ----------
    name : str
        The target's file or folder name (cut to 100 characters).
    suffix : str
        ``.tmp`` for a file.

    Returns
    -------
    str
        A fresh name (:func:`remove_stale` recognizes it).
    """
    return f".{name[:100]}.{os.getpid()}.{secrets.token_hex(6)}{suffix}"


def write_failure(exc: OSError) -> str:
    """The rule of an :class:`InputError` for a failed write: the disk is full, or the system's reason.

    Parameters
    ----------
    exc : OSError
        What the write raised.

    Returns
    -------
    str
        ``cannot be written: ...``.
    """
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"cannot be written: the disk is full ({exc.strerror or exc}); nothing was written and no partial file "
                "is left: free some space and run again")
    return f"cannot be written: {exc.strerror or exc}"


def release_quietly(exc: BaseException) -> None:
    """Drop what a failed write still holds (a half-written zip archive, an open file) while the failure is being
    reported, so its finalizer's second failure (``Exception ignored in: ZipFile.__del__ ... No space left on
    device``) is not printed at exit.

    Parameters
    ----------
    exc : BaseException
        The failure, whose traceback frames hold the objects.
    """
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        seen, chained = set(), exc
        while chained is not None and id(chained) not in seen:  # a failure while closing chains the first one
            seen.add(id(chained))
            traceback.clear_frames(chained.__traceback__)
            chained.__traceback__ = None
            chained = chained.__context__ or chained.__cause__
        gc.collect()
    finally:
        sys.unraisablehook = hook


def atomic_write(path: Path | str, write: Callable[[Path], None], *, force: bool = False, field: str = "--out") -> Path:
    """Write ``path`` through a temporary sibling file and a rename, so it is never half-written.

    ``write(temp)`` fills the temporary file. A new file gets the umask's permissions (as
    ``open`` would give it), a replaced one (``force``) keeps its own. Without ``force`` the
    file is created exclusively (a hard link of the finished temporary file): of two writers
    of one new file, the second is refused rather than silently replacing the first. An
    existing path without ``force``, a folder, a missing folder or a failed write (a full
    disk said so) becomes an :class:`InputError` naming ``field`` and the path; no temporary
    file is left behind, and those a killed run left beside ``path`` are removed first.
    """
    path = check_target(path, force, field)
    folder = path.parent
    remove_stale(folder, f".{path.name[:100]}.", ".tmp")
    mode = new_file_mode(path)
    temp = folder / temporary_name(path.name, ".tmp")
    failure = None
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        write(temp)
        if mode is not None:
            os.chmod(temp, mode)
        if force:
            os.replace(temp, path)
        else:
            _create_exclusively(temp, path)
    except FileExistsError:
        failure = "exists already (written by another process meanwhile); pass --force to overwrite it"
    except OSError as exc:
        failure = write_failure(exc)
        release_quietly(exc)
    finally:
        temp.unlink(missing_ok=True)
    if failure:
        raise InputError.one(field, str(path), failure)
    return path


def _create_exclusively(temp: Path, path: Path) -> None:
    """``temp`` becomes ``path`` unless ``path`` exists (``FileExistsError``): a hard link, which fails on an existing
    name (where the file system has no hard links: ``path`` is reserved with ``O_EXCL``, then replaced)."""
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV, errno.ENOSYS):
            raise
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.replace(temp, path)


def new_folder(parent: Path, prefix: str, mode: int = 0o777) -> Path:
    """A fresh, uniquely named folder ``<prefix><pid>.<12 hex>`` in ``parent`` with ``mode`` less the umask (the
    umask's permissions by default; ``mkdtemp`` gives 0700); those a killed run left with the same prefix are removed
    first (:func:`remove_stale`)."""
    remove_stale(parent, prefix)
    for _ in range(100):
        folder = parent / f"{prefix}{os.getpid()}.{secrets.token_hex(6)}"
        try:
            folder.mkdir(mode=mode)
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a temporary folder in {parent}")
