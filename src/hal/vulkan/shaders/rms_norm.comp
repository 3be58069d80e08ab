#version 450
// RMS_NORM fused with its weight (cpu/ops/norm.cpp): per row of ne0 values,
// scale = 1 / sqrt(mean(x^2) + eps), y = (x * scale) * w. One workgroup per
// row (rows over dims 1..3, strided), the sum of squares reduced over 256
// threads. Each thread takes values tid + 256 i four at a time, their loads
// issued together: a decode row (one workgroup on the whole GPU) otherwise
// waits one memory latency per value a thread reads (an H100 spent 11-20 us a
// row of 896-2048 values at 64 threads with one load in flight).
#include "common.glsl"
layout(local_size_x = 256) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, x, readonly)
BIND_F32(2, w, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_x, o_w;
    uint ne0, ne1, ne2, n_rows;
    uint x_nb1, x_nb2, x_nb3;
    uint d_nb1, d_nb2, d_nb3;
    uint has_w, eps;   // eps: float bits
} p;
shared float sh[256];

void main() {
    const uint r = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, tid = gl_LocalInvocationID.x;
    if (r >= p.n_rows) return;
    const uint i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
    const uint xr = (p.o_x + i1 * p.x_nb1 + i2 * p.x_nb2 + i3 * p.x_nb3) / 4u;
    const uint dr = (p.o_d + i1 * p.d_nb1 + i2 * p.d_nb2 + i3 * p.d_nb3) / 4u;
    float s = 0.0;
    for (uint i0 = tid; i0 < p.ne0; i0 += 1024u) {
        float v[4];
        [[unroll]] for (uint u = 0u; u < 4u; u++) v[u] = i0 + 256u * u < p.ne0 ? x_f[xr + i0 + 256u * u] : 0.0;
        [[unroll]] for (uint u = 0u; u < 4u; u++) s += v[u] * v[u];
    }
    sh[tid] = s;
    barrier();
    for (uint k = 128u; k > 0u; k >>= 1) {
        if (tid < k) sh[tid] += sh[tid + k];
        barrier();
    }
    const float scale = 1.0 / sqrt(sh[0] / float(p.ne0) + uintBitsToFloat(p.eps));
    for (uint i0 = tid; i0 < p.ne0; i0 += 1024u) {
        float v[4], g[4];
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            const uint i = i0 + 256u * u;
            v[u] = i < p.ne0 ? x_f[xr + i] : 0.0;
            g[u] = i < p.ne0 && p.has_w != 0u ? w_f[p.o_w / 4u + i] : 1.0;
        }
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            const uint i = i0 + 256u * u;
            if (i < p.ne0) d_f[dr + i] = p.has_w != 0u ? (v[u] * scale) * g[u] : v[u] * scale;
        }
    }
}
