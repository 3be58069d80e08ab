# Cross build for 32-bit ARM Linux, hard-float ABI: ARMv7-A with VFPv3-D16
# (Debian armhf's baseline: Cortex-A7/A8/A9/A15/A17, Raspberry Pi 2), Debian's
# cross compilers; ctest runs every test program under qemu-user
# (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   apt-get install g++-arm-linux-gnueabihf qemu-user
#   cmake -B b-armhf --toolchain toolchain/arm-linux-gnueabihf.cmake
#   cmake --build b-armhf -j2 && ctest --test-dir b-armhf
#
# NEON is not in the baseline: TERN_SIMD=auto compiles the neon kernel set's
# files with -mfpu=neon-vfpv4 and chooses it at run time where AT_HWCAP
# reports NEON and VFPv4 (src/cpu/kernels/arm/arm_features.h); elsewhere the
# scalar set runs. qemu-arm's default CPU has both; TERN_QEMU_CPU picks
# another model (cortex-a9: NEON without VFPv4, the scalar set).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)

# _FILE_OFFSET_BITS=64: 64-bit off_t, so model files over 2 GiB open, stat and
# map, and readdir() works where the file system has 64-bit inode numbers
# (without it glibc's readdir fails with EOVERFLOW: an empty folder).
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=vfpv3-d16 -mfloat-abi=hard -D_FILE_OFFSET_BITS=64")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=vfpv3-d16 -mfloat-abi=hard -D_FILE_OFFSET_BITS=64")

# The target's headers and libraries (Debian's cross layout).
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(TERN_QEMU_CPU "max" CACHE STRING "qemu-arm -cpu model the tests run under")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TERN_QEMU_CPU)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf -cpu ${TERN_QEMU_CPU})
