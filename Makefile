# The two setup commands (see README): `make run` and `make test`.
PYTHON ?= python3

.PHONY: install install-test run test lint bench

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

bench: install
	$(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/app.py
