# shardc: the two set-up commands are `make demo` and `make test`; both
# install what they need first (`make deps`), so a fresh machine works.
SHELL := /bin/bash
BUILD_DIR ?= build
ASAN_BUILD_DIR ?= build-asan
FUZZ_BUILD_DIR ?= build-fuzz
DEB_BUILD_DIR ?= build-deb
PREFIX ?= /usr/local
VENV ?= .venv
PYTHON := $(VENV)/bin/python
LIT := $(shell llvm-config-19 --prefix 2>/dev/null)/build/utils/lit/lit.py
JOBS ?= $(shell nproc)
# ccache lives outside the tree so clean clones (CI) reuse it: paths are
# hashed relative to the checkout, so any clone of the project hits the cache.
export CCACHE_DIR ?= $(HOME)/.cache/shardc-ccache
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

APT_PACKAGES := cmake g++ ninja-build ccache python3-venv \
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools \
  libonnx-dev libprotobuf-dev protobuf-compiler libgtest-dev \
  clang-19 libclang-rt-19-dev \
  flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libdnnl-dev zlib1g-dev \
  libopenmpi-dev openmpi-bin dpkg-dev file
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: deps apt-deps python-deps build install deb build-asan test test-unit test-lit test-conformance \
        node-tests test-asan fuzz fuzz-build fuzz-import fuzz-mlir fuzz-artifact demo gpu-check clean help zoo zoo-status

help:
	@echo "make demo   compile and run the embedded example, compare with onnxruntime"
	@echo "make test   install, build and run every test suite"
	@echo "make deps | build | test-asan | fuzz | clean"
	@echo "make install PREFIX=DIR   the tools, libshardc_runtime.so and its headers, the Python module, the docs"
	@echo "make deb    Debian packages (shardc, shardc-dev) for any x86-64 CPU, without CUDA"
	@echo "make gpu-check  on a GPU machine: CUDA numerics, ranks, NCCL and a benchmark vs PyTorch"
	@echo "make zoo    regenerate test/zoo (HF models by both torch exporters); make zoo-status"

deps: apt-deps python-deps

# Installs only what is missing, so a second run does nothing.
apt-deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	  | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

python-deps: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The built tree as it is, into PREFIX (relocatable: the tools find
# libshardc_runtime.so through $ORIGIN); README.md, "Install".
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Debian packages (cmake/ShardcPackage.cmake) from their own tree, built for
# other machines: the CPU kernels for any x86-64 (SHARDC_CPU_NATIVE=OFF) and
# no CUDA backend (NVIDIA's toolkit and NCCL are no Debian packages a
# dependency can name); no tests. dpkg-shlibdeps declares what the binaries
# link. Writes $(DEB_BUILD_DIR)/shardc_VERSION_ARCH.deb and shardc-dev_*.deb.
deb: deps
	test -f $(DEB_BUILD_DIR)/build.ninja || cmake -S . -B $(DEB_BUILD_DIR) $(CMAKE_FLAGS) \
	  -DCMAKE_INSTALL_PREFIX=/usr -DSHARDC_CPU_NATIVE=OFF -DSHARDC_CUDA=OFF -DSHARDC_BUILD_TESTS=OFF
	cmake --build $(DEB_BUILD_DIR) -j $(JOBS)
	cd $(DEB_BUILD_DIR) && cpack -G DEB

test: build
	$(MAKE) --no-print-directory test-unit test-lit test-conformance

test-unit:
	cd $(BUILD_DIR) && ctest --output-on-failure

test-lit: node-tests
	$(PYTHON) $(LIT) -sv $(BUILD_DIR)/test --param node_tests=$(abspath $(NODE_TESTS))

# ONNX's backend node tests, written from the onnx package in $(VENV) (its
# wheel ships the generators, not the data) into the build directory; the
# script does nothing while its stamp (onnx and numpy versions, its own
# digest, the case count) matches. Build output: never committed.
NODE_TESTS ?= $(BUILD_DIR)/node-tests
node-tests: python-deps
	$(PYTHON) test/scripts/make_node_tests.py --out $(NODE_TESTS)

# Every node test through shardc and shardrun, compared with ONNX's outputs:
# a case of an op the importer supports must pass (or be one of the script's
# OUT_OF_SCOPE rows, each with its reason), any other must fail with the
# importer's one-line "unsupported ops" error. Prints the counts per op.
# Twice $(JOBS) workers: a case mostly waits on process start-up and files.
test-conformance: node-tests
	$(PYTHON) test/scripts/node_tests.py --shardc $(BUILD_DIR)/bin/shardc \
	  --shardrun $(BUILD_DIR)/bin/shardrun --node-tests $(NODE_TESTS) --jobs $$((2 * $(JOBS)))

# Every lit suite and every node test (compiled and run, as test-conformance:
# 2 to 3 minutes on 2 cores) under AddressSanitizer + UBSan.
build-asan: deps
	test -f $(ASAN_BUILD_DIR)/build.ninja || cmake -S . -B $(ASAN_BUILD_DIR) $(CMAKE_FLAGS) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDC_SANITIZE=ON
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS) --target shardc shardc-opt shardrun shardc-calibrate

# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its free space when
# the including code is built with ASan, but libMLIR.so is not, so an
# attribute storage it hands out from our dialects' (instrumented) slabs
# looks poisoned: a false use-after-poison on every custom attribute.
test-asan: export ASAN_OPTIONS = detect_leaks=1:allow_user_poisoning=0
test-asan: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
test-asan: build-asan node-tests
	$(PYTHON) $(LIT) -sv $(ASAN_BUILD_DIR)/test --param node_tests=$(abspath $(NODE_TESTS))
	$(PYTHON) test/scripts/node_tests.py --shardc $(ASAN_BUILD_DIR)/bin/shardc \
	  --shardrun $(ASAN_BUILD_DIR)/bin/shardrun --node-tests $(NODE_TESTS) --jobs $$((2 * $(JOBS)))

# libFuzzer (clang-19, ASan + UBSan), FUZZ_SECONDS each: over the importer's
# input bytes, seeded from the fixtures and the node tests (models and their
# TensorProto files); over an MLIR input's (nesting, parser, verifiers, the
# rules of compiler/Driver/InputModule.h), seeded from small modules
# (test/fuzz/mlir-corpus); then over the artifact loader (manifest, program
# and weights, checksums recomputed by the harness), seeded from small
# artifacts (test/fuzz/pack_artifact.py). `make -j3 fuzz` runs the three side
# by side.
FUZZ_SECONDS ?= 600
FUZZ_FLAGS = -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -timeout=30 -print_final_stats=1
fuzz: fuzz-import fuzz-mlir fuzz-artifact

fuzz-build: deps
	test -f $(FUZZ_BUILD_DIR)/build.ninja || CC=clang-19 CXX=clang++-19 cmake -S . -B $(FUZZ_BUILD_DIR) \
	  $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDC_FUZZ=ON
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target shardc-import-fuzzer shardc-mlir-fuzzer \
	  shardc-artifact-fuzzer

fuzz-import: fuzz-build node-tests
	mkdir -p fuzz-corpus
	$(FUZZ_BUILD_DIR)/bin/shardc-import-fuzzer $(FUZZ_FLAGS) fuzz-corpus test/fuzz/corpus $(NODE_TESTS)

fuzz-mlir: fuzz-build
	mkdir -p fuzz-mlir-corpus
	$(FUZZ_BUILD_DIR)/bin/shardc-mlir-fuzzer $(FUZZ_FLAGS) fuzz-mlir-corpus test/fuzz/mlir-corpus

fuzz-artifact: fuzz-build
	mkdir -p fuzz-artifact-corpus
	$(FUZZ_BUILD_DIR)/bin/shardc-artifact-fuzzer $(FUZZ_FLAGS) fuzz-artifact-corpus \
	  test/fuzz/artifact-corpus

