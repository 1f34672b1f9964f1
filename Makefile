# Two commands for a fresh machine: `make run` and `make test`.
# Both create .venv when missing and install the exact versions pinned in requirements.lock.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
LOCK   := requirements.lock

.PHONY: run test lint bench soak eval index encoder llm lock clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.runtime: $(PY) pyproject.toml $(LOCK)
	$(PY) -m pip install --quiet -c $(LOCK) -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PY) -m pip install --quiet -c $(LOCK) -e '.[dev]'
	touch $@

# torch and sentence-transformers: the tests compare the shipped encoders with the torch one.
# One pip run for all three (a fresh clone resolves and builds the project once, not three times).
$(VENV)/.export: $(PY) pyproject.toml $(LOCK)
	$(PY) -m pip install --quiet -c $(LOCK) -e '.[dev,export]'
	touch $(VENV)/.runtime $(VENV)/.dev $@

# llama-cpp-python (the `llm` extra) compiles llama.cpp: with the default native flags it may use
# instructions this CPU lacks (it crashed on the first token on one AVX2 machine), so the flags are
# portable ones. --no-binary and --no-cache-dir: a wheel built elsewhere with other flags is never used.
LLM_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
                  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLM_HOST ?= 127.0.0.1
LLM_PORT ?= 8080

# The wheel built with these flags is kept per machine, keyed by the flags, the version and the Python, so a
# fresh clone (or a new .venv) installs it in seconds instead of compiling again; delete the folder to rebuild.
LLM_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' $(LOCK))
LLM_BUILD_ID := $(shell printf '%s' "$(LLM_CMAKE_ARGS) $(LLM_VERSION) $$($(PYTHON) -c 'import sys; print(sys.implementation.cache_tag)')" \
                  | sha256sum | cut -c1-12)
LLM_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mlsys-assistant/llama-wheels/$(LLM_BUILD_ID)

$(VENV)/.llm: $(PY) pyproject.toml $(LOCK)
	@if ls "$(LLM_WHEELS)"/llama_cpp_python-$(LLM_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "llama.cpp $(LLM_VERSION): reusing the build made with the same flags in $(LLM_WHEELS)"; \
	else \
	  echo "llama.cpp $(LLM_VERSION): compiling with portable CPU flags (about 10 minutes, once per machine)"; \
	  CMAKE_ARGS="$(LLM_CMAKE_ARGS)" $(PY) -m pip wheel --quiet --no-deps --no-cache-dir \
	    --no-binary llama-cpp-python -w "$(LLM_WHEELS)" llama-cpp-python==$(LLM_VERSION); \
	fi
	$(PY) -m pip install --quiet -c $(LOCK) "$$(ls "$(LLM_WHEELS)"/llama_cpp_python-$(LLM_VERSION)-*.whl | head -n 1)" -e '.[llm]'
	touch $@

run: $(VENV)/.runtime        ## index the default knowledge if needed, serve the chat UI on 127.0.0.1:7860
	$(VENV)/bin/assistant serve

test: $(VENV)/.export $(VENV)/.llm  ## install with the dev, export and llm extras and run the whole test suite
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 --dist loadfile   # two workers; a file's tests share a worker and its fixtures

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

index: $(VENV)/.runtime
	$(VENV)/bin/assistant index

eval: $(VENV)/.runtime       ## both question sets with the offline model, each in a home of its own
	ASSISTANT_HOME=.assistant-seed ASSISTANT_KNOWLEDGE=knowledge/seed \
	  $(VENV)/bin/assistant eval --questions knowledge/questions/seed.jsonl --out results/seed
	ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys \
	  $(VENV)/bin/assistant eval --questions knowledge/questions/mlsys.jsonl --out results/mlsys

bench: $(VENV)/.runtime      ## indexing, query and scale benchmarks -> bench/results/results.json and .md
	$(VENV)/bin/assistant bench

soak: $(VENV)/.runtime       ## 20 concurrent chat sessions against a local server
	$(PY) scripts/soak.py

encoder: $(VENV)/.export     ## rebuild assistant/index/encoder_files from the MiniLM weights (ONNX int8, static)
	$(PY) scripts/export_encoder.py

llm: $(VENV)/.llm           ## a local OpenAI-compatible server with the shipped small model on 127.0.0.1:8080
	$(PY) -m assistant.answer.local_server --host $(LLM_HOST) --port $(LLM_PORT)

lock:                        ## re-pin every installed version (run after changing dependencies)
	$(PY) -m pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu/torch==\1/' > $(LOCK)

clean:
	rm -rf $(VENV) .assistant .assistant-mlsys .pytest_cache
