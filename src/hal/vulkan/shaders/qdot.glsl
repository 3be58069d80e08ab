// Quantized dot products with the CPU's semantics, exactly: the integer sum of
// each block (weight levels x activation levels, exact in any order) and then
// the float steps of tensor/quants.h and tensor/quants_k_dot.cpp in the same
// order, block after block. A device that sums in another float order differs
// from the CPU by an ulp here and there, and an ulp that moves an activation
// across a Q8 rounding boundary moves a level: on a model that amplifies it
// (the std-0.08 test models) that was a KL of 6e-4 where the CPU and
// llama.cpp agree to 1e-13. So every quantized MUL_MAT output is one fma
// chain over its blocks in order, as on the CPU:
//   PER_BLOCK (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0): acc = fma(sumi, d_w * d_a, acc)
//                                         (+ acc = fma(m_w, s_a, acc) for Q4_1, Q5_1)
//   LANES8 (IQ4_NL): 8 lanes, lane l the sum of values 4l..4l+3 of each block:
//                    acc_l = fma(d_w * d_a, lane_l, acc_l), then the lanes' hsum
//   K-quants (Q8_K activations): per super-block isum = sum_j sc_j sum(q l),
//                    mins = sum_j min_j bsum_j, then Q2_K: fma(-(d_a dmin), mins),
//                    fma(d_a d, isum); Q4_K, Q5_K: the same two the other way
//                    round; Q3_K, Q6_K: fma(d_a d, isum) alone.
// Activation levels and scales as act.glsl computes them (act_params returns
// (id, d) and, for Q8_1, act_s gives s). Needs BIND_U16(1, s0, ...) (src0)
// and dequant.glsl's w8 / w16 / wh.
#if TYPE == TERN_Q4_0 || TYPE == TERN_Q4_1 || TYPE == TERN_Q5_0 || TYPE == TERN_Q5_1 || TYPE == TERN_Q8_0 || TYPE == TERN_IQ4_NL
#define QDOT_LEGACY 1
#endif
#if TYPE == TERN_Q4_1 || TYPE == TERN_Q5_1
#define QDOT_AFFINE 1
#endif

