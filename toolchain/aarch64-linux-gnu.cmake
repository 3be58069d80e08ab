# Cross build for 64-bit ARM Linux (AArch64) with Debian's cross compilers;
# ctest runs every test program under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   cmake -B b-arm64 --toolchain toolchain/aarch64-linux-gnu.cmake
#   cmake --build b-arm64 -j2 && ctest --test-dir b-arm64
#
# TERN_ARM_MARCH is the baseline -march of the build, read when the build
# folder is first configured. The default, armv8-a, runs on every AArch64
# core (Cortex-A53/A72: Raspberry Pi 3, 4, Zero 2); TERN_SIMD=auto adds the
# dotprod and i8mm kernel levels, each file compiled with its own -march and
# chosen at run time from AT_HWCAP/AT_HWCAP2 (src/cpu/kernels/arm/arm_features.h),
# so one binary runs everywhere and uses what the core has. Raise the
# baseline only for a build that never runs on an older core. ctest runs
# under qemu -cpu max (every level); TERN_QEMU_CPU picks another model
# (cortex-a53, cortex-a72, cortex-a76, ...).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(TERN_ARM_MARCH "armv8-a" CACHE STRING "baseline -march of the AArch64 build")
set(TERN_QEMU_CPU "max" CACHE STRING "qemu-aarch64 -cpu model the tests run under")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TERN_ARM_MARCH TERN_QEMU_CPU)  # try_compile reads this file again
set(CMAKE_C_FLAGS_INIT "-march=${TERN_ARM_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${TERN_ARM_MARCH}")

# The target's headers and libraries (Debian's cross layout).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu ${TERN_QEMU_CPU})
