# Cross build for 32-bit ARM Linux, hard-float ABI: ARMv7-A with NEON and VFPv4
# (Cortex-A7/A9/A15/A17, Raspberry Pi 2), Debian's cross compilers; ctest runs
# every test program under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   apt-get install g++-arm-linux-gnueabihf qemu-user
#   cmake -B b-armhf --toolchain toolchain/arm-linux-gnueabihf.cmake
#   cmake --build b-armhf -j2 && ctest --test-dir b-armhf
#
# TERN_SIMD=auto gives the scalar kernel set here (the neon set is AArch64
# code); the compiler may still vectorize the scalar code with NEON.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)

# _FILE_OFFSET_BITS=64: 64-bit off_t, so model files over 2 GiB open, stat and
# map, and readdir() works where the file system has 64-bit inode numbers
# (without it glibc's readdir fails with EOVERFLOW: an empty folder).
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -D_FILE_OFFSET_BITS=64")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -D_FILE_OFFSET_BITS=64")

# The target's headers and libraries (Debian's cross layout).
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
