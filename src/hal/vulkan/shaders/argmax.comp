#version 450
// ARGMAX: per row, the first index of the largest value (cpu/ops/argmax.cpp:
// a NaN never wins a comparison, so a row starting with NaN gives 0). One
// workgroup per row.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_U32(0, d, writeonly)
BIND_F32(1, x, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_x;
    uint ne0, ne1, ne2, n_rows;
    uint x_nb1, x_nb2, x_nb3;
} p;
shared float sh_v[64];
shared uint sh_i[64];

void main() {
    const uint r = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, tid = gl_LocalInvocationID.x;
    if (r >= p.n_rows) return;
    const uint i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
    const uint xr = (p.o_x + i1 * p.x_nb1 + i2 * p.x_nb2 + i3 * p.x_nb3) / 4u;
    float best = -INF;
    uint at = 0xffffffffu;
    for (uint i = tid; i < p.ne0; i += 64u) {
        const float v = x_f[xr + i];
        if (!isnan(v) && (at == 0xffffffffu || v > best)) {
            best = v;
            at = i;
        }
    }
    sh_v[tid] = best;
    sh_i[tid] = at;
    barrier();
    for (uint k = 32u; k > 0u; k >>= 1) {
        if (tid < k) {
            const float v = sh_v[tid + k];
            const uint i = sh_i[tid + k];
            if (i != 0xffffffffu && (sh_i[tid] == 0xffffffffu || v > sh_v[tid] || (v == sh_v[tid] && i < sh_i[tid]))) {
                sh_v[tid] = v;
                sh_i[tid] = i;
            }
        }
        barrier();
    }
    if (tid == 0u) d_w[p.o_d / 4u + r] = (isnan(x_f[xr]) || sh_i[0] == 0xffffffffu) ? 0u : sh_i[0];
}
