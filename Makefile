# The usual commands. `make demo` and `make test` install what is missing first (scripts/install-deps.sh).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# `make python`: the Python package into $(BUILD)/python (PYTHONPATH=$(BUILD)/python python3 -c 'import kiln').
.PHONY: deps build python test test-unit test-conformance test-asan fuzz fuzz-build fuzz-long demo models clean bench bench-ops aarch64

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	@echo "kiln: configuring the build in $(BUILD)/ (cmake)"
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	@echo "kiln: building in $(BUILD)/ with $(JOBS) jobs ([N/M] counts the files; a first build takes about 15 minutes on 2 cores, later ones seconds)"
	cmake --build $(BUILD) -j $(JOBS)

python: deps $(BUILD)/build.ninja
	@echo "kiln: building the Python package into $(BUILD)/python"
	cmake --build $(BUILD) -j $(JOBS) --target python
	@echo "kiln: ready: PYTHONPATH=$(BUILD)/python /usr/bin/python3 -c 'import kiln'"

test: build aarch64
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Unit tests and the hostile corpus under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B build-asan -G Ninja -DKILN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -L "unit|hostile"

# libFuzzer targets (docs/fuzzing.md), every kiln library instrumented: `make fuzz` runs each
# target FUZZ_SECONDS (default 60) from the corpus in tests/fuzz/corpus; `make fuzz-long` runs
# FUZZ_TARGET (default: both) for an hour each, niced, and merges what it finds into that corpus.
fuzz-build: deps
	cmake -S . -B build-fuzz -G Ninja -DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
	  -DKILN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS) --target fuzz_load fuzz_model fuzz_artifact

fuzz: fuzz-build
	scripts/run-fuzz.sh build-fuzz $${FUZZ_SECONDS:-60}

fuzz-long: fuzz-build
	nice -n 10 scripts/run-fuzz.sh build-fuzz $${FUZZ_SECONDS:-3600} --grow --keep-going \
	  $(if $(FUZZ_TARGET),--target $(FUZZ_TARGET))

demo: build
	scripts/demo.sh $(BUILD)

# kiln against ONNX Runtime on the benchmark models, side by side (bench/run.sh; not in `make test`).
# BENCH_FLAGS passes more, e.g. make bench BENCH_FLAGS='--threads 2 --models "resnet50 mlp"'.
bench: build
	bench/run.sh --kiln $(BUILD)/kiln --work $(BUILD)/bench --models-dir $(BUILD)/models $(BENCH_FLAGS)

# Each kind of node of the benchmark models alone, kiln's kernel time against ONNX Runtime's
# (bench/ops.py; OPS_FLAGS passes more, e.g. OPS_FLAGS='--ops Conv,MatMul --threads 1').
bench-ops: build
	/usr/bin/python3 bench/ops.py --kiln $(BUILD)/kiln --models-dir $(BUILD)/models --work $(BUILD)/bench-ops $(OPS_FLAGS)

# kiln's runtime for aarch64 (docs/artifact.md, "aarch64"): Debian's cross compiler over a sysroot
# of Debian's arm64 packages (scripts/make-arm64-sysroot.sh), only what loads and runs an artifact
# (build-aarch64/build/kiln-run) and the CPU kernels' tests. scripts/run-aarch64.sh runs it under
# qemu; `make test` builds it and runs it on aarch64 artifacts (ctest aarch64_*).
aarch64: deps
	@scripts/build-aarch64.sh $(JOBS)

clean:
	rm -rf build build-asan build-fuzz build-aarch64
