# The runtime alone (KILN_RUNTIME_ONLY, included by CMakeLists.txt after the runtime's layers and
# kiln-run): the tests of kiln's own CPU kernels. The aarch64 cross build (`make aarch64`,
# cmake/aarch64-toolchain.cmake) is this: no protobuf, no libonnx, no optimizer is found or built.
#
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
