# docagent: one entry point per task. `make demo` and `make test` set themselves up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo chaos experiment test lint synth deploy destroy clean

setup: $(STAMP)

# Re-run the install whenever the pinned dependencies change.
$(STAMP): pyproject.toml constraints.txt package.json package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[cdk,local,dev,eval]'
	npm ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/docagent demo

# The full crash matrix (README: Crash matrix); the test suite runs a reduced one (tests/chaos/).
chaos: $(STAMP)
	$(BIN)/docagent chaos

# The checkpoint-strategy experiment (docs/experiment.md): installs the experiment extra (LangGraph,
# matplotlib), runs every strategy and writes the table and plots to docs/experiment/.
experiment: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[cdk,local,dev,experiment]'
	$(BIN)/docagent experiment

test: lint
	$(BIN)/python -m pytest -n 2

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy app.py stacks functions docagent scripts

synth: $(STAMP)
	npx --no-install cdk synth --quiet --no-notices

deploy: $(STAMP)
	npx --no-install cdk deploy --require-approval never --no-notices

destroy: $(STAMP)
	npx --no-install cdk destroy --no-notices

clean:
	rm -rf $(VENV) node_modules cdk.out .docagent .pytest_cache .mypy_cache .ruff_cache
