# Two entry points that work on a fresh machine with Python 3.11 and the package registries:
#   make demo   set up .venv and run the main job on the shipped defaults
#   make test   set up .venv, lint, and run the test suite
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint wheel-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,rl,dask,serve,meaning]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on shipped defaults: parse the strategy guide (its random-text twins are built on
# first use), measure what three of its rules are worth to the built-in AI without a reader (the
# advice audit: each rule followed vs broken, 50 paired seeds, 20/50/100 turns), then ask whether
# the text model profits from reading at the horizon where that advice pays: text, its random-text
# twin and the same network without text on 8 paired full 100-turn small-map games against the
# built-in AI (the reading preset at a smaller budget). Tables, paired tests and plots go to
# results/demo-advice/ and results/demo-reading/.
demo: $(STAMP)
	$(BIN)/nlmcs manual ingest data/manuals/civ-guide.md
	$(BIN)/nlmcs advice audit --manual civ-guide --only first-city,expand,improve-land \
	    --games 50 --seed 36 --workers 2 --out results/demo-advice
	$(BIN)/nlmcs ablation run --preset reading-quick --out results/demo-reading

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest

# The installed package, not the checkout: build the wheel, install it with its dependencies into a
# clean venv and play a short text game from an empty folder (CI runs this after the tests).
wheel-check: $(STAMP)
	rm -rf build/wheel-check && mkdir -p build/wheel-check
	$(BIN)/pip wheel -q --no-deps --no-build-isolation -w build/wheel-check/dist .
	$(PY) -m venv build/wheel-check/venv
	build/wheel-check/venv/bin/pip install -q build/wheel-check/dist/nlmcs-*.whl
	cd build/wheel-check && NLMCS_DATA=$$PWD/store venv/bin/nlmcs play --method text --map tiny \
		--steps 2 --rollouts 4 --depth 3 --no-progress

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