#if QDOT_LEGACY
#if TYPE == TERN_Q4_0 || TYPE == TERN_IQ4_NL
#define BLOCK_BYTES 18u
#elif TYPE == TERN_Q4_1
#define BLOCK_BYTES 20u
#elif TYPE == TERN_Q5_0
#define BLOCK_BYTES 22u
#elif TYPE == TERN_Q5_1
#define BLOCK_BYTES 24u
#else
#define BLOCK_BYTES 34u
#endif
// Weight level i (0..31) of the block at byte blk, as the CPU's levels() give it.
int wlev(uint blk, uint i) {
#if TYPE == TERN_Q8_0
    return int(w8(blk + 2u + i) << 24) >> 24;
#elif TYPE == TERN_Q4_0 || TYPE == TERN_Q4_1 || TYPE == TERN_IQ4_NL
    const uint nib = (w8(blk + (TYPE == TERN_Q4_1 ? 4u : 2u) + (i & 15u)) >> ((i >> 4) * 4u)) & 15u;
#if TYPE == TERN_Q4_0
    return int(nib) - 8;
#elif TYPE == TERN_Q4_1
    return int(nib);
#else
    const int kvalues[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    return kvalues[nib];
#endif
#else  // Q5_0, Q5_1
    const uint qh_at = TYPE == TERN_Q5_0 ? 2u : 4u;
    const uint qh = w16(blk + qh_at) | (w16(blk + qh_at + 2u) << 16);
    const uint nib = (w8(blk + qh_at + 4u + (i & 15u)) >> ((i >> 4) * 4u)) & 15u;
    return int(nib | (((qh >> i) & 1u) << 4)) - (TYPE == TERN_Q5_0 ? 16 : 0);
#endif
}
float wd(uint blk) { return wh(blk); }
float wm(uint blk) { return wh(blk + 2u); }
#else  // K-quants: super-blocks of 256, sixteen 16-value groups
#if TYPE == TERN_Q2_K
#define BLOCK_BYTES 84u
#elif TYPE == TERN_Q3_K
#define BLOCK_BYTES 110u
#elif TYPE == TERN_Q4_K
#define BLOCK_BYTES 144u
#elif TYPE == TERN_Q5_K
#define BLOCK_BYTES 176u
#else
#define BLOCK_BYTES 210u
#endif
// x[i] = d * sc[i/16] * q[i] - dmin * min[i/16] (tensor/quants_k.h's tern_k_superblock).
int wlev(uint blk, uint i) {
#if TYPE == TERN_Q2_K
    return int((w8(blk + 16u + 32u * (i >> 7) + (i & 31u)) >> (2u * ((i >> 5) & 3u))) & 3u);
#elif TYPE == TERN_Q3_K
    const uint q = (w8(blk + 32u + 32u * (i >> 7) + (i & 31u)) >> (2u * ((i >> 5) & 3u))) & 3u;
    const uint hbit = (w8(blk + (i & 31u)) >> (i >> 5)) & 1u;
    return int(q) - (hbit != 0u ? 0 : 4);
#elif TYPE == TERN_Q4_K || TYPE == TERN_Q5_K
    const uint qs = blk + (TYPE == TERN_Q4_K ? 16u : 48u);
    uint q = (w8(qs + 32u * (i >> 6) + (i & 31u)) >> (4u * ((i >> 5) & 1u))) & 15u;
#if TYPE == TERN_Q5_K
    q |= ((w8(blk + 16u + (i & 31u)) >> (i >> 5)) & 1u) << 4;
#endif
    return int(q);
#else  // Q6_K
    const uint h = i >> 7, s = (i >> 5) & 3u, l = i & 31u;
    const uint lo = (w8(blk + 64u * h + 32u * (s & 1u) + l) >> (4u * (s >> 1))) & 15u;
    const uint hi = (w8(blk + 128u + 32u * h + l) >> (2u * s)) & 3u;
    return int(lo | (hi << 4)) - 32;
#endif
}
// Scale and min of 16-value group j (0..15).
ivec2 wscmin(uint blk, uint j) {
#if TYPE == TERN_Q2_K
    const uint sc = w8(blk + j);
    return ivec2(int(sc & 15u), int(sc >> 4));
#elif TYPE == TERN_Q3_K
    const uint low = j < 8u ? w8(blk + 96u + j) & 15u : w8(blk + 96u + j - 8u) >> 4;
    const uint high = (w8(blk + 104u + (j & 3u)) >> (2u * (j >> 2))) & 3u;
    return ivec2(int(low | (high << 4)) - 32, 0);
#elif TYPE == TERN_Q4_K || TYPE == TERN_Q5_K
    const uint g = j >> 1;   // 32-value sub-block
    if (g < 4u) return ivec2(int(w8(blk + 4u + g) & 63u), int(w8(blk + 8u + g) & 63u));
    return ivec2(int((w8(blk + 8u + g) & 15u) | ((w8(blk + g) >> 6) << 4)), int((w8(blk + 8u + g) >> 4) | ((w8(blk + 4u + g) >> 6) << 4)));
#else
    return ivec2(int(w8(blk + 192u + j) << 24) >> 24, 0);
#endif
}
float wd(uint blk) {
#if TYPE == TERN_Q2_K
    return wh(blk + 80u);
#elif TYPE == TERN_Q3_K
    return wh(blk + 108u);
#elif TYPE == TERN_Q6_K
    return wh(blk + 208u);
#else
    return wh(blk);
#endif
}
float wdmin(uint blk) {
#if TYPE == TERN_Q2_K
    return wh(blk + 82u);
#elif TYPE == TERN_Q4_K || TYPE == TERN_Q5_K
    return wh(blk + 2u);
#else
    return 0.0;
#endif
}
// The float steps of one super-block (see above).
float kstep(float acc, float d_a, float d_w, float dmin_w, int isum, int mins) {
    precise float r = acc;
#if TYPE == TERN_Q2_K
    r = fma(-(d_a * dmin_w), float(mins), r);
    r = fma(d_a * d_w, float(isum), r);
#elif TYPE == TERN_Q4_K || TYPE == TERN_Q5_K
    r = fma(d_a * d_w, float(isum), r);
    r = fma(-(d_a * dmin_w), float(mins), r);
#else
    r = fma(d_a * d_w, float(isum), r);
#endif
    return r;
}
#endif

// Activation level of value v (q: act_params of its block; id 0: levels 0, also for NaN).
int act_level(float v, vec2 q) {
    if (q.x == 0.0) return 0;
#if ACT_Q8K
    return min(127, int(roundEven(q.x * v)));
#else
    return int(roundEven(q.x * v));
#endif
}
