# The two setup commands (see README): `make run` and `make test`.
PYTHON ?= python3

.PHONY: install install-test run test bench bench-scale

install:
	$(PYTHON) -m pip install -q -e .

install-test:
	bash scripts/install-system-deps.sh
	$(PYTHON) -m pip install -q -e ".[test]"

## install and start the app on the bundled default scenario (http://127.0.0.1:8050)
run: install
	$(PYTHON) -m tco app

## install everything and run the whole test suite (what CI runs)
test: install-test
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -q

## every speed target of the issues, printed as figures and ratios (a minute or two)
bench: install
	$(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/studies.py
	$(PYTHON) benchmarks/fleet.py
	$(PYTHON) benchmarks/workbook.py
	$(PYTHON) benchmarks/app.py

## chunked studies at scale: 1 and 2 workers, peak memory (ARGS="--big 100000000" adds the 1e8 run; minutes)
bench-scale: install
	$(PYTHON) benchmarks/scale.py $(ARGS)
