#version 450
// ROPE (cpu/ops/rope.cpp): each pair (x0, x1) of a head rotated by the
// token's (cos, sin) from ROPE_CACHE: (x0 c - x1 s, x0 s + x1 c); normal mode
// pairs (x[i0], x[i0 + 1]), neox (x[i0/2], x[i0/2 + n_rot/2]); dims from n_rot
// on are copied. x [hd, n_head, n_tokens] may be a strided view. One
// workgroup per (head, token), threads over the pairs and the tail.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, x, readonly)
BIND_F32(2, c, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_x, o_c;
    uint hd, n_head, n_rows, n_rot, neox;
    uint x_nb1, x_nb2, c_nb1, d_nb1, d_nb2;
} p;

void main() {
    const uint r = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, tid = gl_LocalInvocationID.x;
    if (r >= p.n_rows) return;
    const uint h = r % p.n_head, t = r / p.n_head;
    const uint xr = (p.o_x + h * p.x_nb1 + t * p.x_nb2) / 4u, dr = (p.o_d + h * p.d_nb1 + t * p.d_nb2) / 4u;
    const uint cr = (p.o_c + t * p.c_nb1) / 4u;
    const uint second = p.neox != 0u ? p.n_rot / 2u : 1u, step = p.neox != 0u ? 1u : 2u;
    for (uint i = tid; i < p.n_rot / 2u; i += 64u) {
        const uint a = i * step;
        const float co = c_f[cr + 2u * i], si = c_f[cr + 2u * i + 1u];
        const float x0 = x_f[xr + a], x1 = x_f[xr + a + second];
        d_f[dr + a] = x0 * co - x1 * si;
        d_f[dr + a + second] = x0 * si + x1 * co;
    }
    for (uint i = p.n_rot + tid; i < p.hd; i += 64u) d_f[dr + i] = x_f[xr + i];
}
