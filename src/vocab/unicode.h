// Unicode helpers for the tokenizers: UTF-8 decoding as llama.cpp does it
// (an invalid sequence gives U+FFFD and skips one byte), category flags from
// the generated run table, and GPT-2's byte <-> codepoint mapping.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tern {

// Flag bits of a codepoint (values as the generator writes them).
enum unicode_flag {
    UNICODE_UNDEFINED   = 1 << 0,  // unassigned (Cn)
    UNICODE_NUMBER      = 1 << 1,  // \p{N}
    UNICODE_LETTER      = 1 << 2,  // \p{L}
    UNICODE_SEPARATOR   = 1 << 3,  // \p{Z}
    UNICODE_ACCENT_MARK = 1 << 4,  // \p{M}
    UNICODE_PUNCTUATION = 1 << 5,  // \p{P}
    UNICODE_SYMBOL      = 1 << 6,  // \p{S}
    UNICODE_CONTROL     = 1 << 7,  // \p{C} except Cn
    UNICODE_WHITESPACE  = 1 << 8,  // White_Space property (\s)
};

struct unicode_run {
    uint32_t first;  // first codepoint of the run
    uint16_t flags;
};
extern const unicode_run g_unicode_runs[];  // sorted by first, covering 0..0x10FFFF
extern const int32_t g_unicode_n_runs;

#define UNICODE_REPLACEMENT 0xFFFDu

// Flags of a codepoint; codepoints past U+10FFFF are UNDEFINED.
uint16_t unicode_flags(uint32_t cp);

// Bytes of the UTF-8 sequence a lead byte announces (1 for continuation bytes).
static inline int unicode_len_utf8(uint8_t lead) {
    static const uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lookup[lead >> 4];
}

// Decode one codepoint at s[*pos] (n bytes in all) and advance *pos. An invalid
// or truncated sequence yields U+FFFD and advances one byte.
uint32_t unicode_decode(const uint8_t * s, size_t n, size_t * pos);
// Encode cp as UTF-8 into out (4 bytes room); returns the byte count.
int unicode_encode(uint32_t cp, char * out);

// GPT-2 byte-level mapping: byte -> codepoint (printable bytes map to
// themselves, the others to U+0100 + k), and back (-1 for other codepoints).
uint32_t unicode_byte_to_cpt(uint8_t byte);
int32_t  unicode_cpt_to_byte(uint32_t cp);

}  // namespace tern
