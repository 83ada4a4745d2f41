# The two setup commands (see README): `make run` and `make test`.
# Everything installs into a project virtual environment (.venv), so both work where the
# system Python refuses global installs (PEP 668, stock Debian 12 / Ubuntu 24.04).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# test processes (pytest-xdist): two unless the machine is already busy (1-minute load average at or above its
# cores plus one), else none (one process: on saturated cores a second one only adds its start-up and contention).
# JOBS=N forces N (0: this process). Measured on the idle 2-core machine, two processes (2026-12-08): test-fast 66-84 s
# of wall time (3,116-3,119 tests; each process collects the suite, ~4.5 s with the bytecode caches kept; the machine's
# speed varies by ~30 % over a day), test 478-484 s (3,411-3,417 tests; both cores busy throughout, ~700 core-seconds
# with Chromium's;
# three processes: 282 s, the browser's waits do not overlap enough to pay for the third collection).
# With --dist loadfile, tests/conftest.py hands the tests out (pytest_xdist_make_scheduler): the modules of its WHOLE,
# whose tests share a fixture that costs seconds (one LibreOffice run, a dask cluster, the calibration fit...), whole to
# one process; every other test on its own, to whichever process is free. The longest modules
# start first (FIRST; --no-loadscope-reorder keeps that order, xdist's own puts the modules with the most tests first).
# (--dist loadgroup would spread single tests, but pytest-xdist 3.8 marks groups in a node id field that pytest 9 no
# longer reads.)
JOBS ?= $(shell $(PYTHON) -c "import os; n = os.cpu_count() or 1; print(2 if n >= 2 and os.getloadavg()[0] < n + 1 else 0)")
# PYTHONDONTWRITEBYTECODE emptied: where the environment sets it (this machine does), every test process and every
# `python -m tco` a test starts compiled tco and the tests afresh (and pytest rewrote their assertions afresh) on each
# run: collecting the suite took 7.9 s of CPU a process against 4.6 s with the __pycache__ folders (gitignored) kept
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n $(JOBS) --dist loadfile --no-loadscope-reorder

.PHONY: install install-test install-python-test-deps run test test-fast bench bench-scale

# the venv, with pip able to install (Debian's python3 needs python3-venv for ensurepip)
$(PY):
	bash scripts/make-venv.sh $(PYTHON) $(VENV)

install: $(PY)
	$(PY) -m pip install -q -e .

install-test: install-python-test-deps
	bash scripts/install-system-deps.sh

# the package and its test extras (pytest, xdist, ruff, ...) in the venv, no system packages; reinstalled when
# pyproject.toml changes (the stamp file), so the test targets do not pay pip's ~6 s each time
install-python-test-deps: $(VENV)/.test-deps

$(VENV)/.test-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[test]"
	touch $@

## install and start the app on the bundled default scenario (http://127.0.0.1:8050)
run: install
	$(PY) -m tco app

## install everything and run the whole test suite (what CI runs)
test: install-test
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PYTEST)

## the quick loop: no browser, no LibreOffice, no dask cluster (under a minute)
test-fast: install-python-test-deps
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PYTEST) -m "not slow and not libreoffice" --ignore=tests/web -p no:playwright

## every speed target of the issues, printed as figures and ratios (a few minutes: the engine table of issue 16 with
## GenZ in a throwaway venv and LibreOffice, dask 1 vs 2 workers, start-up; then studies, fleet, workbook, app, limits)
bench: install
	$(PY) benchmarks/speed.py
	$(PY) benchmarks/accelerators.py
	$(PY) benchmarks/studies.py
	$(PY) benchmarks/fleet.py
	$(PY) benchmarks/workbook.py
	$(PY) benchmarks/app.py
	$(PY) benchmarks/limits.py

## chunked studies at scale: 1 and 2 workers, peak memory (ARGS="--big 100000000" adds the 1e8 run; minutes)
bench-scale: install
	$(PY) benchmarks/scale.py $(ARGS)
