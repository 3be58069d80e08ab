// Element e of a row of type TYPE (a compile-time define) whose bytes begin
// at byte `row` of binding 1 (src0: a weight, an embedding table), as fp32:
// the formulas of tensor/quants_k.h and tensor/quants.h, read through 16-bit
// loads (every field of every block sits at an even byte offset). Needs
// BIND_U16(1, s0, ...) and, for F32, BIND_F32(1, s0, ...).
//
// QK is the block's value count (1 for the float types), BLOCK_BYTES its size.
uint w16(uint byte_off) { return uint(s0_h[byte_off >> 1]); }
uint w8(uint byte_off) { return (w16(byte_off & ~1u) >> ((byte_off & 1u) * 8u)) & 0xffu; }
float wh(uint byte_off) { return f16_bits_to_f32(w16(byte_off)); }

#if TYPE == TERN_F32
#define QK 1
float dequant(uint row, uint e) { return s0_f[(row >> 2) + e]; }
#elif TYPE == TERN_F16
#define QK 1
float dequant(uint row, uint e) { return wh(row + 2u * e); }
#elif TYPE == TERN_BF16
#define QK 1
float dequant(uint row, uint e) { return uintBitsToFloat(w16(row + 2u * e) << 16); }
#elif TYPE == TERN_Q4_0 || TYPE == TERN_IQ4_NL
#define QK 32
// {fp16 d; u8 qs[16]}: value i < 16 in the low nibble of qs[i], i >= 16 in the high one of qs[i - 16]
float dequant(uint row, uint e) {
    const uint blk = row + 18u * (e >> 5), i = e & 31u;
    const uint q = (w8(blk + 2u + (i & 15u)) >> ((i >> 4) * 4u)) & 15u;
#if TYPE == TERN_Q4_0
    return wh(blk) * (float(q) - 8.0);
#else
    const int kvalues[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    return wh(blk) * float(kvalues[q]);
#endif
}
#elif TYPE == TERN_Q4_1
#define QK 32
// {fp16 d, m; u8 qs[16]}
float dequant(uint row, uint e) {
    const uint blk = row + 20u * (e >> 5), i = e & 31u;
    const uint q = (w8(blk + 4u + (i & 15u)) >> ((i >> 4) * 4u)) & 15u;
    return wh(blk) * float(q) + wh(blk + 2u);
}
#elif TYPE == TERN_Q5_0
#define QK 32
// {fp16 d; u8 qh[4]; u8 qs[16]}: the 5th bit of value i is bit i of qh
float dequant(uint row, uint e) {
    const uint blk = row + 22u * (e >> 5), i = e & 31u;
    const uint qh = w16(blk + 2u) | (w16(blk + 4u) << 16);
    const uint q = ((w8(blk + 6u + (i & 15u)) >> ((i >> 4) * 4u)) & 15u) | (((qh >> i) & 1u) << 4);
    return wh(blk) * (float(q) - 16.0);
}
#elif TYPE == TERN_Q5_1
#define QK 32
// {fp16 d, m; u8 qh[4]; u8 qs[16]}
float dequant(uint row, uint e) {
    const uint blk = row + 24u * (e >> 5), i = e & 31u;
    const uint qh = w16(blk + 4u) | (w16(blk + 6u) << 16);
    const uint q = ((w8(blk + 8u + (i & 15u)) >> ((i >> 4) * 4u)) & 15u) | (((qh >> i) & 1u) << 4);
    return wh(blk) * float(q) + wh(blk + 2u);
}
#elif TYPE == TERN_Q8_0
#define QK 32
// {fp16 d; i8 qs[32]}
float dequant(uint row, uint e) {
    const uint blk = row + 34u * (e >> 5), i = e & 31u;
    return wh(blk) * float(int(w8(blk + 2u + i) << 24) >> 24);
}
#elif TYPE == TERN_Q2_K
#define QK 256
// {u8 scales[16]; u8 qs[64]; fp16 d, dmin}: value i = 128h + 32s + l in bits 2s of qs[32h + l]
float dequant(uint row, uint e) {
    const uint blk = row + 84u * (e >> 8), i = e & 255u;
    const uint sc = w8(blk + (i >> 4));
    const uint q = (w8(blk + 16u + 32u * (i >> 7) + (i & 31u)) >> (2u * ((i >> 5) & 3u))) & 3u;
    return wh(blk + 80u) * float(sc & 15u) * float(q) - wh(blk + 82u) * float(sc >> 4);
}
#elif TYPE == TERN_Q3_K
#define QK 256
// {u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}
float dequant(uint row, uint e) {
    const uint blk = row + 110u * (e >> 8), i = e & 255u, j = i >> 4;
    const uint low = j < 8u ? w8(blk + 96u + j) & 15u : w8(blk + 96u + j - 8u) >> 4;
    const uint high = (w8(blk + 96u + 8u + (j & 3u)) >> (2u * (j >> 2))) & 3u;
    const int sc = int(low | (high << 4)) - 32;
    const uint q = (w8(blk + 32u + 32u * (i >> 7) + (i & 31u)) >> (2u * ((i >> 5) & 3u))) & 3u;
    const uint hbit = (w8(blk + (i & 31u)) >> (i >> 5)) & 1u;
    return wh(blk + 108u) * float(sc) * (float(q) - (hbit != 0u ? 0.0 : 4.0));
}
#elif TYPE == TERN_Q4_K || TYPE == TERN_Q5_K
#define QK 256
// {fp16 d, dmin; u8 scales[12]; (Q5_K: u8 qh[32];) u8 qs[128]}: value i = 64c + 32u + l
// in nibble u of qs[32c + l]; 6-bit scale and min of sub-block i / 32 in the k4 packing
float dequant(uint row, uint e) {
#if TYPE == TERN_Q4_K
    const uint blk = row + 144u * (e >> 8), qs = blk + 16u;
#else
    const uint blk = row + 176u * (e >> 8), qs = blk + 48u;
#endif
    const uint i = e & 255u, j = i >> 5;
    uint sc, m;
    if (j < 4u) {
        sc = w8(blk + 4u + j) & 63u;
        m = w8(blk + 8u + j) & 63u;
    } else {
        sc = (w8(blk + 8u + j) & 15u) | ((w8(blk + j) >> 6) << 4);
        m = (w8(blk + 8u + j) >> 4) | ((w8(blk + 4u + j) >> 6) << 4);
    }
    uint q = (w8(qs + 32u * (i >> 6) + (i & 31u)) >> (4u * ((i >> 5) & 1u))) & 15u;
#if TYPE == TERN_Q5_K
    q |= ((w8(blk + 16u + (i & 31u)) >> j) & 1u) << 4;
#endif
    return wh(blk) * float(sc) * float(q) - wh(blk + 2u) * float(m);
}
#elif TYPE == TERN_Q6_K
#define QK 256
// {u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d}: value i = 128h + 32s + l
float dequant(uint row, uint e) {
    const uint blk = row + 210u * (e >> 8), i = e & 255u, h = i >> 7, s = (i >> 5) & 3u, l = i & 31u;
    const uint lo = (w8(blk + 64u * h + 32u * (s & 1u) + l) >> (4u * (s >> 1))) & 15u;
    const uint hi = (w8(blk + 128u + 32u * h + l) >> (2u * s)) & 3u;
    const int sc = int(w8(blk + 192u + (i >> 4)) << 24) >> 24;
    return wh(blk + 208u) * float(sc) * (float(lo | (hi << 4)) - 32.0);
}
#else
#error "dequant.glsl: unknown TYPE"
#endif
