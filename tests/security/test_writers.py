"""Two writers, one file, and what a killed run leaves (issue 50, items 4 and 8).

A new file is created exclusively (the second of two writers is refused, never silently replacing the first);
``tco fleet --html`` needs ``--force`` like ``tco export``; the temporary files and folders a ``kill -9`` leaves are
removed by the next run, the app's cache folder at exit; a full disk is one line, never "Exception ignored".
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from harness import contained, refused, tco

from tco.foundation.errors import InputError
from tco.foundation.files import atomic_write

TCO = [sys.executable, "-m", "tco"]
#: each test runs tco in child processes (1.5-3.5 s each): make test only
pytestmark = pytest.mark.slow


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --- item 4: two writers, one file ------------------------------------------------------------------------


def test_a_file_written_meanwhile_by_another_process_is_not_replaced(tmp_path):
    """Both writers passed the "exists already" check before either finished; the second replaced the first."""
    target = tmp_path / "r.xlsx"

    def write(temp: Path) -> None:
        target.write_bytes(b"the other writer's")  # the other process finishes first
        temp.write_bytes(b"mine")

    with pytest.raises(InputError, match="exists already"):
        atomic_write(target, write, field="--xlsx")
    assert target.read_bytes() == b"the other writer's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xlsx"]
    atomic_write(target, lambda temp: temp.write_bytes(b"forced"), force=True)  # --force replaces it
    assert target.read_bytes() == b"forced"


def test_two_exports_to_one_new_file_one_wins_one_is_refused(tmp_path):
    """``tco export --xlsx r.xlsx & tco export --xlsx r.xlsx``: both printed "wrote" in 8 of 8 runs."""
    runs = [subprocess.Popen([*TCO, "export", "--xlsx", str(tmp_path / "r.xlsx")], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    done = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    assert sorted(code for code, _, _ in done) == [0, 2], done
    refused_err = next(err for code, _, err in done if code == 2)
    assert "exists already" in refused_err and "Traceback" not in refused_err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xlsx"]


def test_fleet_html_does_not_overwrite_without_force(tmp_path):
    """``force=True`` was hard-coded in cli/fleet.py: an existing file was replaced whatever the user said."""
    target = tmp_path / "k.html"
    target.write_text("mine")
    refused(tco("fleet", "kv-wall", "--html", str(target)), "--html", "exists already", "--force")
    assert target.read_text() == "mine"
    assert contained(tco("fleet", "kv-wall", "--html", str(target), "--force")).code == 0
    assert target.stat().st_size > 1_000_000
    refused(tco("fleet", "kv-wall", "--force"), "--force", "--html")


# --- item 8: leftovers --------------------------------------------------------------------------------------


def test_a_killed_export_leaves_nothing_the_next_run_keeps(tmp_path):
    """kill -9 during the write left ``.r.xlsx.<hex>.tmp`` that nothing removed (never a partial target: good)."""
    export = subprocess.Popen([*TCO, "export", "--xlsx", str(tmp_path / "r.xlsx")], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".r.xlsx.*.tmp")) and export.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    export.send_signal(signal.SIGKILL)
    export.wait()
    if not list(tmp_path.glob(".r.xlsx.*.tmp")):  # the write was too quick to catch: leave one as a kill would
        (tmp_path / f".r.xlsx.{dead_pid()}.0123456789ab.tmp").write_bytes(b"PK half")
    assert not (tmp_path / "r.xlsx").exists() or (tmp_path / "r.xlsx").stat().st_size > 10_000
    (tmp_path / "r.xlsx").unlink(missing_ok=True)
    old = tmp_path / ".r.xlsx.0123456789ab.tmp"  # left by a tco that named no process: removed once an hour old
    old.write_bytes(b"PK half")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert contained(tco("export", "--xlsx", str(tmp_path / "r.xlsx"))).code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xlsx"]


def test_a_live_writers_temporary_file_is_never_removed(tmp_path):
    mine = tmp_path / f".r.xlsx.{os.getpid()}.0123456789ab.tmp"  # this process is alive: its file is in use
    mine.write_bytes(b"in use")
    assert contained(tco("export", "--xlsx", str(tmp_path / "r.xlsx"))).code == 0
    assert mine.exists()


def test_a_killed_study_leaves_no_folder_the_next_run_keeps(tmp_path):
    """``.kill-out.<hex>/`` folders stayed forever; a run killed while swapping folders loses no output either."""
    spec = {"name": "k", "question": "q", "scenario": "default", "metric": "ratio:groq",
            "analyses": {"sweep": {"param": "economics.discount_rate", "points": 3}}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    pid = dead_pid()
    (tmp_path / f".kill-out.{pid}.0123456789ab").mkdir()  # a killed run's half-written output
    aged = tmp_path / ".kill-out.0123456789ab"  # the same, from a tco that named no process
    aged.mkdir()
    os.utime(aged, (time.time() - 7200, time.time() - 7200))
    swap = tmp_path / f".kill-out.old.{pid}.0123456789ac"  # killed between moving the old output aside and the new in
    (swap / "kill-out").mkdir(parents=True)
    (swap / "kill-out" / ".tco-study").write_text("written by tco study\n")
    assert contained(tco("study", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "kill-out"), cwd=tmp_path,
                         timeout=60)).code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kill-out", "s.yaml"]


def test_the_app_removes_its_cache_folder_at_exit_and_a_killed_apps_at_start(tmp_path):
    """The app left ``/tmp/tco-app-*`` after every run."""
    stale = tmp_path / f"tco-app-{dead_pid()}.0123456789ab"
    stale.mkdir()
    (stale / "cache.db").write_bytes(b"")
    code = ("from tco_app import create_app; import pathlib; app = create_app(); "
            "print(sorted(p.name for p in pathlib.Path(__import__('tempfile').gettempdir()).iterdir()))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(tmp_path)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    during = eval(done.stdout.strip().splitlines()[-1])  # the list of names the child printed
    assert len([n for n in during if n.startswith("tco-app-")]) == 1 and stale.name not in during
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("tco-app-")] == []


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare to mount a small tmpfs")
def test_a_full_disk_is_one_line(tmp_path):
    """On ENOSPC export printed "Exception ignored in: ZipFile.__del__ ... Traceback" after its error."""
    full = tmp_path / "full"
    full.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {full} && {sys.executable} -m tco export --xlsx {full}/b.xlsx; "
              f"echo exit=$?; ls -A {full}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if "mount" in done.stderr and "exit=" not in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()[:200]}")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "exit=2" in done.stdout and done.stdout.strip().endswith("exit=2"), (done.stdout, done.stderr)  # nothing left
    assert len(lines) == 1 and lines[0].startswith("tco: error: --xlsx") and "disk is full" in lines[0], done.stderr
