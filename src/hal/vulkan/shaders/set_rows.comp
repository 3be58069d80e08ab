#version 450
// SET_ROWS of F32 rows into a cache of DST_TYPE (cpu/ops/set_rows.cpp): row
// idx[i] of the destination = convert(row i); an index outside [0, n_slots)
// writes nothing. F16 rounds to nearest even; Q8_0 and Q4_0 are the reference
// quantizers of tensor/quants.h (files' rounding: Q8_0 q = roundf(x / d) with
// d = amax / 127; Q4_0 d = max / -8, level = min(15, trunc(x / d + 8.5))), a
// block with a NaN or Inf stored as d = NaN with levels 0. One workgroup per
// row; threads over values (F32, F16) or 32-value blocks.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_U16(0, d, writeonly)
BIND_F32(1, r, readonly)
BIND_U32(2, idx, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_r, o_i;
    uint row_len, n_slots, nb_d1, nb_r1, nb_i0, n;
} p;

float round_away(float x) {
    const float a = abs(x), t = trunc(a);
    return sign(x) * (a - t >= 0.5 ? t + 1.0 : t);
}

void main() {
    const uint i = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, tid = gl_LocalInvocationID.x;
    if (i >= p.n) return;
    const int slot = int(idx_w[(p.o_i + i * p.nb_i0) / 4u]);
    if (slot < 0 || uint(slot) >= p.n_slots) return;
    const uint src = (p.o_r + i * p.nb_r1) / 4u, dst = p.o_d + uint(slot) * p.nb_d1;   // dst: bytes
#if DST_TYPE == TERN_F32
    for (uint e = tid; e < p.row_len; e += 64u) d_f[dst / 4u + e] = r_f[src + e];
#elif DST_TYPE == TERN_F16
    for (uint e = tid; e < p.row_len; e += 64u) d_h[dst / 2u + e] = uint16_t(f32_to_f16_bits(r_f[src + e]));
#else
    for (uint b = tid; b < p.row_len / 32u; b += 64u) {
        const uint x0 = src + 32u * b;
        float amax = 0.0, mx = 0.0;
        bool ok = true;
        for (uint j = 0u; j < 32u; j++) {
            const float v = r_f[x0 + j];
            ok = ok && finite(v);
            if (amax < abs(v)) {
                amax = abs(v);
                mx = v;
            }
        }
#if DST_TYPE == TERN_Q8_0
        const uint blk = dst + 34u * b;
        const float dd = amax / 127.0, id = dd != 0.0 ? 1.0 / dd : 0.0;
        d_h[blk / 2u] = uint16_t(ok ? f32_to_f16_bits(dd) : 0x7e00u);
        for (uint j = 0u; j < 32u; j += 2u) {
            const int q0 = ok ? int(round_away(r_f[x0 + j] * id)) : 0, q1 = ok ? int(round_away(r_f[x0 + j + 1u] * id)) : 0;
            d_h[blk / 2u + 1u + j / 2u] = uint16_t((uint(q0) & 0xffu) | ((uint(q1) & 0xffu) << 8));
        }
#else  // Q4_0
        const uint blk = dst + 18u * b;
        const float dd = mx / -8.0, id = dd != 0.0 ? 1.0 / dd : 0.0;
        d_h[blk / 2u] = uint16_t(ok ? f32_to_f16_bits(dd) : 0x7e00u);
        uint L[32];
        for (uint j = 0u; j < 32u; j++) L[j] = ok ? min(15u, uint(int(r_f[x0 + j] * id + 8.5))) : 0u;
        for (uint j = 0u; j < 16u; j += 2u) {
            d_h[blk / 2u + 1u + j / 2u] = uint16_t((L[j] | (L[j + 16u] << 4)) | ((L[j + 1u] | (L[j + 17u] << 4)) << 8));
        }
#endif
    }
#endif
}
