# The usual commands. `make demo` and `make test` install what is missing first (scripts/install-deps.sh).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: deps build test test-unit test-conformance test-asan fuzz demo models clean

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	@scripts/install-deps.sh
	$(MAKE) BUILD=build-asan CMAKE_FLAGS="-DKILN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug" build
	cd build-asan && ctest --output-on-failure -j $(JOBS) -L unit

fuzz:
	@scripts/install-deps.sh
	$(MAKE) BUILD=build-fuzz CMAKE_FLAGS="-DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DKILN_SANITIZE=address,undefined" build
	scripts/run-fuzz.sh build-fuzz $${FUZZ_SECONDS:-60}

demo: build
	scripts/demo.sh $(BUILD)

clean:
	rm -rf build build-asan build-fuzz
