# The developer's interface: `make run` and `make test` work from a fresh clone.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run demo test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/nertz serve

demo: $(VENV)/.installed
	$(BIN)/nertz replay examples/demo.nertz.json

test: $(VENV)/.installed-test
	$(BIN)/ruff check nertz tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo 'pytest collected no tests'; exit 0; fi; exit $$rc

bench: $(VENV)/.installed
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
