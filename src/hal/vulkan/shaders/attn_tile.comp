#version 450
// ATTN for prompts (n_tokens > 1) with F16 K and V and even head sizes up to
// 128: the semantics of attn.comp (the CPU's: q rounded to fp16, s_j =
// dot(q, k_j) * scale + mask[j], p_j = fp16(e^(s_j - max) / sum), out =
// sum_j p_j v_j over cells with p_j != 0, cells past a token's bound left
// out, a NaN score a NaN row, every cell masked a zero row), computed for a
// tile of TQ tokens of one head per workgroup instead of one token:
//
//   thread (tq, lane) = (tid / L, tid % L): token t0 + tq; for scores it
//   takes cells lane, lane + L, ... of each tile of TC cells, for the output
//   the value pairs lane, lane + L, ... of its token's row.
//   Q's tile, and each cell tile's K (and V), go to shared memory as fp16
//   pairs (exact: q is rounded to fp16 first, the cache is fp16), read once
//   by all TQ tokens where attn.comp read a cell per token.
//   Pass 1 walks the cell tiles for each token's largest score (and NaN)
//   and the sum of e^(s - max) (rescaled as the max grows), pass 2 for the
//   output: scores are recomputed rather than kept (TQ x n_kv floats would not fit).
//   The output is summed over cells in ascending order as in attn.comp; the
//   scores' dot products and the softmax sum are in another order and
//   rounding (the envelope rule is the check, as for every device kernel).
// Shared memory ~14 KiB at HD = 128.
#include "common.glsl"
layout(local_size_x = 128) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, q, readonly)
BIND_U16(2, k, readonly)
BIND_U16(3, v, readonly)
BIND_F32(4, m, readonly)
BIND_U32(5, bnd, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_q, o_k, o_v, o_m, o_b;
    uint hd, hd_v, n_head, group, n_kv;
    uint q_nb1, q_nb2;
    uint k_type, k_nb1, k_nb2;
    uint v_type, v_nb1, v_nb2;
    uint m_nb1, has_mask, b_nb0, has_bounds;
    uint d_nb1, scale;   // scale: float bits
    uint n_tokens;
} p;

#define TQ 16u          // tokens a workgroup
#define L 8u            // threads a token
#define TC 16u          // cells a tile
#define MAX_P 64u       // value pairs a row (head size 128)
#define S (MAX_P + 1u)  // row stride of the shared tiles, in pairs (+1: distinct banks)
shared uint sh_q[TQ * S];
shared uint sh_k[TC * S];
shared uint sh_v[TC * S];
shared float sh_p[TQ * (TC + 1u)];
shared float sh_r[TQ * L];

uint pair16(uint lo, uint hi) { return lo | (hi << 16); }

// The tile of cells c0 .. c0 + TC - 1 of K (and V) into shared memory; cells
// past n_kv as zeros.
void load_tile(uint tid, uint c0, uint hk, bool with_v) {
    const uint hp = p.hd / 2u, hpv = p.hd_v / 2u;
    for (uint i = tid; i < TC * hp; i += 128u) {
        const uint c = i / hp, e2 = i % hp, j = c0 + c;
        uint w = 0u;
        if (j < p.n_kv) {
            const uint at = (p.o_k + hk * p.k_nb1 + j * p.k_nb2) / 2u + 2u * e2;
            w = pair16(uint(k_h[at]), uint(k_h[at + 1u]));
        }
        sh_k[c * S + e2] = w;
    }
    if (with_v) {
        for (uint i = tid; i < TC * hpv; i += 128u) {
            const uint c = i / hpv, e2 = i % hpv, j = c0 + c;
            uint w = 0u;
            if (j < p.n_kv) {
                const uint at = (p.o_v + hk * p.v_nb1 + j * p.v_nb2) / 2u + 2u * e2;
                w = pair16(uint(v_h[at]), uint(v_h[at + 1u]));
            }
            sh_v[c * S + e2] = w;
        }
    }
}

// Score of token tq (bound n, mask row mrow) against cell c of the tile at c0.
float score(uint tq, uint c, uint c0, uint n, uint mrow) {
    const uint j = c0 + c;
    if (j >= n) return -INF;   // past the token's bound: left out
    const float mk = p.has_mask != 0u ? m_f[mrow + j] : 0.0;
    if (mk == -INF) return -INF;
    float s = 0.0;
    const uint hp = p.hd / 2u;
    for (uint e2 = 0u; e2 < hp; e2++) {
        const vec2 a = unpackHalf2x16(sh_q[tq * S + e2]), b = unpackHalf2x16(sh_k[c * S + e2]);
        s = fma(a.x, b.x, s);
        s = fma(a.y, b.y, s);
    }
    return s * uintBitsToFloat(p.scale) + mk;
}

