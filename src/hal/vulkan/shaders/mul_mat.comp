#version 450
// MUL_MAT, tiled path (prompts): dst [N, M] = W [K, N] x X [K, M] (+ bias [N]).
//
// A workgroup of 64 threads (an 8 x 8 grid) computes a tile of T weight rows
// x T activation rows, each thread (T/8) x (T/8) outputs. K is walked 32
// values at a time; at the start of each activation block (QKA values,
// act.glsl) threads 0..T-1 compute the block's rounding parameters of one
// activation row each.
// Quantized weights (qdot.glsl): the 32 x T weight levels and activation
// levels go to shared memory as integers, with each row's block scales, and
// every output is the CPU's fma chain over its blocks in order (T = 32;
// IQ4_NL keeps 8 lanes per output: T = 16).
// Float weights: the T x 32 dequantized weights and rounded activations go to
// shared memory as floats, each output a float sum (T = 32).
// Weights bound a window of rows at a time as in mul_mat_vec.comp.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, s0, readonly)
BIND_U16(1, s0, readonly)
BIND_F32(2, x, readonly)
BIND_F32(3, b, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_w, o_x, o_b;
    uint K, N, n_base, n_count, M;
    uint x_ne1, x_ne2, x_nb1, x_nb2, x_nb3;
    uint nb_w1, has_bias;
} p;
#include "dequant.glsl"
#include "act.glsl"

#if TYPE == TERN_IQ4_NL
#define T 16
#else
#define T 32
#endif
#define TT (T / 8)   // outputs per thread along each side

uint x_row(uint m) {
    const uint i1 = m % p.x_ne1, i23 = m / p.x_ne1;
    return p.o_x + i1 * p.x_nb1 + (i23 % p.x_ne2) * p.x_nb2 + (i23 / p.x_ne2) * p.x_nb3;
}

#if !ACT_F32 && !ACT_BF16
#include "qdot.glsl"
shared int sh_l[T][33];     // activation levels [m][k]
shared int sh_w[T][33];     // weight levels [n][k]
shared vec4 sh_q[T];        // activation block parameters (id, d, s) per row
shared vec4 sh_p[T];        // weight: (d, m or dmin) per row; K-quants: (sc, min) of the chunk's two groups in zw
#endif
#if ACT_F32 || ACT_BF16
shared float sh_a[T][T + 1];
shared float sh_f[T][T + 1];
#endif

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n0 = gl_WorkGroupID.x * T, m0 = gl_WorkGroupID.y * T;  // n0: row of the window
    const uint tn = (tid % 8u) * TT, tm = (tid / 8u) * TT;            // this thread's outputs
    precise float acc[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) acc[i] = 0.0;
#if !ACT_F32 && !ACT_BF16
#if TYPE == TERN_IQ4_NL
    float lanes[TT * TT * 8];
    [[unroll]] for (uint i = 0u; i < TT * TT * 8u; i++) lanes[i] = 0.0;
#endif
#if !QDOT_LEGACY
    int isum[TT * TT], mins[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) { isum[i] = 0; mins[i] = 0; }
