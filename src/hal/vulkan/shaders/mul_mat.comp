#version 450
// MUL_MAT, tiled path (prompts): dst [N, M] = W [K, N] x X [K, M] (+ bias [N]).
//
// A workgroup of 256 threads (a 16 x 16 grid) computes a tile of T weight
// rows x T activation rows (T = 64; IQ4_NL, which keeps 8 lane sums per
// output, 32), thread (tx, ty) the TT x TT outputs (tx + 16 i, ty + 16 j):
// strided, so the threads of a subgroup read distinct shared rows without
// bank conflicts.
// Quantized weights (qdot.glsl): K is walked KC = 16 values at a time (half
// a 32-value block, one 16-value K-quant group). At the start of each
// activation block (QKA values, act.glsl) four threads a row scan its quarters
// and one joins them into the block's rounding parameters; each chunk's T x 16 weight
// levels and activation levels go to shared memory as floats (vec4: a thread
// reads TT weight and TT activation vec4s and does TT x TT x 4 fmas), with each
// weight row's scales. The level products are integers and every partial sum
// of a block's or group's products stays below 2^24, so the fp32 sums are the
// exact integer sums in any order; every output is then the CPU's fma chain
// over its blocks in order, as in mul_mat_vec.comp.
// Float weights: the T x 16 dequantized weights and rounded activations go to
// shared memory as floats, each output a float sum of fmas.
// Weights bound a window of rows at a time as in mul_mat_vec.comp.
#include "common.glsl"
layout(local_size_x = 256) in;
#include "mm_common.glsl"
#include "dequant.glsl"
#include "act.glsl"

#if TYPE == TERN_IQ4_NL
#define T 32
#else
#define T 64
#endif
#define TT (T / 16)   // outputs per thread along each side

#if !ACT_F32 && !ACT_BF16
#include "qdot.glsl"
#define KC 16               // values per chunk: half a 32-value block, one K-quant group
shared vec4 sh_l[T * 5];    // activation levels of the chunk as floats [m][4 values] (4 + 1 of padding)
shared vec4 sh_w[T * 5];    // weight levels [n][4 values]
shared vec4 sh_q[T];        // activation block parameters (id, d, s) per row
shared vec2 sh_seg[T * 4];  // act_scan of each quarter of a row's activation block: (amax, or Inf if not all finite; its value)
shared vec4 sh_p[T];        // weight: (d, m) per row; K-quants: (sc, min) of the chunk's group; at a super-block's end (d, dmin)
#if !QDOT_LEGACY
shared int sh_bq[T * 4];    // K-quants: the sum of the chunk's activation levels per row, in four quarters
#endif
#else
#define KC 16
shared float sh_a[T][KC + 1];
shared float sh_f[T][KC + 1];
#endif
#include "mm_tile.glsl"

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n0 = gl_WorkGroupID.x * T, m0 = gl_WorkGroupID.y * T;  // n0: row of the window
    const uint tx = tid % 16u, ty = tid / 16u;                        // outputs (tx + 16 i, ty + 16 j)
    precise float acc[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) acc[i] = 0.0;
#if !ACT_F32 && !ACT_BF16
    // integer sums held in fp32: every partial sum of a block's (or group's)
    // level products is an integer below 2^24 (32 x 127 x 127), so exact in any order
    float sumf[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) sumf[i] = 0.0;
#if TYPE == TERN_IQ4_NL
    float lanes[TT * TT * 8];
    [[unroll]] for (uint i = 0u; i < TT * TT * 8u; i++) lanes[i] = 0.0;
#endif
#if !QDOT_LEGACY
    int isum[TT * TT], mins[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) { isum[i] = 0; mins[i] = 0; }
