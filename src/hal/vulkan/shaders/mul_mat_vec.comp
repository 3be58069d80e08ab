#version 450
// MUL_MAT, matrix-vector path (decode: M <= MAX_M activation rows):
// dst [N, M] = W [K, N] x X [K, M] (+ bias [N]).
//
// Quantized weights (qdot.glsl: the CPU's integer blocks and float steps, in
// its order): a workgroup of 64 threads takes 64 weight rows, one per thread,
// each walking its row's blocks in order for every activation row. Phase 1
// puts the activation blocks' rounding parameters (act.glsl) in shared memory
// (K up to 256 blocks of parameters: K <= 8192 for 32-value blocks).
// Float weights (F32, F16, BF16): NR = 4 rows per workgroup, threads over
// 32-value chunks of K, a tree reduction per output.
// Weights bound a window of rows at a time (n_base: the window's first row)
// when W is larger than one binding.
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

#define MAX_M 2
#define MAX_BLOCKS 256

uint x_row(uint m) {
    const uint i1 = m % p.x_ne1, i23 = m / p.x_ne1;
    return p.o_x + i1 * p.x_nb1 + (i23 % p.x_ne2) * p.x_nb2 + (i23 / p.x_ne2) * p.x_nb3;
}

void store(uint n, uint m, float v) {
    if (p.has_bias != 0u) v += b_f[(p.o_b >> 2) + n];
    d_f[(p.o_d >> 2) + m * p.N + n] = v;
}

#if !ACT_F32 && !ACT_BF16
#include "qdot.glsl"
shared vec4 sh_q[MAX_M * MAX_BLOCKS];   // (id, d, s) per activation block

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n_blocks = p.K / QKA;
    for (uint m = 0u; m < p.M; m++) {
        const uint xr = x_row(m);
        for (uint bk = tid; bk < n_blocks; bk += 64u) {
            const uint at = xr + bk * QKA * 4u;
            const vec2 q = act_params(at);
#if QDOT_AFFINE
            sh_q[m * MAX_BLOCKS + bk] = vec4(q, act_s(at, q), 0.0);
#else
            sh_q[m * MAX_BLOCKS + bk] = vec4(q, 0.0, 0.0);
#endif
        }
    }
    barrier();
    const uint r = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u + tid;   // window row
    if (r >= p.n_count) return;
    const uint row = p.o_w + r * p.nb_w1;
    [[unroll]] for (uint m = 0u; m < MAX_M; m++) {
        if (m >= p.M) break;
        const uint xr = x_row(m) >> 2;
#if TYPE == TERN_IQ4_NL
        float lanes[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
#endif
        precise float acc = 0.0;
        for (uint bk = 0u; bk < n_blocks; bk++) {
            const vec4 q = sh_q[m * MAX_BLOCKS + bk];
            const uint blk = row + bk * BLOCK_BYTES, e0 = bk * QKA;
#if QDOT_LEGACY
#if TYPE == TERN_IQ4_NL
            const float dd = wd(blk) * q.y;
            [[unroll]] for (uint l = 0u; l < 8u; l++) {
                int lane = 0;
                for (uint i = 4u * l; i < 4u * l + 4u; i++) lane += wlev(blk, i) * act_level(x_f[xr + e0 + i], q.xy);
                lanes[l] = fma(dd, float(lane), lanes[l]);
            }
#else
            int sumi = 0;
            for (uint i = 0u; i < 32u; i++) sumi += wlev(blk, i) * act_level(x_f[xr + e0 + i], q.xy);
            acc = fma(float(sumi), wd(blk) * q.y, acc);
#if QDOT_AFFINE
            acc = fma(wm(blk), q.z, acc);
#endif
#endif
#else
            int isum = 0, mins = 0;
            for (uint j = 0u; j < 16u; j++) {
                int sub = 0, bsum = 0;
                for (uint i = 16u * j; i < 16u * j + 16u; i++) {
                    const int l = act_level(x_f[xr + e0 + i], q.xy);
                    sub += wlev(blk, i) * l;
                    bsum += l;
                }
                const ivec2 sm = wscmin(blk, j);
                isum += sm.x * sub;
                mins += sm.y * bsum;
            }
            acc = kstep(acc, q.y, wd(blk), wdmin(blk), isum, mins);
#endif
        }
#if TYPE == TERN_IQ4_NL
        acc = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
#endif
        store(p.n_base + r, m, acc);
    }
}

#else  // float weights

#define NR 4
shared float sh_acc[64 * NR * MAX_M];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint r0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * NR;  // window row
    float acc[NR * MAX_M];
    [[unroll]] for (uint i = 0u; i < NR * MAX_M; i++) acc[i] = 0.0;
    const uint n_chunks = (p.K + 31u) / 32u;
    for (uint c = tid; c < n_chunks; c += 64u) {
        const uint e0 = c * 32u, e1 = min(e0 + 32u, p.K);
        // m and r unrolled: the accumulators stay registers (a loop to p.M would index them)
        [[unroll]] for (uint m = 0u; m < MAX_M; m++) {
            if (m >= p.M) break;
            const uint xr = x_row(m) >> 2;
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                if (r0 + r >= p.n_count) break;
                const uint row = p.o_w + (r0 + r) * p.nb_w1;
                float s = 0.0;
                for (uint e = e0; e < e1; e++) s += dequant(row, e) * act_value(x_f[xr + e], vec2(0.0));
                acc[r * MAX_M + m] += s;
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
        if (r0 + r < p.n_count) store(p.n_base + r0 + r, m, sh_acc[(r * MAX_M + m) * 64u]);
    }
}
#endif
