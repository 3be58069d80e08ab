# Cross build for 64-bit ARM Linux (AArch64) with Debian's cross compilers;
# ctest runs every test program under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   cmake -B b-arm64 --toolchain toolchain/aarch64-linux-gnu.cmake
#   cmake --build b-arm64 -j2 && ctest --test-dir b-arm64
#
# TERN_ARM_MARCH is the -march of the whole build, read when the build folder
# is first configured. The default, ARMv8.2-A with the dot-product and
# half-precision extensions, runs on Cortex-A55/A75 and later, Neoverse, Apple
# and Graviton 2+; -DTERN_ARM_MARCH=armv8-a builds for older cores (Cortex-A53
# / A72: Raspberry Pi 3 and 4), where the SDOT kernels are chosen at run time
# from HWCAP. TERN_SIMD=auto gives the neon kernel set. qemu runs with
# -cpu max, so every extension the build may use exists.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(TERN_ARM_MARCH "armv8.2-a+dotprod+fp16" CACHE STRING "-march of the AArch64 build")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TERN_ARM_MARCH)  # try_compile reads this file again
set(CMAKE_C_FLAGS_INIT "-march=${TERN_ARM_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${TERN_ARM_MARCH}")

# The target's headers and libraries (Debian's cross layout).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max)
