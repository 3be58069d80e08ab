#version 450
// MUL_MAT, matrix-vector path (decode: M <= MAX_M activation rows):
// dst [N, M] = W [K, N] x X [K, M] (+ bias [N]).
//
// Quantized weights: a workgroup of 128 threads computes R = 8 weight rows,
// walking K in chunks of CB blocks (32 of 32 values; IQ4_NL 16; K-quants 4
// super-blocks of 256), each chunk in three phases between barriers:
//  1. quantize: the chunk of each activation row becomes int8 levels packed
//     four to a uint in shared memory, with each block's (id, d, s): once per
//     workgroup and chunk, not once per weight row (act.glsl's rounding); four
//     threads a 32-value block (scans of 8 joined in order: the same (id, d)),
//     not one: on an H100 that took legacy-type decode from ~190 to ~265 t/s
//     (tinyllama Q4_0) and ~230 to ~315 (qwen2.5-0.5b Q4_0);
//  2. items: a thread per (weight row, block) (K-quants: per quarter of a
//     super-block), adjacent threads on adjacent blocks of one row, so a
//     subgroup reads a row's bytes contiguously (16-bit loads: every block
//     field sits at an even offset). Each item forms the block's exact integer
//     sums against every activation row and stores them with the float
//     factors of its step in shared memory;
//  3. chain: a thread per output (R x MAX_M) takes the chunk's steps in block
//     order: acc = fma(sumi, d_w * d_a, acc) (qdot.glsl), the CPU's float
//     chain, so the outputs are the CPU's bit for bit (a differing float order
//     moves activation levels of the next layer: qdot.glsl). The chain is a
//     few fmas a block against phase 2's unpacking and multiplies; the weight
//     reads, the cost that matters, are coalesced.
// Shared memory: at most ~11 KiB (IQ4_NL), under the portable 16 KiB.
// Float weights (F32, F16, BF16): NR = 4 rows per workgroup, thread t
// summing elements t, t + 64, ... of each row (coalesced), then a tree
// reduction per output.
// Weights bound a window of rows at a time (n_base: the window's first row)
// when W is larger than one binding.
#include "common.glsl"
#include "mm_common.glsl"
#include "dequant.glsl"
#include "act.glsl"

#define MAX_M 2

#if !ACT_F32 && !ACT_BF16
#include "qdot.glsl"
#define WG 128u  // threads: 2 items each a chunk, more loads in flight than 64 threads of 4
layout(local_size_x = WG) in;

// R weight rows per workgroup; K in chunks of CB blocks (CB * QKA values).
#define R 8
#if TYPE == TERN_IQ4_NL
#define CB 16
#define P 1
#define RES 9      // 8 lane sums, d_w * d_a
#elif QDOT_LEGACY && QDOT_AFFINE
#define CB 32
#define P 1
#define RES 4      // sumi, d_w * d_a, m_w, s_a
#elif QDOT_LEGACY
#define CB 32
#define P 1
#define RES 2      // sumi, d_w * d_a
#else
#define CB 4
#define P 4        // a super-block's 16 groups in 4 parts of 4 groups (64 values)
#define RES 11     // (isum, mins) of each part, d_a, d_w, dmin_w
#endif
#define WORDS (CB * QKA / 4)   // packed levels of one activation row's chunk

shared uint sh_lev[MAX_M * WORDS];           // activation levels, 4 int8 a word, value i in byte i % 4
shared vec4 sh_q[MAX_M * CB];                // (id, d, s) per activation block of the chunk
#if QKA == 256
shared vec4 sh_seg[MAX_M * CB * 8];          // (amax, value of it, finite) per 32 values
shared vec4 sh_seg8[MAX_M * CB * 32];        // ... per 8 values
shared int sh_lsum[MAX_M * CB * 32];         // the sum of each 8 values' levels (two a 16-value group's bsum)
#else
shared vec4 sh_seg[MAX_M * CB * 4];          // (amax, value of it, finite) per 8 values
#endif
shared uint sh_res[R * MAX_M * CB * RES];    // per (row, activation row, block): the chain's inputs
#if TYPE == TERN_IQ4_NL
shared int sh_kv[16];
#endif

