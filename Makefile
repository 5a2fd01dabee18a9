# docagent: one entry point per task. `make demo` and `make test` set themselves up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
ALL_EXTRAS := cdk,local,dev,eval
DEMO_EXTRAS := cdk,local
EXPERIMENT_EXTRAS := cdk,local,dev,experiment

.PHONY: setup lambda-wheels browser demo chaos experiment test unit coverage lint docs docs-gen docs-serve synth deploy destroy clean

# Python writes the bytecode of what it imports, once, into .venv/ and __pycache__/ (ignored by git), also where
# the shell sets PYTHONDONTWRITEBYTECODE: with it every process (the CLI, the endpoint, each Lambda worker)
# compiled every module it imported from source again, about 28 s of CPU of each 200-document demo
# (docs/scale.md, "Set-up").
unexport PYTHONDONTWRITEBYTECODE

setup: $(STAMP)

# The installer: uv (PyPI's uv, pinned in constraints.txt), which downloads in parallel; pip (upgraded first)
# where uv cannot be installed or fails. Neither byte-compiles site-packages at install (1.1 GB; aws-cdk-lib
# alone would write 189 MB of .pyc, about 32 s of CPU): Python compiles what is imported, once, on first use
# (docs/scale.md, "Set-up"). $(call install,EXTRAS) installs the project with those extras.
define install
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet -c constraints.txt uv || true
	(test -x $(BIN)/uv && $(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints.txt -e '.[$(1)]') || \
		($(BIN)/python -m pip install --quiet --upgrade pip && \
		$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt -e '.[$(1)]')
endef

# The document layer's wheels for Lambda (python3.13, the architecture cdk.json names, x86_64 by default:
# stacks/document_layer.py) in build/lambda-wheels/, so a synth (the infra tests, `make synth`) installs them
# without the network. Only that architecture's: `make lambda-wheels ARCH=arm64` fetches another's (a synth
# for an architecture without its wheels downloads them itself).
LAMBDA_WHEELS := $(BIN)/python -m stacks.document_layer >/dev/null

# Everything (`make setup`, `make test`, lint, docs): re-run whenever the pinned dependencies change.
$(STAMP): pyproject.toml constraints.txt
	$(call install,$(ALL_EXTRAS))
	$(LAMBDA_WHEELS)
	touch $(DEMO_STAMP) $(STAMP)

lambda-wheels: $(STAMP)
	$(BIN)/python -m stacks.document_layer $(ARCH)

# What `make demo` and `make chaos` need, no more: the CLI, the CDK app and the local cloud ('.[cdk,local]'),
# not the linters, type stubs, test runners, browser driver, docs site or eval's scipy (`make setup` adds them).
$(DEMO_STAMP): pyproject.toml constraints.txt
	$(call install,$(DEMO_EXTRAS))
	touch $(DEMO_STAMP)

# The CDK CLI (Node) for synth, deploy and destroy only: the demo, the local cloud and the tests synthesize
# with `python app.py` (jsii brings its own runtime), so `make setup` does not install it.
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/docagent demo

# The full crash matrix (docs/crash-matrix.md); the test suite runs a reduced one (tests/integration/test_walkthrough.py).
chaos: $(DEMO_STAMP)
	$(BIN)/docagent chaos

# The checkpoint-strategy experiment (docs/experiment.md): installs the experiment extra (LangGraph,
# matplotlib), runs every strategy and writes the table and plots to docs/experiment/.
experiment: $(STAMP)
	$(call install,$(EXPERIMENT_EXTRAS))
	$(BIN)/docagent experiment

# Debian's Chromium for the console's browser tests (tests/browser/, Playwright's Python API pointed at
# /usr/bin/chromium): installed from the distribution's packages when missing, never a browser build of
# Playwright's own (`playwright install` is not used). Needs root, as on CI.
CHROMIUM := /usr/bin/chromium
browser:
	test -x $(CHROMIUM) || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# The whole suite: lint, type checks, the strict docs build, every test layer (docs/contributing.md "Tests"),
# in four runs with --dist worksteal (a worker that runs out of tests takes the other's queue; with the default
# --dist load the integration tests were queued on one worker, which ran 290 s after the other had finished),
# on 2 workers but for run 2, on 3: its tests wait too (function timeouts, Wait states, a killed worker's
# deadline), so at 2 workers they kept 66 % of two cores busy (231 s; 3 workers: 188 s, 84 %; 4 workers: 192 s;
# the browser tests beside it instead of beside run 3 made the suite slower, 5 min 18 s against 4 min 51 s;
# 2026-12-03, a quiet machine):
# 1. the fast lane (`make unit`): its tests use moto in the test process (mock_aws), which resets moto's
#    backends, and with them an in-process local cloud, so they never share a worker with the next run;
# 2. the integration tests that share one local cloud a worker (the session cloud of tests/integration);
# 3. the tests marked own_cloud: a local cloud (or mock_aws) of their own in the test process;
# 4. the browser tests, in one process: they share one local cloud and each goes on from the jobs the one
#    before left, so two workers must not split them. They run beside run 3, their output held until both
#    end: each of the two keeps about one core busy (the browser tests 62 s of CPU in 66 s, the own_cloud
#    tests 78 s in 51 s; 2026-12-02), so together they take about as long as the longer alone.
# --durations: each run prints its slowest tests, the work list of the suite's time (docs/performance.md).
PYTEST := $(BIN)/python -m pytest -n 2 --dist worksteal
PYTEST_WAITING := $(BIN)/python -m pytest -n 3 --dist worksteal
# Lint, the type checks and the docs build run beside the fast lane (mypy keeps one core busy for about 25 s),
# their output held until the lane ends; either failing fails the suite there.
test: $(STAMP) browser
	checks=$$(mktemp); $(MAKE) --no-print-directory lint docs >"$$checks" 2>&1 & checking=$$!; \
	$(PYTEST) -m "not integration" $(UNIT_TESTS) --durations=10; fast=$$?; \
	wait $$checking; checked=$$?; cat "$$checks"; rm -f "$$checks"; test $$checked -eq 0 && test $$fast -eq 0
	$(PYTEST_WAITING) -m "integration and not own_cloud" $(INTEGRATION_TESTS) --durations=30
	log=$$(mktemp); $(BIN)/python -m pytest -n 0 tests/browser >"$$log" 2>&1 & browser=$$!; \
	$(PYTEST) -m own_cloud $(INTEGRATION_TESTS) --durations=10; own=$$?; \
	wait $$browser; browsed=$$?; cat "$$log"; rm -f "$$log"; test $$own -eq 0 && test $$browsed -eq 0

# The fast lane: unit and infra tests (everything not marked integration; tests/conftest.py marks by folder).
# Named by folder too, so that the workers do not import the integration modules only to deselect them
# (about 8 s of each worker's collection: the local cloud, moto's Step Functions, Playwright).
# The order is the order the tests are dealt in: --dist worksteal gives each worker half of the list, in
# order, and a worker that runs out takes the end of the other's. The infra tests come first, so that one
# worker runs them all and synthesizes the app once (at the end of the list, both workers synthesized it:
# 204 s of CPU for the fast lane against 186 s, 2026-12-02).
UNIT_TESTS := tests/infra tests/unit
INTEGRATION_TESTS := tests/integration tests/localcloud tests/chaos tests/experiment
unit: $(STAMP)
	$(PYTEST) -m "not integration" $(UNIT_TESTS)

# The fast lane with line coverage of functions/, stacks/ and docagent/ (a summary, and htmlcov/).
coverage: $(STAMP)
	$(PYTEST) -m "not integration" $(UNIT_TESTS) --cov=functions --cov=stacks --cov=docagent \
		--cov-report=term:skip-covered --cov-report=html

# The docs site (mkdocs.yml, docs/): a strict build into site/, where a broken link or a page left out of
# the navigation fails. No network: nothing in the theme or plugins fetches at build time.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# Regenerate docs/reference/ from the code (tests/unit/test_docs_reference.py fails when they drift).
docs-gen: $(STAMP)
	$(BIN)/python -m docagent.docs_gen

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy app.py stacks functions docagent scripts

synth: $(STAMP) $(NODE_STAMP)
	npx --no-install cdk synth --quiet --no-notices

# The stack, then the job definition (JOB, a folder; default the invoice example, the default_definition
# of cdk.json): `make deploy JOB=my-job`. A new version of a definition later needs only the publish.
JOB ?= examples/invoices
# Preflight first (docs/deploying.md): a model the Region cannot call, missing model access, an unbootstrapped
# account or too low quotas stop the deploy before anything is created. --invoke calls every model a job may
# (cdk.json's model_id and extra_model_ids, and the models JOB's job.json names) once, as the deployer: on a
# fresh account the first call of an Anthropic model starts its AWS Marketplace subscription, which the
# functions' roles cannot do; a model that refuses is named with what to enable.
deploy: $(STAMP) $(NODE_STAMP)
	$(BIN)/docagent preflight --aws --invoke --definition $(JOB)
	npx --no-install cdk deploy --require-approval never --no-notices
	$(BIN)/docagent definition publish $(JOB) --aws

destroy: $(STAMP) $(NODE_STAMP)
	npx --no-install cdk destroy --no-notices

clean:
	rm -rf $(VENV) node_modules cdk.out .docagent .pytest_cache .mypy_cache .ruff_cache site htmlcov .coverage
