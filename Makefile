# The README's two commands: `make serve` and `make test`.
# Needs only python3 (3.11+) and make; everything else goes into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve test test-fast lint fmt clean proto docs engine-compiled engine-pure

# Let Python cache compiled modules (__pycache__, ignored by git) even where the environment
# asks it not to: recompiling the project on every test process costs seconds of each run.
unexport PYTHONDONTWRITEBYTECODE

# Create the virtualenv once.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# (Re)install the project, editable, with its dev extras whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --editable '.[dev]'
	touch $@

serve: $(STAMP)
	$(BIN)/canasta-server serve

# The tests' files (their servers' SQLite databases, keys, logs) in memory where /dev/shm is:
# every commit to a server's SQLite file waits for the disk (synchronous=FULL; about 0.7 ms a
# flush on the project's machines), and no test can tell that wait from tmpfs's none. Only
# where it has room: a container's /dev/shm is often 64 MB (Docker's default), and one
# PostgreSQL cluster a worker takes about 70 MB, so initdb and the SQLite copies fail there
# with "No space left on device". `make test TEST_TMPDIR=...` chooses.
SHM ?= /dev/shm
SHM_NEEDS_KB ?= 1048576
TEST_TMPDIR ?= $(or $(shell df -Pk $(SHM) 2>/dev/null | awk 'NR == 2 && $$4 >= $(SHM_NEEDS_KB) {print "$(SHM)"}'),$(TMPDIR),/tmp)

# Each line stops make on failure; pytest exits 5 when it collects no tests, which fails too.
# Both cores (pytest-xdist): each worker starts its own PostgreSQL, on a free port.
# ensure-postgres installs PostgreSQL 15 if missing: the tests start their own server from it.
# ensure-chromium installs Debian's chromium if missing: the replay page's tests run it headless.
test: $(STAMP)
	tests/ensure-postgres
	tests/ensure-chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	TMPDIR=$(TEST_TMPDIR) $(BIN)/pytest -n 2

# The inner loop, under a minute on two cores: no lint, no slow tests, no PostgreSQL, a
# third of the property tests' examples and fewer hands in a few seeded tests
# (tests/testkit.py: examples, inner_loop), both cores (pytest-xdist). `make test` stays the
# whole suite and what CI runs.
test-fast: $(STAMP)
	CANASTA_INNER_LOOP=1 TMPDIR=$(TEST_TMPDIR) $(BIN)/pytest -m "not slow and not postgres" -n 2

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Regenerate shared/pb from proto/ (commit the result; tests/test_generated_code.py checks it).
proto: $(STAMP)
	$(BIN)/python -m shared.pb.generate

# Regenerate the command reference in docs/playing.md from the Typer app (commit the result;
# tests/client/test_command_reference.py checks it).
docs: $(STAMP)
	$(BIN)/python -m client.reference

# Opt-in: compile the rules engine's hot modules with mypyc (mypy's compiler, already a dev
# dependency; needs gcc), in place beside the sources, which Python then imports instead of
# them (tools/engine_compiled.py). `make engine-pure` goes back to the pure-Python engine;
# a source changed after the build stops `shared.rules` from importing until one of the two.
engine-compiled: $(STAMP)
	$(BIN)/python -m tools.engine_compiled build

engine-pure: $(STAMP)
	$(BIN)/python -m tools.engine_compiled pure

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -f shared/rules/compiled.json
	find shared/rules -name '*.so' -delete
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
