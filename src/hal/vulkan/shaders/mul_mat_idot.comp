#version 450
// MUL_MAT, tiled path with integer dot products: dst [N, M] = W [K, N] x X [K, M]
// (+ bias [N]) for quantized weights but IQ4_NL, on devices that report
// shaderIntegerDotProduct (vk_ops.cpp picks it; `no_int_dot` keeps mul_mat.comp).
//
// The tiles, the activation rounding and the float steps are mul_mat.comp's,
// so the outputs are its outputs (and the CPU's) bit for bit; what differs is
// the integer part. Levels go to shared memory packed four int8 to a word, and
// each 4-value product sum is one OpSDot (SPV_KHR_integer_dot_product, the
// packed 4x8-bit form: dp4a on NVIDIA), where mul_mat.comp does four fp32
// fmas on levels held as floats. The packed words take a quarter of the
// shared memory, so K is walked KC = 32 values at a time (a whole legacy
// block, two K-quant groups): half the barriers. Integer sums are exact in
// any order, as are the float sums they replace.
//
// A workgroup of 256 threads (16 x 16) computes T x T = 64 x 64 outputs,
// thread (tx, ty) the outputs (tx + 16 i, ty + 16 j), i, j < 4. Staging: thread
// (r, q) = (tid / 4, tid % 4) levels values 8 q .. 8 q + 7 of the chunk of
// activation row m0 + r and of weight row n0 + r.
#extension GL_EXT_spirv_intrinsics : require
#include "common.glsl"
layout(local_size_x = 256) in;
#include "mm_common.glsl"
#include "dequant.glsl"
#include "act.glsl"
#include "qdot.glsl"

// OpSDot on two words of four signed 8-bit values (PackedVectorFormat4x8Bit = 0).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot4(uint a, uint b, spirv_literal int packed_format);

#define T 64
#define TT 4                 // outputs per thread along each side
#define KC 32                // values per chunk
#define WS (KC / 4u + 1u)    // words a row in shared memory (+1: distinct banks)
shared uint sh_l[T * WS];    // activation levels [m][word]
shared uint sh_w[T * WS];    // weight levels [n][word]
shared vec4 sh_q[T];         // activation block parameters (id, d, s) per row
shared vec2 sh_seg[T * 4];   // act_scan of each quarter of a row's activation block
shared vec4 sh_p[T];         // weight: (d, m); K-quants: (sc, min) of the chunk's two groups; at a super-block's end (d, dmin)
#if !QDOT_LEGACY
shared int sh_bq[T * 4];     // K-quants: each staging thread's sum of its 8 activation levels
#endif
#include "mm_tile.glsl"