# The main job on the embedded example: compile it for one device and for
# dp=2 x tp=2 (plan printed), run both with shardrun on the CPU and compare
# with onnxruntime (examples/demo.py). The build is quiet: its output goes to
# a log, printed only when it fails. The artifacts stay in build/demo/.
demo:
	@mkdir -p $(BUILD_DIR)
	@echo "make demo: building shardc (log: $(BUILD_DIR)/demo-build.log)"
	@$(MAKE) --no-print-directory build > $(BUILD_DIR)/demo-build.log 2>&1 || \
	  { cat $(BUILD_DIR)/demo-build.log; echo "make demo: the build failed (output above)"; exit 1; }
	@$(PYTHON) examples/demo.py --build $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(FUZZ_BUILD_DIR) $(DEB_BUILD_DIR)

# The one-command GPU check, for a machine with one GPU (an H200), PyTorch,
# onnx and onnxruntime in GPU_PYTHON, and no network: it builds what it runs
# without `deps` (pip would need the network), then bench/gpu_check.py keeps
# to GPU_CHECK_SECONDS from the start, build included; each part reports on
# its own. Report: $(BUILD_DIR)/gpu-check/report.txt and report.json.
GPU_PYTHON ?= python3
GPU_CHECK_SECONDS ?= 480
gpu-check:
	@start=$$(date +%s); \
	{ test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS); } && \
	cmake --build $(BUILD_DIR) -j $(JOBS) --target shardc shardrun shardc-cuda-tests shardc-cuda-comm-tests && \
	$(GPU_PYTHON) bench/gpu_check.py --build $(BUILD_DIR) --deadline $$((start + $(GPU_CHECK_SECONDS)))

# The model zoo (test/zoo/README.md): Hugging Face architectures exported by
# torch's TorchScript exporter (Debian's torch 1.13 + transformers 4.4x) and by
# its dynamo exporter (torch 2.x from PyPI, ~3 GB with its CUDA wheels). The
# generated files are committed: CI and `make test` never run this, and need
# no torch. Each generator environment is installed when missing.
ZOO_TS_VENV ?= .venv-zoo-ts
ZOO_DYNAMO_VENV ?= .venv-zoo-dynamo

zoo: python-deps $(ZOO_TS_VENV)/.installed $(ZOO_DYNAMO_VENV)/.installed
	ORT_PYTHON=$(abspath $(PYTHON)) $(ZOO_TS_VENV)/bin/python test/zoo/make_zoo.py
	ORT_PYTHON=$(abspath $(PYTHON)) $(ZOO_DYNAMO_VENV)/bin/python test/zoo/make_zoo.py
	$(PYTHON) test/zoo/zoo_tables.py --update

$(ZOO_TS_VENV)/.installed: test/zoo/requirements-ts.txt
	@dpkg-query -W -f='$${Status}\n' python3-torch python3-venv 2>/dev/null | grep -c "install ok installed" \
	  | grep -q '^2$$' || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-torch python3-venv; }
	test -x $(ZOO_TS_VENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(ZOO_TS_VENV)
	$(ZOO_TS_VENV)/bin/python -m pip install -q --disable-pip-version-check -r test/zoo/requirements-ts.txt
	touch $@

$(ZOO_DYNAMO_VENV)/.installed: test/zoo/requirements-dynamo.txt
	test -x $(ZOO_DYNAMO_VENV)/bin/python || python3 -m venv $(ZOO_DYNAMO_VENV)
	$(ZOO_DYNAMO_VENV)/bin/python -m pip install -q --disable-pip-version-check -r test/zoo/requirements-dynamo.txt
	touch $@

# How far shardc gets on every zoo model (a survey: prints a table, exits 0).
zoo-status: python-deps
	$(PYTHON) test/scripts/zoo_status.py --shardc $(BUILD_DIR)/bin/shardc
