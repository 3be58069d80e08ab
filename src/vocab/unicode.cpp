#include "vocab/unicode.h"

namespace tern {

uint16_t unicode_flags(uint32_t cp) {
    if (cp > 0x10FFFF) return UNICODE_UNDEFINED;
    // Last run whose first codepoint is <= cp.
    int32_t lo = 0, hi = g_unicode_n_runs - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (g_unicode_runs[mid].first <= cp) lo = mid; else hi = mid - 1;
    }
    return g_unicode_runs[lo].flags;
}

static inline bool is_continuation(const uint8_t * s, size_t n, size_t i) {
    return i < n && (s[i] & 0xC0) == 0x80;
}

uint32_t unicode_decode(const uint8_t * s, size_t n, size_t * pos) {
    size_t i = *pos;
    uint8_t b = s[i];
    // Same acceptance as llama.cpp's unicode_cpt_from_utf8: lead byte form and
    // continuation bytes only (no overlong or surrogate checks).
    if (!(b & 0x80)) { *pos = i + 1; return b; }
    if ((b & 0x40) && !(b & 0x20) && is_continuation(s, n, i + 1)) {
        *pos = i + 2;
        return ((uint32_t) (b & 0x1F) << 6) | (s[i + 1] & 0x3F);
    }
    if ((b & 0x60) == 0x60 && !(b & 0x10) && is_continuation(s, n, i + 1) && is_continuation(s, n, i + 2)) {
        *pos = i + 3;
        return ((uint32_t) (b & 0x0F) << 12) | ((uint32_t) (s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    }
    if ((b & 0x70) == 0x70 && !(b & 0x08) && is_continuation(s, n, i + 1) && is_continuation(s, n, i + 2) &&
        is_continuation(s, n, i + 3)) {
        *pos = i + 4;
        return ((uint32_t) (b & 0x07) << 18) | ((uint32_t) (s[i + 1] & 0x3F) << 12) |
               ((uint32_t) (s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
    }
    *pos = i + 1;
    return UNICODE_REPLACEMENT;
}

int unicode_encode(uint32_t cp, char * out) {
    if (cp <= 0x7F) { out[0] = (char) cp; return 1; }
    if (cp <= 0x7FF) {
        out[0] = (char) (0xC0 | (cp >> 6));
        out[1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp <= 0xFFFF) {
        out[0] = (char) (0xE0 | (cp >> 12));
        out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char) (0xF0 | ((cp >> 18) & 0x07));
    out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

// Bytes GPT-2 keeps as themselves: '!'..'~', 0xA1..0xAC, 0xAE..0xFF. The other
// 68 bytes take U+0100.. in increasing byte order.
static inline bool byte_is_printable(uint32_t b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t unicode_byte_to_cpt(uint8_t byte) {
    if (byte_is_printable(byte)) return byte;
    // Rank among the non-printable bytes: 0x00..0x20, then 0x7F..0xA0, then 0xAD.
    if (byte <= 0x20) return 0x100 + byte;
    if (byte <= 0xA0) return 0x100 + 33 + (byte - 0x7F);
    return 0x100 + 67;
}

int32_t unicode_cpt_to_byte(uint32_t cp) {
    if (cp <= 0xFF) return byte_is_printable(cp) ? (int32_t) cp : -1;
    if (cp >= 0x100 + 68) return -1;
    uint32_t k = cp - 0x100;
    if (k <= 32) return (int32_t) k;
    if (k <= 66) return (int32_t) (k - 33 + 0x7F);
    return 0xAD;
}

}  // namespace tern