uint pack4(int a, int b, int c, int e) {
    return (uint(a) & 0xffu) | ((uint(b) & 0xffu) << 8) | ((uint(c) & 0xffu) << 16) | (uint(e) << 24);
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n0 = gl_WorkGroupID.x * T, m0 = gl_WorkGroupID.y * T;  // n0: row of the window
    const uint tx = tid % 16u, ty = tid / 16u;
    precise float acc[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) acc[i] = 0.0;
#if !QDOT_LEGACY
    int isum[TT * TT], mins[TT * TT];
    [[unroll]] for (uint i = 0u; i < TT * TT; i++) { isum[i] = 0; mins[i] = 0; }
#endif
    for (uint k0 = 0u; k0 < p.K; k0 += KC) {
        if (k0 % QKA == 0u) tile_act_params(tid, m0, k0);   // the activation blocks' parameters
        const uint blk_i = k0 / QKA, i0 = k0 % QKA;   // block, first value in it
        {   // staging: 8 activation and 8 weight levels a thread, as two words each
            const uint r = tid / 4u, q4 = tid % 4u;
            int la[8], lw[8];
            [[unroll]] for (uint j = 0u; j < 8u; j++) { la[j] = 0; lw[j] = 0; }
            if (m0 + r < p.M) {
                const uint xa = (x_row(m0 + r) >> 2) + k0 + 8u * q4;
                const vec2 q = sh_q[r].xy;
                float xv[8];
                [[unroll]] for (uint j = 0u; j < 8u; j++) xv[j] = x_f[xa + j];
                [[unroll]] for (uint j = 0u; j < 8u; j++) la[j] = act_level(xv[j], q);
            }
            sh_l[r * WS + 2u * q4] = pack4(la[0], la[1], la[2], la[3]);
            sh_l[r * WS + 2u * q4 + 1u] = pack4(la[4], la[5], la[6], la[7]);
#if TYPE == TERN_Q8_0 || TYPE == TERN_Q4_0
            // The levels straight from the block's bytes, two words (wlev's per-value
            // extraction was a third of a chunk's instructions): Q8_0 values
            // 8 q .. 8 q + 7 are bytes 8 q .. 8 q + 7 of qs; Q4_0's are the low (q < 2)
            // or high nibbles of bytes 8 (q % 2) .. + 7, less 8 (the 4-bit value's
            // sign extended into its byte: n ^ 8, with 0xf0 where that has bit 3).
            uint w0 = 0u, w1 = 0u;
            if (n0 + r < p.n_count) {
                const uint hb = ((p.o_w + (n0 + r) * p.nb_w1 + blk_i * BLOCK_BYTES) >> 1) + 1u +
                                (TYPE == TERN_Q8_0 ? 4u * q4 : 4u * (q4 & 1u));   // qs starts at byte 2
                w0 = uint(s0_h[hb]) | (uint(s0_h[hb + 1u]) << 16);
                w1 = uint(s0_h[hb + 2u]) | (uint(s0_h[hb + 3u]) << 16);
#if TYPE == TERN_Q4_0
                const uint sh = 4u * (q4 >> 1);
                w0 = ((w0 >> sh) & 0x0f0f0f0fu) ^ 0x08080808u;
                w1 = ((w1 >> sh) & 0x0f0f0f0fu) ^ 0x08080808u;
                w0 |= (w0 & 0x08080808u) * 0x1eu;
                w1 |= (w1 & 0x08080808u) * 0x1eu;
#endif
            }
            sh_w[r * WS + 2u * q4] = w0;
            sh_w[r * WS + 2u * q4 + 1u] = w1;
#else
            if (n0 + r < p.n_count) {
                const uint blk = p.o_w + (n0 + r) * p.nb_w1 + blk_i * BLOCK_BYTES;
                [[unroll]] for (uint j = 0u; j < 8u; j++) lw[j] = wlev(blk, i0 + 8u * q4 + j);
            }
            sh_w[r * WS + 2u * q4] = pack4(lw[0], lw[1], lw[2], lw[3]);
            sh_w[r * WS + 2u * q4 + 1u] = pack4(lw[4], lw[5], lw[6], lw[7]);
#endif
#if !QDOT_LEGACY
            sh_bq[tid] = ((la[0] + la[1]) + (la[2] + la[3])) + ((la[4] + la[5]) + (la[6] + la[7]));
#endif
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
#if QDOT_LEGACY
        // the block's integer sums, then its float step (mul_mat.comp's)
        int sumi[TT * TT];
        [[unroll]] for (uint o = 0u; o < TT * TT; o++) sumi[o] = 0;
        [[unroll]] for (uint w = 0u; w < KC / 4u; w++) {
            uint wv[TT], av[TT];
            [[unroll]] for (uint i = 0u; i < TT; i++) wv[i] = sh_w[(tx + 16u * i) * WS + w];
            [[unroll]] for (uint j = 0u; j < TT; j++) av[j] = sh_l[(ty + 16u * j) * WS + w];
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                [[unroll]] for (uint i = 0u; i < TT; i++) sumi[j * TT + i] += sdot4(wv[i], av[j], 0);
            }
        }
        [[unroll]] for (uint j = 0u; j < TT; j++) {
            [[unroll]] for (uint i = 0u; i < TT; i++) {
                const uint n = tx + 16u * i, m = ty + 16u * j, o = j * TT + i;
                acc[o] = fma(float(sumi[o]), sh_p[n].x * sh_q[m].y, acc[o]);
#if QDOT_AFFINE
                acc[o] = fma(sh_p[n].y, sh_q[m].z, acc[o]);
#endif
            }
        }
#else
        // the chunk's two groups: integer steps (mul_mat.comp's, a group at a time)
        [[unroll]] for (uint g = 0u; g < 2u; g++) {
            int sub[TT * TT];
            [[unroll]] for (uint o = 0u; o < TT * TT; o++) sub[o] = 0;
            [[unroll]] for (uint w = 4u * g; w < 4u * g + 4u; w++) {
                uint wv[TT], av[TT];
                [[unroll]] for (uint i = 0u; i < TT; i++) wv[i] = sh_w[(tx + 16u * i) * WS + w];
                [[unroll]] for (uint j = 0u; j < TT; j++) av[j] = sh_l[(ty + 16u * j) * WS + w];
                [[unroll]] for (uint j = 0u; j < TT; j++) {
                    [[unroll]] for (uint i = 0u; i < TT; i++) sub[j * TT + i] += sdot4(wv[i], av[j], 0);
                }
            }
            [[unroll]] for (uint j = 0u; j < TT; j++) {
                const uint r4 = 4u * (ty + 16u * j) + 2u * g;
                const int bsum = sh_bq[r4] + sh_bq[r4 + 1u];
                [[unroll]] for (uint i = 0u; i < TT; i++) {
                    const vec4 sp = sh_p[tx + 16u * i];
                    const uint o = j * TT + i;
                    isum[o] += floatBitsToInt(g == 0u ? sp.x : sp.z) * sub[o];
                    mins[o] += floatBitsToInt(g == 0u ? sp.y : sp.w) * bsum;
                }
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
    tile_store(n0, m0, tx, ty, acc);
}
