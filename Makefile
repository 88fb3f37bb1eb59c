# The two commands a new user runs (see README.md):
#   make demo   set up, then run kcodec on the bundled sample data
#   make test   set up, then run the whole test suite (what CI runs)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kcodec-installed

.PHONY: setup test lint typecheck demo generate docs clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# the suite on every core (at most 4 workers, each with its own Spark session when it runs Spark tests);
# a test file runs on one worker, so module fixtures (a generated package, a built wheel) are built once.
# KCODEC_CHECKED_BY_MAKE: lint (mypy included) and generate --check ran just before, so the tests that run
# them again skip (tests/codegen/test_typecheck.py pins this recipe)
test: setup lint
	$(BIN)/kcodec generate --check
	@# setup.py builds the kernel as optional (pip succeeds without a compiler), so a C error would only make
	@# the kernel's tests skip: the suite refuses to run without it
	@$(BIN)/python -c "import sys; from kcodec.generated.fast.kernel import compiled_kernel; compiled_kernel() or sys.exit('make test: the compiled kernel is missing or stale; $(BIN)/pip install -v -e . --no-deps shows why')"
	@# bytecode written once, up front: the suite starts hundreds of Python processes (the CLI, Spark's
	@# workers), and where PYTHONDONTWRITEBYTECODE is set each would compile every kcodec module it imports
	@$(BIN)/python -m compileall -q -j 0 src codegen generated > /dev/null
	KCODEC_CHECKED_BY_MAKE=1 $(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile

# ruff (lint and format) over everything, generated code included; mypy on codegen/ and src/kcodec/
lint: setup typecheck
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy with no arguments: pyproject.toml [tool.mypy] lists the files (codegen/ and src/kcodec/)
typecheck: setup
	$(BIN)/mypy

demo: setup
	@bash samples/demo.sh $(BIN)/kcodec

generate: setup
	$(BIN)/kcodec generate

# the documentation site (mkdocs.yml: docs/ and the API reference from the docstrings) into build/site/;
# --strict fails on a broken link or anchor (tests/test_docs.py checks the same in `make test`)
docs: setup
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d build/site

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
