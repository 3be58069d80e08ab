# Bare-metal build for Arm Cortex-M (Arm's GNU toolchain as Debian ships it)
# with the freestanding port: no OS, no files, one thread, the model from a
# blob and every object in caller memory (include/tern_port.h).
#
#   apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
#   cmake -B b-m7 --toolchain toolchain/arm-none-eabi.cmake
#   cmake --build b-m7 -j2          # lib/libtern.a for Cortex-M7
#
# TERN_CORTEX_M picks the core, read when the build folder is first
# configured: m7 (default: Cortex-M7, FPv5 double-precision FPU, hard float),
# m4 (Cortex-M4F, FPv4 single precision) or m55 (Cortex-M55, Helium/MVE).
# The kernels are the scalar set (TERN_SIMD=scalar). Nothing is run: there is
# no emulator for a bare board here; examples/firmware links an image.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Compiler checks compile only: a program needs a board's startup code to link.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(TERN_CORTEX_M "m7" CACHE STRING "Cortex-M core: m7 | m4 | m55")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TERN_CORTEX_M)
if(TERN_CORTEX_M STREQUAL "m7")
  set(TERN_CORTEX_M_FLAGS "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard")
elseif(TERN_CORTEX_M STREQUAL "m4")
  set(TERN_CORTEX_M_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
elseif(TERN_CORTEX_M STREQUAL "m55")
  set(TERN_CORTEX_M_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
else()
  message(FATAL_ERROR "TERN_CORTEX_M must be m7, m4 or m55, not '${TERN_CORTEX_M}'")
endif()
# Sections per function and data item: an image keeps only what it calls.
set(CMAKE_C_FLAGS_INIT "${TERN_CORTEX_M_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${TERN_CORTEX_M_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${TERN_CORTEX_M_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")

set(TERN_PORT "freestanding" CACHE STRING "")
set(TERN_SIMD "scalar" CACHE STRING "")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
