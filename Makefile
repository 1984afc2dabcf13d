# The two commands a newcomer needs:  make synth   and   make test
# Everything else is installed on demand into .venv/ and node_modules/, once.

PYTHON  ?= python3
VENV    := .venv
BIN     := $(CURDIR)/$(VENV)/bin
STAMP   := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# The venv's Python and pinned Node first, then the pinned cdk CLI.
export PATH := $(BIN):$(CURDIR)/node_modules/.bin:$(PATH)
# No telemetry, no version nags, no update checks: builds must not reach out.
export CDK_DISABLE_CLI_TELEMETRY := true
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
# Node from PyPI does not read the distro npmrc (cafile): trust the system CA bundle, which
# proxies with their own CA need. Harmless elsewhere (it only adds CAs).
export NODE_EXTRA_CA_CERTS ?= $(firstword $(wildcard /etc/ssl/certs/ca-certificates.crt))

# Every step that can take more than 10 s prints when it starts, every 30 s while it runs and
# when it ends (tools/step.sh): pip, npm, mypy, pytest.
STEP := sh tools/step.sh
PIP_FLAGS := --quiet --disable-pip-version-check --progress-bar off

# uv (pinned in requirements-uv.txt) installs the pinned requirements into every venv: the same
# files and exact pins pip read, in a fraction of pip's time (parallel downloads, a shared cache).
# No --compile-bytecode: compiling every module of aws-cdk-lib (hundreds of services) cost 34 s of
# wall time in .venv alone; Python compiles what a process imports and writes the .pyc, so the
# first synth pays about 2.5 s once and every later process reads the cache (2026-12-04). That
# needs bytecode writing on: a machine that sets PYTHONDONTWRITEBYTECODE (some CI images do)
# would compile every import in every process, so the build drops it for its own commands.
unexport PYTHONDONTWRITEBYTECODE
UV_DIR := .venv-uv
UV := $(CURDIR)/$(UV_DIR)/bin/uv
UV_STAMP := $(UV_DIR)/.installed
UV_FLAGS := --quiet
# uv honours SSL_CERT_FILE; UV_NATIVE_TLS also trusts the system store (a proxy's own CA).
export UV_NATIVE_TLS := 1

CDK := $(CURDIR)/node_modules/.bin/cdk
CDK_FLAGS := --no-notices --no-version-reporting --ci

.PHONY: setup synth check lint test suite test-envs graphviz mutation deploy deploy-local review diff clean

CHECKOV_STAMP := .venv-checkov/.installed
SDKV3_STAMP := .venv-sdkv3/.installed
FLOOR_STAMP := .venv-floor/.installed

$(UV_STAMP): requirements-uv.txt
	@$(STEP) "pip install uv" $(PYTHON) -m pip install $(PIP_FLAGS) --upgrade --target $(UV_DIR) -r requirements-uv.txt
	touch $@

