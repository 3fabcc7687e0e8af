# Campaign Desk: `make run` serves the demo, `make test` runs the whole suite.
# The venv's interpreter: Debian's CPython 3.11 where it is installed with venv, else python3.
# This machine's python3 is pyenv's 3.11, compiled without profile-guided optimisation or
# link-time optimisation; Debian's is compiled with both, as the official python:3.11 image the
# Dockerfile builds on is. The whole suite ran in 0.83 of the time on it (670 s against 804 s,
# the same commit, 2026-12-02). `make PYTHON=python3.12 test` picks another; an existing .venv
# keeps the interpreter it was made with (`make clean` first).
DEBIAN_PYTHON := $(shell /usr/bin/python3.11 -c "import ensurepip, venv" 2>/dev/null && echo /usr/bin/python3.11)
PYTHON ?= $(or $(DEBIAN_PYTHON),python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` is two pytest sessions (issue 16: each session costs a start-up and, per xdist
# worker, a test database with every migration).
# 1. Everything but the `serial` tests, on three pytest-xdist workers (on this 2-core machine three
#    keep both cores busy through the tests' waits on PostgreSQL, Redis, subprocesses and the
#    browser: 365 s against 414 s with two, quiet, 2026-12-01), one test file each at a time
#    (a file's module-wide fixtures, such as its Celery worker, start once). Each worker has its
#    own test database, Celery queue, cache prefix and live-server port, so the tests that start
#    a Celery worker or a browser run beside the CPU-bound ones (they were a pass of their own
#    before; their waits are generous enough for a loaded machine). The files that take longest
#    are handed out first (conftest.py LONGEST_FIRST, hence --no-loadscope-reorder) so the
#    workers finish together. --create-db builds the databases afresh; --reuse-db keeps them.
# 2. The tests marked `serial` (they time a server under load), alone on one worker, which
#    reuses the first session's database (test_<name>_gw0) instead of migrating another. Only
#    the files that hold them are collected (collecting the whole suite cost more than the one
#    test it ran); tests/test_suite_order.py checks SERIAL_TESTS names every such file.
PARALLEL ?= -n 3 --dist loadfile --no-loadscope-reorder
# Python caches compiled modules in __pycache__ (gitignored) even where the shell sets
# PYTHONDONTWRITEBYTECODE, as this machine's does: with it, every one of a run's ~100 processes
# (xdist workers, and the gunicorn, Celery, manage.py and bench processes tests start) compiled
# the project's modules anew, and each worker re-wrote every test module's asserts.
unexport PYTHONDONTWRITEBYTECODE
SERIAL_TESTS := tests/test_slow_clients.py tests/test_slow_uploads.py
PYTEST_ARGS ?=

.PHONY: run test install install-dev lint typecheck bench worker clean client-wheel focus-validator

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The demo on this machine only: plain HTTP on loopback (LOCAL_HTTP=1), DEBUG off as in
# production, the static files collected for WhiteNoise, this installation's SECRET_KEY
# generated into .secret_key on the first run (config/secret_key.py).
run: export LOCAL_HTTP ?= 1
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py load_demo --history
	@echo ""
	@echo "  Campaign Desk is serving on http://$(HOST):$(PORT)/"
	@echo "  Admin:  http://$(HOST):$(PORT)/admin/  (user: demo, password: printed above on the first run, or DEMO_PASSWORD)"
	@echo "  API:    http://$(HOST):$(PORT)/api/v1/docs/"
	@echo ""
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: install-dev
	$(BIN)/python -m pytest $(PARALLEL) --reuse-db --create-db -m "not serial" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -n 1 --reuse-db -m "serial" $(SERIAL_TESTS) $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install-dev
	$(BIN)/mypy .

worker: install
	$(BIN)/celery -A config worker --loglevel=info

# ingest and report need PostgreSQL on 127.0.0.1:5432 (see bench/README.md).
bench: install-dev
	$(BIN)/python bench/bench_plans.py
	$(BIN)/python bench/estimates/run.py
	$(BIN)/python bench/estimates/hardware_options.py
	$(BIN)/python bench/ingest/run.py
	$(BIN)/python bench/report/run.py
	$(BIN)/python bench/campaign_page/run.py

# The client as a package of its own (client/pyproject.toml): its sources and the client's
# pyproject, README and CHANGELOG copied to build/client-src/, built without a download (the
# dev venv's setuptools and wheel) into dist/campaign_desk_client-<version>-py3-none-any.whl.
client-wheel: install-dev
	rm -rf build/client-src && mkdir -p build/client-src dist
	cp -r client/pyproject.toml client/README.md client/CHANGELOG.md campaign_desk_client cdesk build/client-src/
	find build/client-src -name __pycache__ -prune -exec rm -rf {} +
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation -w dist build/client-src

clean:
	rm -rf $(VENV) db.sqlite3 .secret_key staticfiles build dist .pytest_cache .mypy_cache .ruff_cache

# The FinOps Foundation's focus-validator 2.x (FOCUS 1.2 rules) for ledger/tests/test_focus_validator.py:
# it needs Python >= 3.12 and numpy < 2 (so pyarrow < 19; numpy 1.26 has wheels up to 3.12 only),
# hence a virtualenv of its own on a Python 3.12 that works (a pyenv shim may name one it cannot run).
FOCUS_PYTHON ?= $(firstword $(foreach p,python3.12 /usr/bin/python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),$(shell $(p) -c "import venv" >/dev/null 2>&1 && echo $(p))))
focus-validator:
	$(FOCUS_PYTHON) -m venv .venv-focus
	.venv-focus/bin/python -m pip install --quiet 'focus-validator==2.2.1' 'pyarrow<19'
