#version 450
// ATTN (cpu/ops/attn.cpp): softmax(scale * q k^T + mask) v for one (query
// head h, token t) per workgroup of 64 threads, llama.cpp's non-flash
// semantics as the CPU computes them:
//   q16 = fp16(q) with an F16 K; s_j = dot(q, k_j) * scale + mask[j] (a cell
//   whose mask is -inf scores -inf whatever its dot); p_j = e^(s_j - max) /
//   sum (exp_approx); with an F16 V p_j is rounded to fp16; out = sum_j p_j v_j
//   over cells with p_j != 0. A NaN score gives a NaN row, every cell masked a
//   zero row. GQA: head h reads KV head h / group.
// Cells: [0, n) with n = bounds[t] (one past the token's last visible cell)
// clamped to n_kv, or n_kv without bounds. K and V: F32 or F16 views
// [hd, n_head_kv, n_kv] (nb1 head stride, nb2 cell stride), or Q8_0 / Q4_0
// caches [n_embd_gqa, n_kv] (nb1 row stride; a head's slice at hk * hd values).
//
// Three passes over the cells (max, sum, output), threads over cells for the
// scores and over output dims for the V sum. Up to CAP cells the scores are
// computed once and kept in shared memory; past that each pass recomputes them
// a chunk of CAP cells at a time (shared memory stays under 16 KiB for any
// context: CAP 2048 floats, q up to 512 values).
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, q, readonly)
BIND_F32(2, k, readonly)
BIND_U16(2, k, readonly)
BIND_F32(3, v, readonly)
BIND_U16(3, v, readonly)
BIND_F32(4, m, readonly)
BIND_U32(5, bnd, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_q, o_k, o_v, o_m, o_b;
    uint hd, hd_v, n_head, group, n_kv;
    uint q_nb1, q_nb2;
    uint k_type, k_nb1, k_nb2;   // k_type, v_type: as KTYPE, VTYPE (for messages)
    uint v_type, v_nb1, v_nb2;
    uint m_nb1, has_mask, b_nb0, has_bounds;
    uint d_nb1, scale;   // scale: float bits
} p;

#define CAP 2048u
#define MAX_HD 512u
shared float sh_s[CAP];
shared float sh_q[MAX_HD];
shared float sh_r[64];
shared uint sh_nan;

