// Optional AArch64 instructions the neon set uses, and how a kernel that
// needs one is compiled and chosen:
//   SDOT  (ARMv8.2 dot product, FEAT_DotProd): 4 int8 products summed into
//         each int32 lane;
//   SMMLA (ARMv8.6 int8 matrix multiply, FEAT_I8MM): a 2x8 by 8x2 int8
//         product accumulated into a 2x2 int32 tile.
// A build whose -march has the feature (__ARM_FEATURE_DOTPROD,
// __ARM_FEATURE_MATMUL_INT8) uses it unconditionally. Otherwise, on AArch64
// Linux with GCC or Clang, the kernels are compiled for it by a target
// attribute (TERN_SDOT_FN, TERN_I8MM_FN) and chosen when the set is filled if
// the kernel reports the feature (AT_HWCAP's ASIMDDP, AT_HWCAP2's I8MM, via
// port_cpu_hwcap). Elsewhere (32-bit ARM, other systems) neither is built:
// TERN_SDOT_FN / TERN_I8MM_FN stay undefined and the SMULL kernels run.
#pragma once

#include "port.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define TERN_SDOT_FN
#define TERN_SDOT_ALWAYS 1
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#define TERN_SDOT_FN __attribute__((target("dotprod")))
#else  // GCC's arm_neon.h defines the dot-product intrinsics for this arch
#define TERN_SDOT_FN __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#endif

#if defined(__aarch64__) && defined(__ARM_FEATURE_MATMUL_INT8)
#define TERN_I8MM_FN
#define TERN_I8MM_ALWAYS 1
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#define TERN_I8MM_FN __attribute__((target("dotprod,i8mm")))
#else
#define TERN_I8MM_FN __attribute__((target("arch=armv8.6-a+dotprod+i8mm")))
#endif
#endif

namespace tern {

// Whether this CPU runs SDOT / SMMLA (read when a set is filled, once).
inline bool neon_has_sdot(void) {
#if defined(TERN_SDOT_ALWAYS)
    return true;
#elif defined(TERN_SDOT_FN)
    return (port_cpu_hwcap() & (1u << 20)) != 0;   // HWCAP_ASIMDDP
#else
    return false;
#endif
}

inline bool neon_has_i8mm(void) {
#if defined(TERN_I8MM_ALWAYS)
    return true;
#elif defined(TERN_I8MM_FN)
    return (port_cpu_hwcap2() & (1u << 13)) != 0;  // HWCAP2_I8MM
#else
    return false;
#endif
}

}  // namespace tern