#endif
    for (uint k0 = 0u; k0 < p.K; k0 += KC) {
        if (k0 % QKA == 0u) tile_act_params(tid, m0, k0);   // the activation blocks' parameters
        // this chunk's levels (4 weight and 4 activation values per thread) and scales
        const uint blk_i = k0 / QKA, i0 = k0 % QKA;   // block, first value in it
        {
            const uint r = tid / 4u, w = tid % 4u;      // T * KC / 4 = 256 words: one a thread (T = 64)
            if (r < T) {
                vec4 l = vec4(0.0), wv = vec4(0.0);
                if (m0 + r < p.M) {
                    const uint xa = (x_row(m0 + r) >> 2) + k0 + 4u * w;
                    const vec2 q = sh_q[r].xy;
                    [[unroll]] for (uint j = 0u; j < 4u; j++) l[j] = float(act_level(x_f[xa + j], q));
                }
#if !QDOT_LEGACY
                // the group's level sum (bsum) in quarters: integers, exact in any order
                sh_bq[r * 4u + w] = int(l.x + l.y + l.z + l.w);
#endif
                if (n0 + r < p.n_count) {
                    const uint blk = p.o_w + (n0 + r) * p.nb_w1 + blk_i * BLOCK_BYTES;
                    [[unroll]] for (uint j = 0u; j < 4u; j++) wv[j] = float(wlev(blk, i0 + 4u * w + j));
                }
                sh_l[r * 5u + w] = l;
                sh_w[r * 5u + w] = wv;
            }
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
            const ivec2 g = wscmin(blk, i0 / 16u);
            sh_p[tid] = vec4(intBitsToFloat(g.x), intBitsToFloat(g.y), 0.0, 0.0);
#endif
        }
        barrier();
        [[unroll]] for (uint w = 0u; w < KC / 4u; w++) {
            vec4 wv[TT], av[TT];
            [[unroll]] for (uint i = 0u; i < TT; i++) wv[i] = sh_w[(tx + 16u * i) * 5u + w];
            [[unroll]] for (uint j = 0u; j < TT; j++) av[j] = sh_l[(ty + 16u * j) * 5u + w];
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) {
#if TYPE == TERN_IQ4_NL
                    // lane i0 / 4 + w: values 4 lane .. 4 lane + 3 of the block (two
                    // branches keep the lane index constant: lanes stay registers)
                    const uint o = j * TT + i;
                    const float dd = sh_p[tx + 16u * i].x * sh_q[ty + 16u * j].y, s4 = dot(wv[i], av[j]);
                    if (i0 == 0u) lanes[o * 8u + w] = fma(dd, s4, lanes[o * 8u + w]);
                    else lanes[o * 8u + 4u + w] = fma(dd, s4, lanes[o * 8u + 4u + w]);
#else
                    sumf[j * TT + i] += dot(wv[i], av[j]);
#endif
                }
            }
        }
#if QDOT_LEGACY && TYPE != TERN_IQ4_NL
        if (i0 + KC == 32u) {   // the block is complete: its float step
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) {
                    const uint n = tx + 16u * i, m = ty + 16u * j, o = j * TT + i;
                    acc[o] = fma(sumf[o], sh_p[n].x * sh_q[m].y, acc[o]);
#if QDOT_AFFINE
                    acc[o] = fma(sh_p[n].y, sh_q[m].z, acc[o]);
#endif
                    sumf[o] = 0.0;
                }
            }
        }
#elif !QDOT_LEGACY
        int bsum[TT];   // the group's activation level sums of this thread's rows
        [[unroll]] for (uint j = 0u; j < TT; j++) {
            const uint r4 = 4u * (ty + 16u * j);
            bsum[j] = sh_bq[r4] + sh_bq[r4 + 1u] + sh_bq[r4 + 2u] + sh_bq[r4 + 3u];
        }
        [[unroll]] for (uint j = 0u; j < TT; j++) {   // the group's integer steps
            [[unroll]] for (uint i = 0u; i < TT; i++) {
                const vec4 g = sh_p[tx + 16u * i];
                const uint o = j * TT + i;
                isum[o] += floatBitsToInt(g.x) * int(sumf[o]);
                mins[o] += floatBitsToInt(g.y) * bsum[j];
                sumf[o] = 0.0;
            }
        }
        if (i0 + KC == QKA) {   // the super-block is complete: its float steps
            barrier();
            if (tid < T && n0 + tid < p.n_count) {
                const uint blk = p.o_w + (n0 + tid) * p.nb_w1 + blk_i * BLOCK_BYTES;
                sh_p[tid] = vec4(wd(blk), wdmin(blk), 0.0, 0.0);
            }
            barrier();
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) {
                    const uint o = j * TT + i;
                    acc[o] = kstep(acc[o], sh_q[ty + 16u * j].y, sh_p[tx + 16u * i].x, sh_p[tx + 16u * i].y, isum[o], mins[o]);
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
    for (uint k0 = 0u; k0 < p.K; k0 += KC) {
        for (uint i = tid; i < T * KC; i += 256u) {
            const uint r = i / KC, k = i % KC;
            float a = 0.0, w = 0.0;
            if (m0 + r < p.M && k0 + k < p.K) a = act_value(x_f[(x_row(m0 + r) >> 2) + k0 + k], vec2(0.0));
            if (n0 + r < p.n_count && k0 + k < p.K) w = dequant(p.o_w + (n0 + r) * p.nb_w1, k0 + k);
            sh_a[r][k] = a;
            sh_f[r][k] = w;
        }
        barrier();
        for (uint k = 0u; k < KC; k++) {
            float a[TT], w[TT];
            [[unroll]] for (uint j = 0u; j < TT; j++) a[j] = sh_a[ty + 16u * j][k];
            [[unroll]] for (uint i = 0u; i < TT; i++) w[i] = sh_f[tx + 16u * i][k];
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) acc[j * TT + i] = fma(w[i], a[j], acc[j * TT + i]);
            }
        }
        barrier();
    }
#endif
    tile_store(n0, m0, tx, ty, acc);
}