setup: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP) $(SDKV3_STAMP) $(FLOOR_STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml tools/node-shims.sh $(UV_STAMP)
	test -x $(BIN)/python || $(STEP) "python -m venv .venv" $(PYTHON) -m venv $(VENV)
	@$(STEP) "uv pip install .venv (requirements-dev.txt)" $(UV) pip install $(UV_FLAGS) --python $(BIN)/python -r requirements-dev.txt
	$(UV) pip install $(UV_FLAGS) --python $(BIN)/python --no-deps -e . --config-settings editable_mode=compat
	sh tools/node-shims.sh $(VENV)
	touch $@

$(NODE_STAMP): package.json package-lock.json $(STAMP)
	@$(STEP) "npm ci (the pinned cdk CLI)" npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(CHECKOV_STAMP): requirements-checkov.txt $(UV_STAMP)
	test -x .venv-checkov/bin/python || $(UV) venv $(UV_FLAGS) --python $(PYTHON) .venv-checkov
	@$(STEP) "uv pip install .venv-checkov" $(UV) pip install $(UV_FLAGS) --python .venv-checkov/bin/python -r requirements-checkov.txt
	touch $@

# SageMaker Python SDK v3 (sagemaker-train): its own venv, like checkov's, because v2 in .venv owns
# the same `sagemaker` import name. Used by tests/test_sagemaker_sdk_v3.py.
$(SDKV3_STAMP): requirements-sdkv3.txt $(UV_STAMP)
	test -x .venv-sdkv3/bin/python || $(UV) venv $(UV_FLAGS) --python $(PYTHON) .venv-sdkv3
	@$(STEP) "uv pip install .venv-sdkv3" $(UV) pip install $(UV_FLAGS) --python .venv-sdkv3/bin/python -r requirements-sdkv3.txt
	touch $@

# The lowest supported aws-cdk-lib/constructs (requirements-floor.txt), cdk-nag 3 at its floor and
# cdk-nag 2, in one cached venv: tests/test_floors.py. Built once; a warm `make test` installs nothing.
$(FLOOR_STAMP): requirements-floor.txt tools/floor_venv.sh $(UV_STAMP)
	@PYTHON=$(PYTHON) UV=$(UV) $(STEP) "uv pip install .venv-floor (lowest supported versions, cdk-nag 2 and 3)" sh tools/floor_venv.sh .venv-floor

# Any context for the app: make synth CONTEXT="-c smddp:instanceCount=8". A bad value is the app's
# one line and exit 2 (tools/cdk_app_exit.py drops the cdk CLI's extra line; the CLI exits 1).
synth: $(STAMP) $(NODE_STAMP)
	@$(BIN)/python tools/cdk_app_exit.py $(CDK) synth $(CDK_FLAGS) --quiet $(CONTEXT)
	@echo "Template: cdk.out/TrainingNetworkStack.template.json"

# What a CI job runs on the app (README, "CI"): synth (SmddpChecks already judges the app there),
# then the synthesized templates through `smddp-infra check` as SARIF for code scanning (written
# even when it finds errors, so the upload step has it) and through cfn-lint with the SMDDP
# plugin. Exit: the first failure's (check: 1 errors, 2 unreadable; cfn-lint: its own bits).
SARIF ?= smddp-infra.sarif
CFN_LINT_PLUGIN = "$$($(BIN)/python -c 'import os, smddp_infra.rules.cfnlint_plugin as p; print(os.path.dirname(p.__file__))')"
check: synth
	@$(BIN)/smddp-infra check --format sarif cdk.out > $(SARIF); status=$$?; echo "SARIF: $(SARIF)"; \
	  if [ $$status -ne 0 ]; then $(BIN)/smddp-infra check cdk.out; exit $$status; fi
	@$(STEP) "cfn-lint (with the SMDDP plugin)" $(BIN)/cfn-lint --append-rules $(CFN_LINT_PLUGIN) -- cdk.out/*.template.json

# Static checks. Zero findings is the bar: see pyproject.toml (mypy's cache lives in .venv, so
# it goes with the packages it describes).
lint: $(STAMP)
	@$(STEP) ruff $(BIN)/ruff check .
	@$(STEP) mypy $(BIN)/mypy

# What the suite needs besides .venv. Each is cached behind its stamp; a new cached venv (a
# version-floor venv, ...) goes here, and is then built in parallel with lint.
TEST_ENVS := $(NODE_STAMP) $(CHECKOV_STAMP) $(SDKV3_STAMP) $(FLOOR_STAMP)
test-envs: $(TEST_ENVS) graphviz

# Graphviz for the review test's image branch (tools/install_graphviz.sh: apt-get as root where
# it can; otherwise it says so, and that one test fails saying how to install it).
graphviz:
	@sh tools/install_graphviz.sh

# pytest runs one test module per worker, the costliest modules first (tests/conftest.py,
# SLOW_FIRST), one worker more than there are cores: a module often waits (moto's server, the cdk
# CLI polling a deploy, a doc block's child process), and the extra worker keeps every core busy
# meanwhile (2 cores: 179 s instead of 204 s for the same suite, 2026-12-05). PYTEST_WORKERS=1
# for one process.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(getattr(os, "sched_getaffinity", lambda _: [0] * (os.cpu_count() or 1))(0)) + 1)')

# The slow parts run side by side on a fresh clone: every venv at once, ruff and mypy next to
# them, and the suite as soon as the venvs are there (mypy's cold run need not finish first);
# make fails if either fails (docs/testing.md has the figures). Warm, this is ruff + mypy
# (cached) next to pytest.
test:
	@$(MAKE) --no-print-directory -j6 lint suite

suite: $(TEST_ENVS) graphviz
	@$(STEP) pytest $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Mutation testing of the pure rooms (NOT part of make test: minutes per room). See docs/testing.md.
#   make mutation ROOMS="sizing guardrails" MUTATION_MINUTES=10
ROOMS ?=
MUTATION_MINUTES ?= 15
MUTATION_STAMP := $(VENV)/.mutation-installed
$(MUTATION_STAMP): requirements-mutation.txt $(STAMP)
	@$(STEP) "pip install mutmut" $(BIN)/python -m pip install $(PIP_FLAGS) -r requirements-mutation.txt
	touch $@

mutation: $(MUTATION_STAMP)
	$(BIN)/python scripts/mutation.py $(ROOMS) --max-minutes $(MUTATION_MINUTES)

# Guarded deploy: synth once, refuse an update that would replace the file system, a bucket,
# the VPC, the subnet, a KMS key or the file system's security group (smddp-infra guard against
# the deployed template, read with your credentials; a stack not deployed yet passes), then
# deploy exactly the assembly that was checked.
#   make deploy CONTEXT="-c smddp:instanceCount=8"    # any -c context for the synth
#   make deploy ALLOW_REPLACEMENT=true                 # accept a replacement on purpose
#                                                      # (= -c smddp:allowReplacement=true)
STACK   ?= TrainingNetworkStack
CONTEXT ?=
ALLOW_REPLACEMENT ?= false
GUARD_CONTEXT := $(if $(filter true,$(ALLOW_REPLACEMENT)),-c smddp:allowReplacement=true)

deploy: $(STAMP) $(NODE_STAMP)
	@$(BIN)/python tools/cdk_app_exit.py $(CDK) synth $(CDK_FLAGS) --quiet $(CONTEXT) $(GUARD_CONTEXT)
	$(BIN)/smddp-infra guard --deployed-stack $(STACK) cdk.out
	$(CDK) deploy --app cdk.out $(CDK_FLAGS) --outputs-file cdk-outputs.json $(STACK)

# The whole product without an AWS account: moto's CloudFormation endpoint on localhost, the
# real cdk CLI deploys the default app, then `smddp-infra job-config` reads cdk-outputs.json,
# then the guard: a grown cluster is refused, the same growth with the type pinned deploys in place.
# Needs only .venv and node_modules (not the checkov and SDK v3 venvs `make test` builds).
deploy-local: $(STAMP) $(NODE_STAMP)
	$(BIN)/python tools/deploy_local.py

# The reviewer's pack in docs/review/ (template YAML, summary, diagram) and docs/api.md.
# Graphviz draws the SVG: tools/install_graphviz.sh says what it does (apt-get install graphviz,
# as root or with passwordless sudo) and skips the image with a note when it cannot.
review: $(STAMP) $(NODE_STAMP)
	@sh tools/install_graphviz.sh
	$(CDK) synth $(CDK_FLAGS) --quiet
	$(BIN)/smddp-infra review cdk.out --out docs/review
	$(BIN)/python -m smddp_infra.review.api_docs --out docs/api.md

diff: $(STAMP) $(NODE_STAMP)
	$(CDK) diff $(CDK_FLAGS)

clean:
	rm -rf cdk.out .pytest_cache .mutation