#endif
    for (uint k0 = 0u; k0 < p.K; k0 += 32u) {
        if (k0 % QKA == 0u) {
            if (tid < T && m0 + tid < p.M) {
                const uint at = x_row(m0 + tid) + k0 * 4u;
                const vec2 q = act_params(at);
#if QDOT_AFFINE
                sh_q[tid] = vec4(q, act_s(at, q), 0.0);
#else
                sh_q[tid] = vec4(q, 0.0, 0.0);
#endif
            }
            barrier();
        }
        // this chunk's levels and scales
        const uint blk_i = k0 / QKA, i0 = k0 % QKA;   // block, first value in it
        for (uint i = tid; i < T * 32u; i += 64u) {
            const uint r = i / 32u, k = i % 32u;
            int l = 0, w = 0;
            if (m0 + r < p.M) l = act_level(x_f[(x_row(m0 + r) >> 2) + k0 + k], sh_q[r].xy);
            if (n0 + r < p.n_count) w = wlev(p.o_w + (n0 + r) * p.nb_w1 + blk_i * BLOCK_BYTES, i0 + k);
            sh_l[r][k] = l;
            sh_w[r][k] = w;
        }
        if (tid < T && n0 + tid < p.n_count) {
            const uint blk = p.o_w + (n0 + tid) * p.nb_w1 + blk_i * BLOCK_BYTES;
#if QDOT_LEGACY
#if QDOT_AFFINE
            sh_p[tid] = vec4(wd(blk), wm(blk), 0.0, 0.0);
#else
            sh_p[tid] = vec4(wd(blk), 0.0, 0.0, 0.0);
#endif
#else
            const ivec2 g0 = wscmin(blk, i0 / 16u), g1 = wscmin(blk, i0 / 16u + 1u);
            sh_p[tid] = vec4(intBitsToFloat(g0.x), intBitsToFloat(g0.y), intBitsToFloat(g1.x), intBitsToFloat(g1.y));
#endif
        }
        barrier();
        [[unroll]] for (uint j = 0u; j < TT; j++) {
            [[unroll]] for (uint i = 0u; i < TT; i++) {
                const uint n = tn + i, m = tm + j, o = j * TT + i;
#if QDOT_LEGACY
#if TYPE == TERN_IQ4_NL
                const float dd = sh_p[n].x * sh_q[m].y;
                [[unroll]] for (uint l = 0u; l < 8u; l++) {
                    const int lane = sh_w[n][4u * l] * sh_l[m][4u * l] + sh_w[n][4u * l + 1u] * sh_l[m][4u * l + 1u] +
                                     sh_w[n][4u * l + 2u] * sh_l[m][4u * l + 2u] + sh_w[n][4u * l + 3u] * sh_l[m][4u * l + 3u];
                    lanes[o * 8u + l] = fma(dd, float(lane), lanes[o * 8u + l]);
                }
#else
                int sumi = 0;
                for (uint k = 0u; k < 32u; k++) sumi += sh_w[n][k] * sh_l[m][k];
                acc[o] = fma(float(sumi), sh_p[n].x * sh_q[m].y, acc[o]);
#if QDOT_AFFINE
                acc[o] = fma(sh_p[n].y, sh_q[m].z, acc[o]);
#endif
#endif
#else
                int s0 = 0, s1 = 0, b0 = 0, b1 = 0;
                for (uint k = 0u; k < 16u; k++) {
                    s0 += sh_w[n][k] * sh_l[m][k];
                    b0 += sh_l[m][k];
                    s1 += sh_w[n][k + 16u] * sh_l[m][k + 16u];
                    b1 += sh_l[m][k + 16u];
                }
                const vec4 g = sh_p[n];
                isum[o] += floatBitsToInt(g.x) * s0 + floatBitsToInt(g.z) * s1;
                mins[o] += floatBitsToInt(g.y) * b0 + floatBitsToInt(g.w) * b1;
#endif
            }
        }
#if !QDOT_LEGACY
        if ((k0 + 32u) % QKA == 0u) {   // the super-block is complete: its float steps
            barrier();
            if (tid < T && n0 + tid < p.n_count) {
                const uint blk = p.o_w + (n0 + tid) * p.nb_w1 + blk_i * BLOCK_BYTES;
                sh_p[tid] = vec4(wd(blk), wdmin(blk), 0.0, 0.0);
            }
            barrier();
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) {
                    const uint o = j * TT + i;
                    acc[o] = kstep(acc[o], sh_q[tm + j].y, sh_p[tn + i].x, sh_p[tn + i].y, isum[o], mins[o]);
                    isum[o] = 0;
                    mins[o] = 0;
                }
            }
        }
#endif
        barrier();
    }
#if TYPE == TERN_IQ4_NL
    [[unroll]] for (uint o = 0u; o < TT * TT; o++) {
        const uint b = o * 8u;
        acc[o] = ((lanes[b] + lanes[b + 4u]) + (lanes[b + 2u] + lanes[b + 6u])) +
                 ((lanes[b + 1u] + lanes[b + 5u]) + (lanes[b + 3u] + lanes[b + 7u]));
    }
#endif
#else  // float weights
    for (uint k0 = 0u; k0 < p.K; k0 += T) {
        for (uint i = tid; i < T * T; i += 64u) {
            const uint r = i / T, k = i % T;
            float a = 0.0, w = 0.0;
            if (m0 + r < p.M && k0 + k < p.K) a = act_value(x_f[(x_row(m0 + r) >> 2) + k0 + k], vec2(0.0));
            if (n0 + r < p.n_count && k0 + k < p.K) w = dequant(p.o_w + (n0 + r) * p.nb_w1, k0 + k);
            sh_a[r][k] = a;
            sh_f[r][k] = w;
        }
        barrier();
        for (uint k = 0u; k < T; k++) {   // (unrolling k as well made the SPIR-V 5x larger)
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                const float a = sh_a[tm + j][k];
                [[unroll]] for (uint i = 0u; i < TT; i++) acc[j * TT + i] += sh_f[tn + i][k] * a;
            }
        }
        barrier();
    }
#endif
    [[unroll]] for (uint j = 0u; j < TT; j++) {
        [[unroll]] for (uint i = 0u; i < TT; i++) {
            const uint n = n0 + tn + i, m = m0 + tm + j;
            if (n >= p.n_count || m >= p.M) continue;
            float v = acc[j * TT + i];
            if (p.has_bias != 0u) v += b_f[(p.o_b >> 2) + p.n_base + n];
            d_f[(p.o_d >> 2) + m * p.N + p.n_base + n] = v;
        }
    }
}
