"""Benchmark: export time of the default scenario's workbook beside LibreOffice's recalculation time.

    python benchmarks/workbook.py [SCENARIO]

Export must stay under 2 s (issue #5). LibreOffice is timed on a warm private profile
(the first start of a fresh profile adds its own set-up time).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from workbook_helpers import RECALC_ALWAYS, soffice

import tco
from tco.export import write_workbook


def main(name: str = "default", repeats: int = 3) -> None:
    scenario = tco.load_scenario(name)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        exports = []
        for i in range(repeats):
            start = time.perf_counter()
            path = write_workbook(scenario, tmp / f"book{i}.xlsx")
            exports.append(time.perf_counter() - start)
        profile = tmp / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
        recalcs = []
        for i in range(repeats + 1):  # the first run warms the profile up
            start = time.perf_counter()
            subprocess.run([soffice(), "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}",
                            "--convert-to", "xlsx", "--outdir", str(tmp / "out"), str(tmp / f"book{i % repeats}.xlsx")],
                           check=True, capture_output=True)
            recalcs.append(time.perf_counter() - start)
        size_kb = path.stat().st_size / 1024
    print(f"scenario {name}: {len(scenario.params)} inputs, workbook {size_kb:.0f} kB")
    print(f"export (write_workbook):        best {min(exports):.2f} s, mean {sum(exports) / len(exports):.2f} s")
    print(f"LibreOffice recalc + save:      first {recalcs[0]:.2f} s (fresh profile), "
          f"warm best {min(recalcs[1:]):.2f} s")


if __name__ == "__main__":
    main(*sys.argv[1:2])
