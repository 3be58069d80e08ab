// The ARM kernel levels and how a CPU is found to run one.
//
// One build runs on every core of its architecture: the baseline (the
// toolchain's -march, armv8-a on AArch64, ARMv7-A with VFPv3-D16 on armhf)
// has no optional instruction, and each level's files are compiled with that
// level's own flags (CMakeLists.txt, the source properties of arm/*_<level>.cpp)
// and chosen at run time from the kernel's feature bits (AT_HWCAP, AT_HWCAP2,
// port_cpu_hwcap), as the x86 sets are chosen from CPUID:
//   neon     AArch64: every core (Advanced SIMD is part of ARMv8-A): SMULL
//            integer dots, NEON float kernels. armhf: arm/*_neon.cpp built
//            with -mfpu=neon-vfpv4, run where the kernel reports NEON and
//            VFPv4 (Cortex-A7/A15/A17, and AArch64 cores in 32-bit mode; a
//            Cortex-A8/A9 runs the scalar set).
//   dotprod  -march=armv8.2-a+dotprod+fp16 (arm/*_dotprod.cpp): SDOT (4 int8
//            products into each int32 lane) dots and the repacked tiles;
//            HWCAP_ASIMDDP plus the half-precision bits the flags allow the
//            compiler to use (HWCAP_FPHP, HWCAP_ASIMDHP). Cortex-A55/A75/A76/
//            A77/A78/X1, Neoverse N1, Apple M1, Graviton 2.
//   i8mm     -march=armv8.2-a+dotprod+fp16+i8mm (arm/*_i8mm.cpp): SMMLA (a
//            2x8 by 8x2 int8 product into a 2x2 int32 tile) prompt tiles;
//            the dotprod bits plus HWCAP2_I8MM. Cortex-A510/A710/X2 and
//            later, Neoverse N2/V1, Graviton 3, Apple M2.
// Nothing in the levels uses FP16 arithmetic (F16 values are converted with
// FCVT/FCVTL, part of ARMv8.0); +fp16 is in the flags so that the code is
// built for the same -march as a llama.cpp built for these cores.
// A build pinned to a level (TERN_SIMD=neon|dotprod|i8mm) compiles the whole
// library with its flags and asks nothing at run time (TERN_KSET_DISPATCH 0).
#pragma once

#include <stdint.h>
#include "port.h"

namespace tern {

enum arm_level { ARM_NEON, ARM_DOTPROD, ARM_I8MM };

// Whether this CPU runs a level's code (read once, when the set is chosen).
inline bool arm_cpu_runs(arm_level level) {
#if defined(__aarch64__)
    const uint64_t hwcap = port_cpu_hwcap(), hwcap2 = port_cpu_hwcap2();
    const uint64_t FPHP = 1u << 9, ASIMDHP = 1u << 10, ASIMDDP = 1u << 20;  // AT_HWCAP
    const uint64_t I8MM = 1u << 13;                                         // AT_HWCAP2
    const bool dotprod = (hwcap & (FPHP | ASIMDHP | ASIMDDP)) == (FPHP | ASIMDHP | ASIMDDP);
    switch (level) {
        case ARM_NEON: return true;
        case ARM_DOTPROD: return dotprod;
        case ARM_I8MM: return dotprod && (hwcap2 & I8MM) != 0;
    }
    return false;
#elif defined(__arm__)
    const uint64_t NEON = 1u << 12, VFPv4 = 1u << 16;  // 32-bit AT_HWCAP
    return level == ARM_NEON && (port_cpu_hwcap() & (NEON | VFPv4)) == (NEON | VFPv4);
#else
    (void) level;
    return false;
#endif
}

}  // namespace tern
