// Finite checks (see finite.h).
#include "tensor/finite.h"
#include "tensor/blocks.h"

#include <stddef.h>
#include <string.h>

namespace tern {

namespace {

bool fp16_finite(uint16_t h) { return (h & 0x7c00) != 0x7c00; }
bool f32_bits_finite(uint32_t u) { return (u & 0x7f800000u) != 0x7f800000u; }
uint16_t load_u16(const uint8_t * p) { uint16_t v; memcpy(&v, p, 2); return v; }
uint32_t load_u32(const uint8_t * p) { uint32_t v; memcpy(&v, p, 4); return v; }

// Where a block format keeps its fp16 scales (d, then m / dmin / s).
struct scale_layout {
    tern_type type;
    size_t    block_bytes;
    int       off0;
    int       off1;  // -1: one scale
};

const scale_layout kScaleLayouts[] = {
    {TERN_TYPE_Q4_0, sizeof(block_q4_0), offsetof(block_q4_0, d), -1},
    {TERN_TYPE_Q4_1, sizeof(block_q4_1), offsetof(block_q4_1, d), offsetof(block_q4_1, m)},
    {TERN_TYPE_Q5_0, sizeof(block_q5_0), offsetof(block_q5_0, d), -1},
    {TERN_TYPE_Q5_1, sizeof(block_q5_1), offsetof(block_q5_1, d), offsetof(block_q5_1, m)},
    {TERN_TYPE_Q8_0, sizeof(block_q8_0), offsetof(block_q8_0, d), -1},
    {TERN_TYPE_Q8_1, sizeof(block_q8_1), offsetof(block_q8_1, d), offsetof(block_q8_1, s)},
    {TERN_TYPE_IQ4_NL, sizeof(block_iq4_nl), offsetof(block_iq4_nl, d), -1},
    {TERN_TYPE_Q2_K, sizeof(block_q2_K), offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)},
    {TERN_TYPE_Q3_K, sizeof(block_q3_K), offsetof(block_q3_K, d), -1},
    {TERN_TYPE_Q4_K, sizeof(block_q4_K), offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)},
    {TERN_TYPE_Q5_K, sizeof(block_q5_K), offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)},
    {TERN_TYPE_Q6_K, sizeof(block_q6_K), offsetof(block_q6_K, d), -1},
};

}  // namespace

bool tern_data_finite(tern_type type, const uint8_t * p, size_t bytes) {
    switch (type) {
        case TERN_TYPE_F32:
            for (size_t i = 0; i + 4 <= bytes; i += 4) if (!f32_bits_finite(load_u32(p + i))) return false;
            return true;
        case TERN_TYPE_F16:
            for (size_t i = 0; i + 2 <= bytes; i += 2) if (!fp16_finite(load_u16(p + i))) return false;
            return true;
        case TERN_TYPE_BF16:
            for (size_t i = 0; i + 2 <= bytes; i += 2) if ((load_u16(p + i) & 0x7f80) == 0x7f80) return false;
            return true;
        case TERN_TYPE_Q8_K:
            for (size_t i = 0; i + sizeof(block_q8_K) <= bytes; i += sizeof(block_q8_K)) {
                if (!f32_bits_finite(load_u32(p + i + offsetof(block_q8_K, d)))) return false;
            }
            return true;
        default: break;
    }
    for (const scale_layout & l : kScaleLayouts) {
        if (l.type != type) continue;
        for (size_t i = 0; i + l.block_bytes <= bytes; i += l.block_bytes) {
            if (!fp16_finite(load_u16(p + i + l.off0))) return false;
            if (l.off1 >= 0 && !fp16_finite(load_u16(p + i + l.off1))) return false;
        }
    }
    return true;
}

}  // namespace tern