// Element e of cell j's head hk in a cache of type ty (KTYPE, VTYPE: compile-time, so
// the shader holds one path; a branch on a push constant costs every path on
// devices that run it under an execution mask, lavapipe among them).
#define CACHE_ELEM(NAME, ty, nb1, nb2, o, buf)                                                   \
    float NAME(uint j, uint hk, uint e, uint hsz) {                                            \
        if (ty == TERN_F32) return buf##_f[(o + hk * nb1 + j * nb2) / 4u + e];                  \
        if (ty == TERN_F16) return f16_bits_to_f32(uint(buf##_h[(o + hk * nb1 + j * nb2) / 2u + e])); \
        const uint g = hk * hsz + e, row = o + j * nb1;                                         \
        if (ty == TERN_Q8_0) {                                                                  \
            const uint blk = row + 34u * (g >> 5), at = blk + 2u + (g & 31u);                  \
            const uint b8 = (uint(buf##_h[at >> 1]) >> ((at & 1u) * 8u)) & 0xffu;             \
            return f16_bits_to_f32(uint(buf##_h[blk >> 1])) * float(int(b8 << 24) >> 24);      \
        }                                                                                       \
        const uint blk = row + 18u * (g >> 5), i = g & 31u, at = blk + 2u + (i & 15u);         \
        const uint b8 = (uint(buf##_h[at >> 1]) >> ((at & 1u) * 8u)) & 0xffu;                 \
        return f16_bits_to_f32(uint(buf##_h[blk >> 1])) * (float((b8 >> ((i >> 4) * 4u)) & 15u) - 8.0); \
    }
CACHE_ELEM(k_elem, KTYPE, p.k_nb1, p.k_nb2, p.o_k, k)
CACHE_ELEM(v_elem, VTYPE, p.v_nb1, p.v_nb2, p.o_v, v)

float score(uint j, uint hk, uint t) {
    const float mk = p.has_mask != 0u ? m_f[(p.o_m + t * p.m_nb1) / 4u + j] : 0.0;
    if (mk == -INF) return -INF;
    float s = 0.0;
    for (uint e = 0u; e < p.hd; e++) s += sh_q[e] * k_elem(j, hk, e, p.hd);
    return s * uintBitsToFloat(p.scale) + mk;
}

void main() {
    const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
    const uint hk = h / p.group;
    uint n = p.n_kv;
    if (p.has_bounds != 0u) n = uint(clamp(int(bnd_w[(p.o_b + t * p.b_nb0) / 4u]), 0, int(p.n_kv)));
    const bool one_chunk = n <= CAP;
    const uint out0 = (p.o_d + t * p.d_nb1) / 4u + h * p.hd_v;
    const uint q0 = (p.o_q + h * p.q_nb1 + t * p.q_nb2) / 4u;
    for (uint e = tid; e < p.hd; e += 64u) sh_q[e] = KTYPE == TERN_F16 ? f16_round(q_f[q0 + e]) : q_f[q0 + e];
    if (tid == 0u) sh_nan = 0u;
    barrier();

    // Pass 1: the largest score (and whether any is NaN).
    float mx = -INF;
    bool nan = false;
    for (uint j = tid; j < n; j += 64u) {
        const float s = score(j, hk, t);
        if (one_chunk) sh_s[j] = s;
        nan = nan || isnan(s);
        if (s > mx) mx = s;
    }
    if (nan) atomicOr(sh_nan, 1u);
    sh_r[tid] = mx;
    barrier();
    for (uint k2 = 32u; k2 > 0u; k2 >>= 1) {
        if (tid < k2) sh_r[tid] = max(sh_r[tid], sh_r[tid + k2]);
        barrier();
    }
    mx = sh_r[0];
    const bool any_nan = sh_nan != 0u;
    barrier();
    if (any_nan || mx == -INF) {  // decided: NaN, or every cell masked
        for (uint e = tid; e < p.hd_v; e += 64u) d_f[out0 + e] = any_nan ? uintBitsToFloat(0x7fc00000u) : 0.0;
        return;
    }

    // Pass 2: the sum of e^(s - max).
    float sum = 0.0;
    for (uint j = tid; j < n; j += 64u) {
        const float e = exp_approx((one_chunk ? sh_s[j] : score(j, hk, t)) - mx);
        if (one_chunk) sh_s[j] = e;
        sum += e;
    }
    sh_r[tid] = sum;
    barrier();
    for (uint k2 = 32u; k2 > 0u; k2 >>= 1) {
        if (tid < k2) sh_r[tid] += sh_r[tid + k2];
        barrier();
    }
    const float inv = 1.0 / sh_r[0];

    // Pass 3: out = sum_j p_j v_j, a chunk of cells at a time.
    float acc[8];   // output dims tid, tid + 64, ... (hd_v <= 512)
    [[unroll]] for (uint i = 0u; i < 8u; i++) acc[i] = 0.0;
    for (uint c0 = 0u; c0 < n; c0 += CAP) {
        const uint c1 = min(n, c0 + CAP);
        if (!one_chunk) {
            barrier();
            for (uint j = c0 + tid; j < c1; j += 64u) sh_s[j - c0] = exp_approx(score(j, hk, t) - mx);
        }
        barrier();
        for (uint j = c0; j < c1; j++) {
            float pj = sh_s[j - c0] * inv;
            if (VTYPE == TERN_F16) pj = f16_round(pj);
            if (pj == 0.0) continue;
            [[unroll]] for (uint i = 0u; i < 8u; i++) {
                const uint e = tid + 64u * i;
                if (e < p.hd_v) acc[i] += pj * v_elem(j, hk, e, p.hd_v);
            }
        }
    }
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        const uint e = tid + 64u * i;
        if (e < p.hd_v) d_f[out0 + e] = acc[i];
    }
}
