# profsite — the two commands a person needs are `make build` and `make test`.
# Everything else (venv, pinned packages, CJK font, Chromium) is set up here.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The capture runs on the GPU machine's own python3 (torch + standard library only).
CAPTURE_PYTHON ?= python3

.PHONY: lint build test test-fast serve review review-check messages bench mutation capture capture-smoke chromium clean venv

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "error: python3 >= 3.11 is needed")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# Generators run inside the mkdocs build (macros + hooks), cached by input hash.
# The site is built into a temporary folder and swapped in only when the build succeeded.
build: $(STAMP)
	$(BIN)/python -m generators build-site --site-dir site

# Review: rebuilds on changes under docs/, data/, generators/, locales/ - only the pages whose
# inputs changed (--dirty: generators/site/incremental.py; unchanged results come from .cache/).
# No .pyc writes under generators/, which mkdocs would see as a change. Served by waitress, as
# `make review` is, without the review API (one server for both; `mkdocs serve --dirty` works too).
# `make serve PORT=8010` for another port.
PORT ?= 8000
serve: $(STAMP)
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m generators review --read-only --port $(PORT)

# Review: the site as `make serve` builds it, served by waitress with the review API on
# 127.0.0.1:$(REVIEW_PORT) - select text or a row's or figure's comment button, comment, reply,
# resolve; the threads are written to reviews/ (README: Reviews). REVIEW_ARGS: e.g.
# "--bind 10.0.0.5 --tokens reviewers.txt --public-origin https://review.example.org".
REVIEW_PORT ?= 8001
REVIEW_ARGS ?=
review: $(STAMP)
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m generators review --port $(REVIEW_PORT) $(REVIEW_ARGS)

# The automated reviewer on its own (it also runs in every build): findings -> threads in reviews/.
review-check: $(STAMP)
	$(BIN)/python -m generators review-check

# After adding or changing a generated string: refresh locales/messages.pot and merge it into
# every catalog; then translate the empty entries and check with `python -m generators messages check`.
messages: $(STAMP)
	$(BIN)/python -m generators messages update

# Debian's chromium for the real-browser tests; installed with apt when missing (as root).
# A non-root user without it gets one line saying what to install.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "error: chromium is not installed: run 'apt-get install chromium' as root (or make test as root), then make test again" >&2; \
	    exit 1; fi; \
	  echo "installing chromium with apt"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Two pytest-xdist workers (the 2-core machine's cores), whole files per worker so a module's
# fixtures (a site of its own, a browser) are built once; files in the order tests/conftest.py
# gives them (the longest first), not re-sorted by their number of tests.
test: $(STAMP) chromium lint
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# The fast loop while editing: lint, then every test that builds no site, drives no browser and
# is not marked slow (markers: pyproject.toml; `site` and `browser` are added in tests/conftest.py).
test-fast: $(STAMP) lint
	$(BIN)/python -m pytest -q -m "not site and not browser and not slow"

# ruff: lint and format check (`$(BIN)/ruff format .` fixes the format).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Holistic Trace Analysis, for comparison in `make bench` only: its own venv (its
# dependencies, jupyterlab among them, stay out of the project's), pinned.
HTA_VENV  := .venv-hta
HTA_STAMP := $(HTA_VENV)/.installed

$(HTA_STAMP): bench/requirements-hta.lock
	test -x $(HTA_VENV)/bin/python || $(PYTHON) -m venv $(HTA_VENV)
	$(HTA_VENV)/bin/python -m pip install -q --disable-pip-version-check -r bench/requirements-hta.lock
	touch $@

bench: $(STAMP) $(HTA_STAMP)
	$(BIN)/python -m bench

# Mutation testing of the core computations (not part of `make test`: about 20 minutes on 2 cores).
# The modules and the fast tests that run against each mutant are listed in pyproject.toml
# [tool.mutmut]; prints the score and every survivor (tests/mutation/SURVIVORS.md explains them).
mutation: $(STAMP)
	rm -rf mutants
	nice -n 10 $(BIN)/mutmut run --max-children 2 | tr '\r' '\n' | tail -n 3
	$(BIN)/python tests/mutation/score.py

# On a GPU machine: run every workload under the profilers and write into data/.
capture:
	$(CAPTURE_PYTHON) -m generators.capture all --out data

# The same capture code on the CPU with the tiny model (the venv's CPU torch), into a
# temporary folder that is removed afterwards: a check that the tooling runs end to end.
capture-smoke: $(STAMP)
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(BIN)/python -m generators.capture all --out "$$tmp" --smoke && ls -R "$$tmp" | head -40

clean:
	rm -rf site .cache .site-* mutants
