// The GELU table (gelu_table.h) and the GEGLU reference kernel that reads it.
#include "cpu/kernels/gelu_table.h"

#include <math.h>

#include <atomic>

#include "cpu/kernels/vec.h"
#include "port.h"

#if TERN_WITH_ARCH_GEMMA2 || TERN_WITH_ARCH_GEMMA3

namespace tern {
namespace {

tern_fp16 g_gelu[k_gelu_table_entries];
std::atomic<int> g_gelu_state{0};  // 0: empty, 1: being filled, 2: ready (constant-initialized)

tern_fp16 gelu_of(tern_fp16 bits) {
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f, coef_a = 0.044715f;
    const float h = tern_fp16_to_fp32(bits);
    return tern_fp32_to_fp16(0.5f * h * (1.0f + tanhf(sqrt_2_over_pi * h * (1.0f + coef_a * h * h))));
}

}  // namespace

const tern_fp16 * tern_gelu_table(void) {
    if (g_gelu_state.load(std::memory_order_acquire) == 2) return g_gelu;
    int expected = 0;
    if (g_gelu_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        for (uint32_t m = 0; m < k_gelu_table_half; m++) {
            g_gelu[m] = gelu_of((tern_fp16) m);
            g_gelu[k_gelu_table_half + m] = gelu_of((tern_fp16) (0x8000u | m));
        }
        g_gelu[k_gelu_table_entries - 1] = 0;
        g_gelu_state.store(2, std::memory_order_release);
    } else {
        while (g_gelu_state.load(std::memory_order_acquire) != 2) port_thread_yield();
    }
    return g_gelu;
}

void tern_kgeglu_f32_ref(int64_t n, float * y, const float * g, const float * u) {
    const tern_fp16 * table = tern_gelu_table();
    for (int64_t i = 0; i < n; i++) {
        const float x = g[i];
        float v;
        if (x > -10.0f && x < 10.0f) {
            const tern_fp16 h = tern_fp32_to_fp16(x);
            v = tern_fp16_to_fp32(table[(h & 0x7fffu) + (h & 0x8000u ? k_gelu_table_half : 0u)]);
        } else {
            v = x <= -10.0f ? 0.0f : x;  // at or above 10 (and NaN): x itself
        }
        y[i] = v * u[i];
    }
}

}  // namespace tern

#endif
