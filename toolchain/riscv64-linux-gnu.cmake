# Cross build for 64-bit RISC-V Linux (RV64GC, lp64d ABI), Debian's cross
# compilers; ctest runs every test program under qemu-user
# (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   apt-get install g++-riscv64-linux-gnu qemu-user
#   cmake -B b-riscv64 --toolchain toolchain/riscv64-linux-gnu.cmake
#   cmake --build b-riscv64 -j2 && ctest --test-dir b-riscv64
#
# TERN_SIMD=auto gives the scalar kernel set here.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)

set(CMAKE_C_FLAGS_INIT "-march=rv64gc -mabi=lp64d")
set(CMAKE_CXX_FLAGS_INIT "-march=rv64gc -mabi=lp64d")

# The target's headers and libraries (Debian's cross layout).
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 -L /usr/riscv64-linux-gnu)