void main() {
    const uint h = gl_WorkGroupID.x, t0 = gl_WorkGroupID.y * TQ, tid = gl_LocalInvocationID.x;
    const uint tq = tid / L, lane = tid % L, t = t0 + tq;
    const uint hk = h / p.group;
    const bool live = t < p.n_tokens;
    uint n = 0u;
    if (live) {
        n = p.n_kv;
        if (p.has_bounds != 0u) n = uint(clamp(int(bnd_w[(p.o_b + t * p.b_nb0) / 4u]), 0, int(p.n_kv)));
    }
    const uint mrow = live ? (p.o_m + t * p.m_nb1) / 4u : 0u;
    // the tile's cells: up to the largest bound of its tokens
    sh_r[tid] = float(n);
    // Q's tile, rounded to fp16
    const uint hp = p.hd / 2u;
    for (uint i = tid; i < TQ * hp; i += 128u) {
        const uint r = i / hp, e2 = i % hp;
        uint w = 0u;
        if (t0 + r < p.n_tokens) {
            const uint at = (p.o_q + h * p.q_nb1 + (t0 + r) * p.q_nb2) / 4u + 2u * e2;
            w = pair16(f32_to_f16_bits(q_f[at]), f32_to_f16_bits(q_f[at + 1u]));
        }
        sh_q[r * S + e2] = w;
    }
    barrier();
    uint n_max = 0u;
    for (uint i = 0u; i < TQ * L; i += L) n_max = max(n_max, uint(sh_r[i]));
    barrier();

    // Pass 1: each token's largest score, whether any is NaN, and the sum of
    // e^(s - max), rescaled when the max grows (the online softmax's sum: the
    // CPU's sum to rounding; a pass of its own cost a third more score work).
    float mx = -INF, sum = 0.0;
    bool nan = false;
    for (uint c0 = 0u; c0 < n_max; c0 += TC) {
        load_tile(tid, c0, hk, false);
        barrier();
        for (uint c = lane; c < TC; c += L) {
            const float s = score(tq, c, c0, n, mrow);
            nan = nan || isnan(s);
            if (s > mx) {
                sum = sum * exp_approx(mx - s) + 1.0;   // (mx -Inf: sum 0 stays 0)
                mx = s;
            } else if (s != -INF) {
                sum += exp_approx(s - mx);
            }
        }
        barrier();
    }
    sh_r[tid] = nan ? INF : mx;   // NaN flagged as +Inf (a finite score never is)
    barrier();
    bool any_nan = false;
    float row_mx = -INF;
    for (uint l = 0u; l < L; l++) {
        const float x = sh_r[tq * L + l];
        any_nan = any_nan || x == INF;
        if (x > row_mx) row_mx = x;
    }
    const bool dead = any_nan || row_mx == -INF;   // decided: NaN, or every cell masked
    barrier();
    sh_r[tid] = dead || mx == -INF ? 0.0 : sum * exp_approx(mx - row_mx);   // this lane's sum at the row's max
    barrier();
    sum = 0.0;
    for (uint l = 0u; l < L; l++) sum += sh_r[tq * L + l];
    mx = row_mx;
    const float inv = 1.0 / sum;
    barrier();

    // Pass 2: out = sum_j p_j v_j, cells in ascending order.
    float acc[2u * MAX_P / L];   // pairs lane, lane + L, ...
    [[unroll]] for (uint i = 0u; i < 2u * MAX_P / L; i++) acc[i] = 0.0;
    const uint hpv = p.hd_v / 2u;
    for (uint c0 = 0u; c0 < n_max; c0 += TC) {
        load_tile(tid, c0, hk, true);
        barrier();
        for (uint c = lane; c < TC; c += L) {
            float pj = 0.0;
            if (!dead) {
                pj = exp_approx(score(tq, c, c0, n, mrow) - mx) * inv;
                pj = f16_round(pj);
            }
            sh_p[tq * (TC + 1u) + c] = pj;
        }
        barrier();
        for (uint c = 0u; c < TC; c++) {
            const float pj = sh_p[tq * (TC + 1u) + c];
            if (pj == 0.0) continue;
            [[unroll]] for (uint i = 0u; i < MAX_P / L; i++) {
                const uint e2 = lane + L * i;
                if (e2 < hpv) {
                    const vec2 vv = unpackHalf2x16(sh_v[c * S + e2]);
                    acc[2u * i] += pj * vv.x;
                    acc[2u * i + 1u] += pj * vv.y;
                }
            }
        }
        barrier();
    }
    if (!live) return;
    const uint out0 = (p.o_d + t * p.d_nb1) / 4u + h * p.hd_v;
    [[unroll]] for (uint i = 0u; i < MAX_P / L; i++) {
        const uint e2 = lane + L * i;
        if (e2 < hpv) {
            const float z = any_nan ? uintBitsToFloat(0x7fc00000u) : 0.0;
            d_f[out0 + 2u * e2] = dead ? z : acc[2u * i];
            d_f[out0 + 2u * e2 + 1u] = dead ? z : acc[2u * i + 1u];
        }
    }
}
