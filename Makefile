# Two entry points that work on a fresh machine with Python 3.11 and the package registries:
#   make demo   set up .venv and run the main job on the shipped defaults
#   make test   set up .venv, lint, and run the test suite
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/nlmcs manual ingest data/manuals/civ-guide.md

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