int lev(uint m, uint c, uint i) {   // activation level i of block c of the chunk, row m
    return bitfieldExtract(int(sh_lev[m * WORDS + c * (QKA / 4) + (i >> 2)]), int(8u * (i & 3u)), 8);
}

// Phase 1: the chunk's activation blocks c0 .. c0 + nc - 1 as levels and
// parameters, exactly as act.glsl's act_params / act_s / act_level give them.
void quantize(uint tid, uint c0, uint nc) {
    // A thread scans 8 values (loads issued together) and keeps them in
    // registers for their levels: at most MAX_M * CB * 4 (K-quants MAX_M * CB * 32)
    // pieces of 8, two a thread.
    float xv[2][8];
#if QKA == 32
    // four threads per block: scans of 8 values, joined in order (act_join: the
    // one-thread result exactly), then each thread writes its 8 levels
    const uint n_seg = p.M * nc * 4u;
    [[unroll]] for (uint k = 0u; k < 2u; k++) {
        const uint idx = tid + k * WG;
        if (idx < n_seg) {
            const uint m = idx / (nc * 4u), sg = idx % (nc * 4u), at = (x_row(m) >> 2) + c0 * 32u + sg * 8u;
            [[unroll]] for (uint u = 0u; u < 8u; u++) xv[k][u] = x_f[at + u];
            sh_seg[m * CB * 4u + sg] = vec4(act_scan8(xv[k]), 0.0);
        }
    }
    barrier();
    [[unroll]] for (uint k = 0u; k < 2u; k++) {
        const uint idx = tid + k * WG;
        if (idx >= n_seg) continue;
        const uint m = idx / (nc * 4u), c = (idx % (nc * 4u)) / 4u, part = idx % 4u;
        const uint sg = m * CB * 4u + c * 4u;
        const vec3 sc = act_join(act_join(act_join(sh_seg[sg].xyz, sh_seg[sg + 1u].xyz), sh_seg[sg + 2u].xyz), sh_seg[sg + 3u].xyz);
        const vec2 q = act_params_of(sc);
        if (part == 0u) {
#if QDOT_AFFINE
            sh_q[m * CB + c] = vec4(q, act_s(x_row(m) + (c0 + c) * 128u, q), 0.0);
#else
            sh_q[m * CB + c] = vec4(q, 0.0, 0.0);
#endif
        }
        [[unroll]] for (uint h = 0u; h < 2u; h++) {   // words 2 part + h of the block: values 4 h + j of the piece
            uint packed = 0u;
            [[unroll]] for (uint j = 0u; j < 4u; j++) packed |= (uint(act_level(xv[k][4u * h + j], q)) & 0xffu) << (8u * j);
            sh_lev[m * WORDS + c * 8u + 2u * part + h] = packed;
        }
    }
    barrier();
#else
    // scans of 8 values (a thread scanning 32 waited on 32 loads, ~2x the
    // legacy types' decode time on an H100), joined in order four at a time
    // into 32-value segments, and those per super-block
    const uint n_seg = p.M * nc * 32u;
    [[unroll]] for (uint k = 0u; k < 2u; k++) {
        const uint idx = tid + k * WG;
        if (idx < n_seg) {
            const uint m = idx / (nc * 32u), sg = idx % (nc * 32u), at = (x_row(m) >> 2) + c0 * 256u + sg * 8u;
            [[unroll]] for (uint u = 0u; u < 8u; u++) xv[k][u] = x_f[at + u];
            sh_seg8[m * CB * 32u + sg] = vec4(act_scan8(xv[k]), 0.0);
        }
    }
    barrier();
    for (uint idx = tid; idx < p.M * nc * 8u; idx += WG) {
        const uint m = idx / (nc * 8u), sg = idx % (nc * 8u), b8 = m * CB * 32u + 4u * sg;
        const vec3 sc = act_join(act_join(act_join(sh_seg8[b8].xyz, sh_seg8[b8 + 1u].xyz), sh_seg8[b8 + 2u].xyz), sh_seg8[b8 + 3u].xyz);
        sh_seg[m * CB * 8u + sg] = vec4(sc, 0.0);
    }
    barrier();
    for (uint idx = tid; idx < p.M * nc; idx += WG) {
        const uint m = idx / nc, c = idx % nc;
        vec3 sc = sh_seg[m * CB * 8u + c * 8u].xyz;
        for (uint s = 1u; s < 8u; s++) sc = act_join(sc, sh_seg[m * CB * 8u + c * 8u + s].xyz);
        sh_q[m * CB + c] = vec4(act_params_of(sc), 0.0, 0.0);
    }
    barrier();
    [[unroll]] for (uint k = 0u; k < 2u; k++) {   // each piece's levels: words 2 sg, 2 sg + 1 of the row's chunk
        const uint idx = tid + k * WG;
        if (idx >= n_seg) continue;
        const uint m = idx / (nc * 32u), sg = idx % (nc * 32u);
        const vec2 q = sh_q[m * CB + sg / 32u].xy;
        int lsum = 0;
        [[unroll]] for (uint h = 0u; h < 2u; h++) {
            uint packed = 0u;
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                const int l = act_level(xv[k][4u * h + j], q);
                lsum += l;
                packed |= (uint(l) & 0xffu) << (8u * j);
            }
            sh_lev[m * WORDS + 2u * sg + h] = packed;
        }
        sh_lsum[m * CB * 32u + sg] = lsum;   // once here, not once per weight row
    }
    barrier();
