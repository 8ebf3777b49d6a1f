# Cross-building kiln's runtime for aarch64 Linux (docs/artifact.md, "aarch64"): Debian's cross
# compiler (g++-aarch64-linux-gnu, with its own glibc and libstdc++ under /usr/aarch64-linux-gnu)
# and a sysroot of Debian's arm64 libraries (scripts/make-arm64-sysroot.sh) for oneDNN, fmt,
# nlohmann-json and GTest (the runtime links no protobuf and no libonnx). Tests of that build run
# under qemu-aarch64 over the sysroot.
#
#   cmake -S . -B build-aarch64/build -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-toolchain.cmake
#         [-DKILN_ARM64_SYSROOT=DIR]    (default build-aarch64/sysroot; `make aarch64` does this)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT KILN_ARM64_SYSROOT)
  set(KILN_ARM64_SYSROOT ${CMAKE_CURRENT_LIST_DIR}/../build-aarch64/sysroot)
endif()
get_filename_component(KILN_ARM64_SYSROOT ${KILN_ARM64_SYSROOT} ABSOLUTE)
set(KILN_ARM64_SYSROOT ${KILN_ARM64_SYSROOT} CACHE PATH "Debian arm64 sysroot (scripts/make-arm64-sysroot.sh)")
# try_compile projects see the toolchain file again, without the cache: pass the sysroot on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KILN_ARM64_SYSROOT)

# Libraries, headers and CMake configs from the sysroot (and the cross toolchain's own prefix);
# programs (python3, qemu) from the host.
set(CMAKE_FIND_ROOT_PATH ${KILN_ARM64_SYSROOT} /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The compiler's own sysroot stays /usr/aarch64-linux-gnu (its glibc and libstdc++ headers); the
# sysroot's libraries resolve their own dependencies at link time through -rpath-link.
set(_kiln_arm64_libs ${KILN_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu:${KILN_ARM64_SYSROOT}/lib/aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_kiln_arm64_libs}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_kiln_arm64_libs}")

# add_test commands of this build run under qemu over the sysroot's dynamic loader and libraries.
find_program(KILN_QEMU_AARCH64 qemu-aarch64)
if(KILN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KILN_QEMU_AARCH64} -L ${KILN_ARM64_SYSROOT})
endif()

# No build-tree RPATH: the sysroot's paths mean nothing on an aarch64 machine, and under qemu the
# libraries are found where the guest's loader looks (-L).
set(CMAKE_SKIP_BUILD_RPATH ON)
