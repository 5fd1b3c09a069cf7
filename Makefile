# The developer's interface: `make run` and `make test` work from a fresh clone.
#
# The engine is compiled with mypyc (setup.py) from the same .py files; nertz loads the compiled
# modules only while every source still matches its build (nertz/_form.py), so after an edit
# `make run`/`make test` compile again first. `make dev` drops the compiled modules for work on
# the pure ones (edits show at once); `NERTZ_PURE=1` does the same for one command.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The compiled modules' sources (nertz/_form.py's COMPILED): an edit to one means a rebuild.
COMPILED_SRC := $(addsuffix .py,$(subst .,/,$(shell sed -n 's/^    "\(nertz\.[a-z_.]*\)",$$/\1/p' nertz/_form.py)))
# The tests that also run on the pure modules: both forms must agree.
PURE_TESTS := tests/test_form.py tests/test_golden.py tests/test_properties.py tests/test_spec_audit.py \
	tests/test_spec_audit_2.py \
	tests/test_referee.py::test_engine_simulator_and_environment_reach_the_same_outcome

.PHONY: run demo test lint bench compile dev clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Dependencies first, without compiling; .compiled then builds the engine once.
$(VENV)/.installed: pyproject.toml setup.py | $(BIN)/python
	NERTZ_COMPILE=0 $(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml setup.py | $(BIN)/python
	NERTZ_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

# Compile the engine in place (without a C compiler this installs pure, with one warning).
$(VENV)/.compiled: $(VENV)/.installed setup.py $(COMPILED_SRC)
	@start=$$(date +%s); \
	$(BIN)/python -m pip install --quiet --no-deps -e . || exit 1; \
	echo "compiled in $$(( $$(date +%s) - start )) s: $$($(BIN)/nertz --version)"
	touch $@

compile: $(VENV)/.compiled

run: $(VENV)/.compiled
	$(BIN)/nertz serve

demo: $(VENV)/.compiled
	$(BIN)/nertz replay examples/demo.nertz.json

test: $(VENV)/.installed-test $(VENV)/.compiled
	$(BIN)/ruff check nertz tests bench
	$(BIN)/mypy
	NERTZ_EXPECT_FORM=compiled $(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo 'pytest collected no tests'; rc=0; fi; [ $$rc -eq 0 ] || exit $$rc
	NERTZ_PURE=1 NERTZ_EXPECT_FORM=pure $(BIN)/python -m pytest $(PURE_TESTS)

bench: $(VENV)/.compiled
	$(BIN)/python bench/engine.py --compare
	$(BIN)/python bench/simulate.py --compare

# Work on the pure modules: no compiled engine until the next `make compile`, `run` or `test`.
dev: $(VENV)/.installed-test
	rm -f $(VENV)/.compiled nertz/_compiled.json nertz__mypyc.*.so
	find nertz -name '*.so' -delete
	@echo "nertz now loads its pure modules: $$($(BIN)/nertz --version)"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build
	rm -f nertz/_compiled.json nertz__mypyc.*.so
	find nertz -name '*.so' -delete
