# The runtime alone (KILN_RUNTIME_ONLY, included by CMakeLists.txt after the layers up to the
# engine and the artifact format): what loads and runs a compiled artifact, and the tests of kiln's
# own CPU kernels. The aarch64 cross build (`make aarch64`, cmake/aarch64-toolchain.cmake) is this.
#
# The loader's part of src/artifact (opening, compatibility, pre-packed weights) over the target
# table (kiln_target); the rest of that layer (compile, placement on the backends, measure, the
# cache) needs the profiler and the backends and stays out.
add_library(kiln_artifact_loader STATIC
    ${CMAKE_SOURCE_DIR}/src/artifact/artifact.cc
    ${CMAKE_SOURCE_DIR}/src/artifact/compatibility.cc
    ${CMAKE_SOURCE_DIR}/src/artifact/packed_weights.cc)
target_include_directories(kiln_artifact_loader PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(kiln_artifact_loader PUBLIC kiln_artifact_format kiln_target kiln_engine)

# kiln-run ARTIFACT --inputs DIR --outputs DIR: `kiln run` on an artifact, the same files.
add_executable(kiln-run ${CMAKE_SOURCE_DIR}/src/kiln_run/main.cc ${CMAKE_SOURCE_DIR}/src/cli/test_data.cc)
target_link_libraries(kiln-run PRIVATE kiln_artifact_loader)
set_target_properties(kiln-run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# The CPU kernels' tests (src/engine/cpu/*_test.cc: ulp bounds of the math functions, the
# elementwise, softmax, normalization, reduce, resize, ... kernels against the reference ones), on
# every ISA this CPU has: scalar and NEON on aarch64. When cross-built, ctest runs them through
# CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64 over the sysroot).
find_package(GTest REQUIRED)
file(GLOB kiln_cpu_kernel_test_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/engine/cpu/*_test.cc)
add_executable(kiln_cpu_kernel_tests ${kiln_cpu_kernel_test_srcs})
target_link_libraries(kiln_cpu_kernel_tests PRIVATE kiln_engine GTest::gtest_main)
# The tests' random inputs the same numbers as on x86: aarch64 GCC contracts a * b + c into one
# fused multiply-add by default (x86-64's baseline has none), which changes what
# std::uniform_real_distribution gives by an ulp (and, with it, which cases meet the ulp bounds:
# softmax_test.cc's scalar case went 2 -> 3 ulp on those inputs). The kernels are not affected.
target_compile_options(kiln_cpu_kernel_tests PRIVATE -ffp-contract=off)
enable_testing()
add_test(NAME cpu_kernels COMMAND kiln_cpu_kernel_tests)
set_tests_properties(cpu_kernels PROPERTIES LABELS unit TIMEOUT 1500)
