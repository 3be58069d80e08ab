// vocab_token_to_piece: the bytes a token stands for (llama.cpp's token_to_piece).
//   control / unknown: their text, only when `special`; user-defined: their text
//   SPM normal: text with U+2581 -> ' '; SPM byte "<0xXX>": that byte
//   BPE normal: GPT-2 byte-level decode of each codepoint back to its byte
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/unicode.h"
#include "vocab/vocab_internal.h"

namespace tern {

// Writes what fits and counts everything, so the caller learns the size needed.
struct piece_writer {
    char * buf;
    int32_t cap;
    int32_t n;
};

static void put(piece_writer * w, const char * s, int32_t len) {
    if (w->n + len <= w->cap) memcpy(w->buf + w->n, s, (size_t) len);
    w->n += len;
}

static void put_unescaped(piece_writer * w, const char * s, int32_t len) {
    for (int32_t i = 0; i < len; i++) {
        if (i + 2 < len && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
            put(w, " ", 1);
            i += 2;
        } else {
            put(w, s + i, 1);
        }
    }
}

static void put_byte_decoded(piece_writer * w, const char * s, int32_t len) {
    for (size_t pos = 0; pos < (size_t) len;) {
        uint32_t cp = unicode_decode((const uint8_t *) s, (size_t) len, &pos);
        int32_t b = unicode_cpt_to_byte(cp);
        if (b >= 0) {
            char c = (char) b;
            put(w, &c, 1);
            continue;
        }
        // Not a byte-level codepoint: llama.cpp writes "[UNK_BYTE_0x<hex of its UTF-8><token text>]".
        char utf8[4];
        int n = unicode_encode(cp, utf8);
        put(w, "[UNK_BYTE_0x", 12);
        for (int k = 0; k < n; k++) {
            char hex[3];
            snprintf(hex, sizeof(hex), "%02x", (uint8_t) utf8[k]);
            put(w, hex, 2);
        }
        put(w, s, len);
        put(w, "]", 1);
    }
}

int32_t vocab_token_to_piece(const tern_vocab * v, tern_token t, char * buf, int32_t buf_size, bool special) {
    if (!v || t < 0 || t >= v->n_tokens) return 0;
    if (buf_size < 0 || !buf) buf_size = 0;
    const uint16_t attr = v->attrs[t];
    const uint16_t attr_special = VOCAB_ATTR_UNKNOWN | VOCAB_ATTR_CONTROL;
    if (!special && (attr & attr_special)) return 0;
    const char * text = vocab_token_ptr(v, t);
    int32_t len = (int32_t) vocab_token_len(v, t);
    piece_writer w = {buf, buf_size, 0};
    if (attr & (attr_special | VOCAB_ATTR_USER_DEFINED)) {
        put(&w, text, len);
    } else if (v->type == TERN_VOCAB_BPE) {
        if (attr & VOCAB_ATTR_NORMAL) put_byte_decoded(&w, text, len);
    } else if (attr & VOCAB_ATTR_NORMAL) {
        put_unescaped(&w, text, len);
    } else if ((attr & VOCAB_ATTR_BYTE) && len > 3) {
        char byte = (char) strtol(text + 3, NULL, 16);
        put(&w, &byte, 1);
    }
    return w.n <= buf_size ? w.n : -w.n;
}

}  // namespace tern