#endif
}

// Phase 2, one item: weight row r's block c (part pt of it) against every
// activation row: integer sums exact, the float factors as qdot.glsl takes them.
#if QDOT_LEGACY
#define HW (BLOCK_BYTES / 2u)   // 16-bit halves of a block
#define IPT 2u                  // items a thread a chunk: R * CB * P / WG
// The block at byte blk as 16-bit halves (blk is even: every block size and
// field offset is), loaded before phase 1 so that the weights' memory latency
// passes during the quantize phase's barriers.
void load_block(uint blk, out uint rw[HW]) {
    [[unroll]] for (uint h = 0u; h < HW; h++) rw[h] = uint(s0_h[(blk >> 1) + h]);
}
void dot_item(uint r, uint c, uint pt, uint rw[HW]) {
#else
void dot_item(uint r, uint c, uint pt, uint blk) {
#endif
    const uint res = (r * MAX_M * CB + c) * RES;   // + m * CB * RES
#if QDOT_LEGACY
    // the block's 32 weight levels
    int wl[32];
#if TYPE == TERN_Q8_0
    [[unroll]] for (uint k = 0u; k < 16u; k++) {
        const int h = int(rw[1u + k]);
        wl[2u * k] = bitfieldExtract(h, 0, 8);
        wl[2u * k + 1u] = bitfieldExtract(h, 8, 8);
    }
#else
#if TYPE == TERN_Q5_0 || TYPE == TERN_Q5_1
    const uint qh0 = TYPE == TERN_Q5_0 ? 1u : 2u;
    const uint qh = rw[qh0] | (rw[qh0 + 1u] << 16);
    const uint qs0 = qh0 + 2u;
#else
    const uint qs0 = TYPE == TERN_Q4_1 ? 2u : 1u;
#endif
    [[unroll]] for (uint k = 0u; k < 8u; k++) {   // bytes 2k, 2k + 1 of qs: values 2k, 2k + 1 (low nibbles), 2k + 16, 2k + 17
        const uint h = rw[qs0 + k];
        uint v[4] = uint[4](h & 15u, (h >> 8) & 15u, (h >> 4) & 15u, (h >> 12) & 15u);
        const uint at[4] = uint[4](2u * k, 2u * k + 1u, 2u * k + 16u, 2u * k + 17u);
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
#if TYPE == TERN_Q4_0
            wl[at[j]] = int(v[j]) - 8;
#elif TYPE == TERN_Q4_1
            wl[at[j]] = int(v[j]);
#elif TYPE == TERN_IQ4_NL
            wl[at[j]] = sh_kv[v[j]];
#elif TYPE == TERN_Q5_0
            wl[at[j]] = int(v[j] | (((qh >> at[j]) & 1u) << 4)) - 16;
#else
            wl[at[j]] = int(v[j] | (((qh >> at[j]) & 1u) << 4));
#endif
        }
    }
#endif
    const float dw = f16_bits_to_f32(rw[0]);
    [[unroll]] for (uint m = 0u; m < MAX_M; m++) {
        if (m >= p.M) break;
        const vec4 q = sh_q[m * CB + c];
        const uint o = res + m * CB * RES;
#if TYPE == TERN_IQ4_NL
        [[unroll]] for (uint l = 0u; l < 8u; l++) {
            int lane = 0;
            [[unroll]] for (uint i = 4u * l; i < 4u * l + 4u; i++) lane += wl[i] * lev(m, c, i);
            sh_res[o + l] = floatBitsToUint(float(lane));
        }
        sh_res[o + 8u] = floatBitsToUint(dw * q.y);
#else
        int sumi = 0;
        [[unroll]] for (uint i = 0u; i < 32u; i++) sumi += wl[i] * lev(m, c, i);
        sh_res[o] = floatBitsToUint(float(sumi));
        sh_res[o + 1u] = floatBitsToUint(dw * q.y);
#if QDOT_AFFINE
        sh_res[o + 2u] = floatBitsToUint(f16_bits_to_f32(rw[1]));
        sh_res[o + 3u] = floatBitsToUint(q.z);
#endif
#endif
    }
#else  // K-quants: groups 4 pt .. 4 pt + 3 of the super-block (values 64 pt .. 64 pt + 63)
#if TYPE == TERN_Q4_K || TYPE == TERN_Q5_K || TYPE == TERN_Q6_K
    // the part's 64 weight levels from 16-bit halves: value 64 pt + 32 u + l of
    // Q4_K / Q5_K is nibble u of qs[32 pt + l] (Q5_K: bit 2 pt + u of qh[l] on top);
    // of Q6_K (h = pt / 2, s = 2 (pt % 2) + u) nibble pt % 2 of ql[64 h + 32 u + l]
    // with bits 2 s of qh[32 h + l] on top (dequant.glsl's layouts)
    const uint hb = blk >> 1;
    int wl[64];
    [[unroll]] for (uint k = 0u; k < 16u; k++) {   // l = 2k, 2k + 1
#if TYPE == TERN_Q6_K
        const uint qh = uint(s0_h[hb + 64u + 16u * (pt >> 1) + k]);
        [[unroll]] for (uint u = 0u; u < 2u; u++) {
            const uint ql = uint(s0_h[hb + 32u * (pt >> 1) + 16u * u + k]) >> (4u * (pt & 1u));
            const uint sh = 2u * (2u * (pt & 1u) + u);
            wl[32u * u + 2u * k] = int((ql & 15u) | (((qh >> sh) & 3u) << 4)) - 32;
            wl[32u * u + 2u * k + 1u] = int(((ql >> 8) & 15u) | (((qh >> (sh + 8u)) & 3u) << 4)) - 32;
        }
#else
        const uint h = uint(s0_h[hb + (TYPE == TERN_Q4_K ? 8u : 24u) + 16u * pt + k]);
        wl[2u * k] = int(h & 15u);
        wl[2u * k + 1u] = int((h >> 8) & 15u);
        wl[32u + 2u * k] = int((h >> 4) & 15u);
        wl[33u + 2u * k] = int((h >> 12) & 15u);
#if TYPE == TERN_Q5_K
        const uint qh = uint(s0_h[hb + 8u + k]) >> (2u * pt);
        wl[2u * k] |= int((qh & 1u) << 4);
        wl[2u * k + 1u] |= int(((qh >> 8) & 1u) << 4);
        wl[32u + 2u * k] |= int(((qh >> 1) & 1u) << 4);
        wl[33u + 2u * k] |= int(((qh >> 9) & 1u) << 4);
#endif
#endif
    }
#endif
    [[unroll]] for (uint m = 0u; m < MAX_M; m++) {
        if (m >= p.M) break;
        const uint o = res + m * CB * RES;
        int isum = 0, mins = 0;
        [[unroll]] for (uint g = 0u; g < 4u; g++) {
            const uint j = 4u * pt + g;
            int sub = 0;
            const int bsum = sh_lsum[m * CB * 32u + c * 32u + 2u * j] + sh_lsum[m * CB * 32u + c * 32u + 2u * j + 1u];
            [[unroll]] for (uint i = 0u; i < 16u; i++) {
                const int l = lev(m, c, 16u * j + i);
#if TYPE == TERN_Q4_K || TYPE == TERN_Q5_K || TYPE == TERN_Q6_K
                sub += wl[16u * g + i] * l;
#else
                sub += wlev(blk, 16u * j + i) * l;
#endif
            }
            const ivec2 sm = wscmin(blk, j);
            isum += sm.x * sub;
            mins += sm.y * bsum;
        }
        sh_res[o + 2u * pt] = uint(isum);
        sh_res[o + 2u * pt + 1u] = uint(mins);
        if (pt == 0u) {
            sh_res[o + 8u] = floatBitsToUint(sh_q[m * CB + c].y);
            sh_res[o + 9u] = floatBitsToUint(wd(blk));
            sh_res[o + 10u] = floatBitsToUint(wdmin(blk));
        }
    }
#endif
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * R;   // window row
    if (r0 >= p.n_count) return;   // past the last row (groups spread over x and y): the whole workgroup
    const uint nr = min(R, p.n_count - r0);
    const uint n_blocks = p.K / QKA;
#if TYPE == TERN_IQ4_NL
    if (tid < 16u) {
        const int kvalues[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
        sh_kv[tid] = kvalues[tid];
    }
    float lanes[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
#endif
    // Phase 3's chain: thread t < R * MAX_M owns output (row t / MAX_M, activation row t % MAX_M)
    const uint cr = tid / MAX_M, cm = tid % MAX_M;
    const bool chain = tid < R * MAX_M && cr < nr && cm < p.M;
    precise float acc = 0.0;
    uint touched = 0u;   // K-quants: the words touched ahead (below)
    for (uint c0 = 0u; c0 < n_blocks; c0 += CB) {
        const uint nc = min(CB, n_blocks - c0);
#if QDOT_LEGACY
        // items (row, block), adjacent threads on adjacent blocks of a row: coalesced reads
        uint rw[IPT][HW];
        [[unroll]] for (uint k = 0u; k < IPT; k++) {
            const uint it = tid + k * WG, r = it / nc, c = it % nc;
            if (it < nr * nc) load_block(p.o_w + (r0 + r) * p.nb_w1 + (c0 + c) * BLOCK_BYTES, rw[k]);
        }
        quantize(tid, c0, nc);
        [[unroll]] for (uint k = 0u; k < IPT; k++) {
            const uint it = tid + k * WG;
            if (it < nr * nc) dot_item(it / nc, it % nc, 0u, rw[k]);
        }
#else
        // Touch the first and last word of each item's quarter of its super-block
        // before the quantize phase: every 128-byte line of the chunk's weights
        // is then on its way while the activations are quantized (the items read
        // them afterwards, scattered over the super-block; an H100 took ~20 us a
        // Q4_K decode product against ~14 for Q4_0 without this). The words go into
        // `touched` after the chain and are tested at the end, so they are neither
        // dropped nor waited for.
        // (R * CB * P = WG items: one a thread.)
        uint ahead0 = 0u, ahead1 = 0u;
        if (tid < nr * nc * P) {
            const uint r = tid / (nc * P), c = (tid / P) % nc, pt = tid % P;
            const uint at = p.o_w + (r0 + r) * p.nb_w1 + (c0 + c) * BLOCK_BYTES + pt * (BLOCK_BYTES / P);
            ahead0 = floatBitsToUint(s0_f[at >> 2]);
            ahead1 = floatBitsToUint(s0_f[(at + BLOCK_BYTES / P - 4u) >> 2]);
        }
        quantize(tid, c0, nc);
        // items (row, block, part), adjacent threads on adjacent blocks of a row: coalesced reads
        for (uint it = tid; it < nr * nc * P; it += WG) {
            const uint r = it / (nc * P), c = (it / P) % nc, pt = it % P;
            dot_item(r, c, pt, p.o_w + (r0 + r) * p.nb_w1 + (c0 + c) * BLOCK_BYTES);
        }
#endif
        barrier();
        if (chain) {   // the CPU's float steps, block after block in order
            for (uint c = 0u; c < nc; c++) {
                const uint o = ((cr * MAX_M + cm) * CB + c) * RES;
#if TYPE == TERN_IQ4_NL
                const float dd = uintBitsToFloat(sh_res[o + 8u]);
                [[unroll]] for (uint l = 0u; l < 8u; l++) lanes[l] = fma(dd, uintBitsToFloat(sh_res[o + l]), lanes[l]);
#elif QDOT_LEGACY
                acc = fma(uintBitsToFloat(sh_res[o]), uintBitsToFloat(sh_res[o + 1u]), acc);
#if QDOT_AFFINE
                acc = fma(uintBitsToFloat(sh_res[o + 2u]), uintBitsToFloat(sh_res[o + 3u]), acc);
#endif
#else
                int isum = 0, mins = 0;
                [[unroll]] for (uint pt = 0u; pt < 4u; pt++) {
                    isum += int(sh_res[o + 2u * pt]);
                    mins += int(sh_res[o + 2u * pt + 1u]);
                }
                acc = kstep(acc, uintBitsToFloat(sh_res[o + 8u]), uintBitsToFloat(sh_res[o + 9u]),
                            uintBitsToFloat(sh_res[o + 10u]), isum, mins);
#endif
            }
        }
#if !QDOT_LEGACY
        touched ^= ahead0 ^ ahead1;   // long arrived
#endif
        // the next chunk's phase 1 writes only sh_lev / sh_q (read before the barrier above),
        // its items sh_res only after phase 1's barrier, when every chain here is done
    }
    if (touched == 0x9e3779b9u && p.K == 0u) acc = 1.0;   // never (K > 0): keeps the touching loads
    if (chain) {
#if TYPE == TERN_IQ4_NL
        acc = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
#endif
        mm_store(p.n_base + r0 + cr, cm, acc);
    }
}

#else  // float weights

#define NR 4
layout(local_size_x = 64) in;
shared float sh_acc[64 * NR * MAX_M];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * NR;  // window row
    float acc[NR * MAX_M];
    [[unroll]] for (uint i = 0u; i < NR * MAX_M; i++) acc[i] = 0.0;
    // m and r unrolled: the accumulators stay registers (a loop to p.M would index them)
    for (uint e = tid; e < p.K; e += 64u) {
        [[unroll]] for (uint m = 0u; m < MAX_M; m++) {
            if (m >= p.M) break;
            const float xv = act_value(x_f[(x_row(m) >> 2) + e], vec2(0.0));
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                if (r0 + r >= p.n_count) break;
                acc[r * MAX_M + m] = fma(dequant(p.o_w + (r0 + r) * p.nb_w1, e), xv, acc[r * MAX_M + m]);
            }
        }
    }
    [[unroll]] for (uint i = 0u; i < NR * MAX_M; i++) sh_acc[i * 64u + tid] = acc[i];
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (tid < s) {
            [[unroll]] for (uint i = 0u; i < NR * MAX_M; i++) sh_acc[i * 64u + tid] += sh_acc[i * 64u + tid + s];
        }
        barrier();
    }
    if (tid < NR * p.M) {
        const uint r = tid / p.M, m = tid % p.M;
        if (r0 + r < p.n_count) mm_store(p.n_base + r0 + r, m, sh_acc[(r * MAX_M + m) * 64u]);
    }
}
#endif
