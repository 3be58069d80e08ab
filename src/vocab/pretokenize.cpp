// Hand-made scanners for llama.cpp's pre-tokenizer regexes (see pretokenize.h).
//
// llama.cpp runs two of its regexes with custom code (the GPT-2 one and the
// llama-3 one) and the others through std::regex, over a text where every
// non-ASCII codepoint is collapsed to a class byte (letter, number,
// punctuation, whitespace -> \v, other) or, for regexes with literal non-ASCII
// ranges, over the codepoints with non-ASCII whitespace replaced by \v. The
// scanners below reproduce what those engines match:
//   - std::regex finds the leftmost position where the pattern matches, taking
//     the first alternative that succeeds there (ECMAScript), and continues
//     after the match; text between matches becomes pieces of its own;
//   - \s is ASCII \t\n\v\f\r and space, or any non-ASCII White_Space codepoint;
//   - in the "literal range" regexes a non-ASCII whitespace codepoint is \v,
//     so it is never inside a literal range (e.g. U+3000 in deepseek's classes);
//   - in the collapsed regexes an ASCII character is in \p{X} only when
//     llama.cpp's ASCII table for X lists it: as Unicode says, except that '~'
//     is not \p{S} there.
// A regex is written below as a function giving the length of its match at a
// position (0: none), applied leftmost-first by split_matches; where a regex
// backtracks, the comment says which match ECMAScript settles on.
#include <string.h>

#include "vocab/pretokenize.h"
#include "vocab/unicode.h"

namespace tern {

typedef void (*piece_scanner)(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut);

// Apply a scanner to every current piece.
static void refine(const uint32_t * c, int32_t n, uint8_t * cut, piece_scanner scan) {
    for (int32_t b = 0, e; b < n; b = e) {
        for (e = b + 1; e < n && !cut[e]; e++) {}
        scan(c, b, e, cut);
    }
}

// Flags of position i inside the piece, 0 outside it (llama.cpp's _get_flags).
static inline uint16_t flags_at(const uint32_t * c, int32_t i, int32_t e) { return i < e ? unicode_flags(c[i]) : 0; }

static inline bool is_ws(uint32_t cp) { return unicode_flags(cp) & UNICODE_WHITESPACE; }
static inline bool is_number(uint32_t cp) { return unicode_flags(cp) & UNICODE_NUMBER; }

// ---------------------------------------------------------------------------
// Regexes of one character class: runs, single characters, fixed groups
// ---------------------------------------------------------------------------

typedef bool (*cpt_class)(uint32_t cp);

struct cpt_range { uint32_t lo, hi; };

static bool in_ranges(uint32_t cp, const cpt_range * r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (cp >= r[i].lo && cp <= r[i].hi) return true;
    }
    return false;
}

// The codepoint a std::wregex over llama.cpp's wide text sees.
static inline uint32_t wide_char(uint32_t cp) { return (cp > 0x7F && is_ws(cp)) ? 0x0B : cp; }

// Mark the pieces of "X+" (ws_prefix: "\s?X+") matches in [b, e).
static void split_runs(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut, cpt_class in_class, bool ws_prefix) {
    for (int32_t i = b; i < e;) {
        int32_t start = i, end;
        if (in_class(c[i])) {
            end = i + 1;
        } else if (ws_prefix && is_ws(c[i]) && i + 1 < e && in_class(c[i + 1])) {
            end = i + 2;
        } else {
            i++;
            continue;
        }
        while (end < e && in_class(c[end])) end++;
        cut[start] = 1;
        if (end < e) cut[end] = 1;
        i = end;
    }
}

// Each character of the class is a piece: "\p{N}", "[\r\n]".
static void split_singles(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut, cpt_class in_class) {
    for (int32_t i = b; i < e; i++) {
        if (in_class(c[i])) {
            cut[i] = 1;
            if (i + 1 < e) cut[i + 1] = 1;
        }
    }
}

// Length of a regex's match at pos in the piece ending at e, 0 when it has none there.
typedef int32_t (*match_fn)(const uint32_t * c, int32_t pos, int32_t e);

// std::regex_iterator over the piece: leftmost matches, each a piece, and the
// text between two matches one piece of its own.
static void split_matches(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut, match_fn match) {
    for (int32_t i = b; i < e;) {
        int32_t len = match(c, i, e);
        if (len <= 0) {
            i++;
            continue;
        }
        cut[i] = 1;
        if (i + len < e) cut[i + len] = 1;
        i += len;
    }
}

static bool ascii_digit(uint32_t cp) { return cp >= '0' && cp <= '9'; }
static bool ascii_letter(uint32_t cp) { return (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z'); }
// ASCII graphic characters that are neither letters nor digits: !-/ :-@ [-` {-~.
static bool ascii_punct_sym(uint32_t cp) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
}

// Category flags a collapsed regex sees ('~' is not \p{S} in llama.cpp's ASCII table).
static inline uint16_t cflags(uint32_t cp) {
    uint16_t f = unicode_flags(cp);
    return cp == '~' ? (uint16_t) (f & ~UNICODE_SYMBOL) : f;
}
static bool is_letter(uint32_t cp) { return cflags(cp) & UNICODE_LETTER; }
static bool is_punct(uint32_t cp) { return cflags(cp) & UNICODE_PUNCTUATION; }

// "[0-9][0-9][0-9]": leftmost groups of three ASCII digits.
static void scan_digit_triples(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    for (int32_t i = b; i + 3 <= e;) {
        if (ascii_digit(c[i]) && ascii_digit(c[i + 1]) && ascii_digit(c[i + 2])) {
            cut[i] = 1;
            if (i + 3 < e) cut[i + 3] = 1;
            i += 3;
        } else {
            i++;
        }
    }
}

static void scan_number_runs(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_number, false);
}
static void scan_number_singles(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_singles(c, b, e, cut, is_number);
}

// "[\p{P}\$\+<=>\^~\|]+" (default) and the same with '`' (falcon).
static bool is_punct_or_math(uint32_t cp) {
    return (unicode_flags(cp) & UNICODE_PUNCTUATION) || (cp < 0x80 && strchr("$+<=>^~|", (int) cp) && cp != 0);
}
static bool is_punct_or_math_tick(uint32_t cp) { return is_punct_or_math(cp) || cp == '`'; }
static void scan_punct_runs(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_punct_or_math, false);
}
static void scan_punct_runs_tick(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_punct_or_math_tick, false);
}

// ---------------------------------------------------------------------------
// deepseek-llm: [\r\n] | \s?[letters]+ | \s?[punct]+ | \s+$ | [cjk]+ | \p{N}+
// ---------------------------------------------------------------------------

static const cpt_range k_deepseek_letters[] = {
    {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6}, {0x00F8, 0x01BA},
    {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373}, {0x0376, 0x0377}, {0x037B, 0x037D},
    {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A}, {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5},
    {0x03F7, 0x0481}, {0x048A, 0x052F}, {0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4},
    {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124},
    {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
    {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E},
    {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF},
    {0x1E900, 0x1E943},
};
static const cpt_range k_deepseek_punct[] = {
    {0x0021, 0x002F}, {0x003A, 0x007E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
};
static const cpt_range k_deepseek_cjk[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};

#define IN_RANGES(cp, table) in_ranges(wide_char(cp), table, sizeof(table) / sizeof(table[0]))
static bool is_cr_or_lf(uint32_t cp) { return cp == '\r' || cp == '\n'; }
static bool is_deepseek_letter(uint32_t cp) { return IN_RANGES(cp, k_deepseek_letters); }
static bool is_deepseek_punct(uint32_t cp) { return IN_RANGES(cp, k_deepseek_punct); }
static bool is_deepseek_cjk(uint32_t cp) { return IN_RANGES(cp, k_deepseek_cjk); }

static void scan_cr_lf(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_singles(c, b, e, cut, is_cr_or_lf);
}
static void scan_deepseek_letters(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_deepseek_letter, true);
}
static void scan_deepseek_punct(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_deepseek_punct, true);
}
static void scan_deepseek_cjk(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_deepseek_cjk, false);
}
// "\s+$": the whitespace that ends the piece.
static void scan_trailing_ws(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    int32_t start = e;
    while (start > b && is_ws(c[start - 1])) start--;
    if (start < e) cut[start] = 1;
}

// ---------------------------------------------------------------------------
// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
// llama-3 / qwen2:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,G}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+         (G = 3 for llama-3, 1 for qwen2)
// Both as llama.cpp's unicode_regex_split_custom_gpt2 / _llama3.
// ---------------------------------------------------------------------------

struct word_cursor {
    const uint32_t * c;
    int32_t e;
    uint8_t * cut;
    int32_t prev_end;
};

// End the current word at `end`; returns its length.
static int32_t add_word(word_cursor * w, int32_t end) {
    int32_t len = end - w->prev_end;
    if (len > 0) w->cut[w->prev_end] = 1;
    w->prev_end = end;
    return len;
}

static inline uint32_t ascii_lower(uint32_t cp) { return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp; }

// Length of the contraction at pos ('s 't 'm 'd: 2, 're 've 'll: 3), 0 when none.
static int32_t contraction_len(const uint32_t * c, int32_t pos, int32_t e, bool any_case) {
    if (c[pos] != '\'' || pos + 1 >= e) return 0;
    uint32_t n1 = any_case ? ascii_lower(c[pos + 1]) : c[pos + 1];
    if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') return 2;
    if (pos + 2 >= e) return 0;
    uint32_t n2 = any_case ? ascii_lower(c[pos + 2]) : c[pos + 2];
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) return 3;
    return 0;
}

static const uint16_t WS = UNICODE_WHITESPACE, LET = UNICODE_LETTER, NUM = UNICODE_NUMBER;

// Whitespace run from pos: returns its length; *last_crlf_end = end of its last \r or \n (0: none).
static int32_t ws_run(const word_cursor * w, int32_t pos, int32_t * last_crlf_end) {
    int32_t n = 0;
    *last_crlf_end = 0;
    while (flags_at(w->c, pos + n, w->e) & WS) {
        if (is_cr_or_lf(w->c[pos + n])) *last_crlf_end = pos + n + 1;
        n++;
    }
    return n;
}

// \s+(?!\S) then \s+: all but the last space when something follows.
static int32_t ws_word_end(const word_cursor * w, int32_t pos, int32_t n_ws) {
    return (n_ws > 1 && pos + n_ws < w->e) ? pos + n_ws - 1 : pos + n_ws;
}

static void scan_gpt2(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    word_cursor w = {c, e, cut, b};
    for (int32_t pos = b; pos < e;) {
        uint32_t cpt = c[pos];
        int32_t k = contraction_len(c, pos, e, false);
        if (k) { pos += add_word(&w, pos + k); continue; }
        uint16_t f2 = cpt == ' ' ? flags_at(c, pos + 1, e) : flags_at(c, pos, e);
        uint16_t cls = (f2 & LET) ? LET : (f2 & NUM) ? NUM : 0;
        if (cls) {  // ' ?\p{L}+' or ' ?\p{N}+'
            pos += cpt == ' ';
            while (flags_at(c, pos, e) & cls) pos++;
            add_word(&w, pos);
            continue;
        }
        if (!(f2 & (WS | LET | NUM)) && f2) {  // ' ?[^\s\p{L}\p{N}]+'
            pos += cpt == ' ';
            for (uint16_t f = flags_at(c, pos, e); !(f & (WS | LET | NUM)) && f; f = flags_at(c, ++pos, e)) {}
            add_word(&w, pos);
            continue;
        }
        int32_t crlf_end;
        int32_t n_ws = ws_run(&w, pos, &crlf_end);
        if (n_ws > 0) { pos = ws_word_end(&w, pos, n_ws); add_word(&w, pos); continue; }
        add_word(&w, ++pos);  // no match: a piece of its own
    }
}

static void scan_llama3_like(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut, int32_t digit_group) {
    word_cursor w = {c, e, cut, b};
    for (int32_t pos = b; pos < e;) {
        uint32_t cpt = c[pos];
        uint16_t f = flags_at(c, pos, e);
        int32_t k = contraction_len(c, pos, e, true);
        if (k) { pos += add_word(&w, pos + k); continue; }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if (!is_cr_or_lf(cpt) && !(f & NUM) && ((f & LET) || (flags_at(c, pos + 1, e) & LET))) {
            pos++;
            while (flags_at(c, pos, e) & LET) pos++;
            add_word(&w, pos);
            continue;
        }
        // \p{N}{1,G}
        if (f & NUM) {
            for (int32_t ini = pos; flags_at(c, pos, e) & NUM;) {
                if (++pos - ini >= digit_group) { add_word(&w, pos); ini = pos; }
            }
            add_word(&w, pos);
            continue;
        }
        // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
        uint16_t f2 = cpt == ' ' ? flags_at(c, pos + 1, e) : f;
        if (!(f2 & (WS | LET | NUM)) && f) {
            pos += cpt == ' ';
            while (!(f2 & (WS | LET | NUM)) && f2) f2 = flags_at(c, ++pos, e);
            while (pos < e && is_cr_or_lf(c[pos])) pos++;
            add_word(&w, pos);
            continue;
        }
        int32_t crlf_end;
        int32_t n_ws = ws_run(&w, pos, &crlf_end);
        if (crlf_end > 0) { pos = crlf_end; add_word(&w, pos); continue; }  // \s*[\r\n]+
        if (n_ws > 0) { pos = ws_word_end(&w, pos, n_ws); add_word(&w, pos); continue; }
        add_word(&w, ++pos);
    }
}

static void scan_llama3(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) { scan_llama3_like(c, b, e, cut, 3); }
static void scan_qwen2(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) { scan_llama3_like(c, b, e, cut, 1); }

// ---------------------------------------------------------------------------
// Shared pieces of the std::regex sequences below
// ---------------------------------------------------------------------------

// \s*[\r\n]+|\s+(?!\S)|\s+ at pos: to the end of the last \r or \n of the
// whitespace run; else the run less its last character when something follows
// it and it has two or more; else the run.
static int32_t match_ws(const uint32_t * c, int32_t pos, int32_t e) {
    int32_t n = 0, crlf_end = 0;
    while (pos + n < e && is_ws(c[pos + n])) {
        if (is_cr_or_lf(c[pos + n])) crlf_end = n + 1;
        n++;
    }
    if (crlf_end > 0) return crlf_end;
    return (n > 1 && pos + n < e) ? n - 1 : n;
}

// "X+" or, with a one-character prefix class P, "P?X+": the prefix is taken
// when the next character starts the run (else the run must start at pos).
static int32_t match_prefixed_run(const uint32_t * c, int32_t pos, int32_t e, bool prefix_ok, cpt_class run) {
    int32_t j = (prefix_ok && pos + 1 < e && run(c[pos + 1])) ? pos + 1 : run(c[pos]) ? pos : -1;
    if (j < 0) return 0;
    while (j < e && run(c[j])) j++;
    return j - pos;
}

static bool is_letter_or_mark(uint32_t cp) { return cflags(cp) & (UNICODE_LETTER | UNICODE_ACCENT_MARK); }
static bool is_punct_or_symbol(uint32_t cp) { return cflags(cp) & (UNICODE_PUNCTUATION | UNICODE_SYMBOL); }

// ---------------------------------------------------------------------------
// deepseek-coder: [\r\n] | \s?\p{L}+ | \s?\p{P}+ | [cjk]+ | \p{N}
// ---------------------------------------------------------------------------

static void scan_ws_letters(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_letter, true);
}
static void scan_ws_punct(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_punct, true);
}

// ---------------------------------------------------------------------------
// deepseek-v3:
//   \p{N}{1,3} | [一-龥぀-ゟ゠-ヿ]+ |
//   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//   ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// ---------------------------------------------------------------------------

static int32_t match_number_triple(const uint32_t * c, int32_t pos, int32_t e) {
    int32_t n = 0;
    while (n < 3 && pos + n < e && is_number(c[pos + n])) n++;
    return n;
}
static void scan_number_triples(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_number_triple);
}

static const cpt_range k_deepseek3_cjk[] = {{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}};
static bool is_deepseek3_cjk(uint32_t cp) { return IN_RANGES(cp, k_deepseek3_cjk); }
static void scan_deepseek3_cjk(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_runs(c, b, e, cut, is_deepseek3_cjk, false);
}

static bool deepseek3_prefix(uint32_t cp) {
    return !is_cr_or_lf(cp) && !(cflags(cp) & (UNICODE_LETTER | UNICODE_PUNCTUATION | UNICODE_SYMBOL));
}

static int32_t match_deepseek3_word(const uint32_t * c, int32_t pos, int32_t e) {
    const uint32_t cp = c[pos];
    if (ascii_punct_sym(cp) && pos + 1 < e && ascii_letter(c[pos + 1])) {
        int32_t j = pos + 2;
        while (j < e && ascii_letter(c[j])) j++;
        return j - pos;
    }
    int32_t n = match_prefixed_run(c, pos, e, deepseek3_prefix(cp), is_letter_or_mark);
    if (n > 0) return n;
    n = match_prefixed_run(c, pos, e, cp == ' ', is_punct_or_symbol);
    if (n > 0) {
        while (pos + n < e && is_cr_or_lf(c[pos + n])) n++;
        return n;
    }
    return match_ws(c, pos, e);
}
static void scan_deepseek3_words(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_deepseek3_word);
}

// ---------------------------------------------------------------------------
// bloom, poro-chat, gpt3-finnish: " ?[^(\s|.,!?…。，、।۔،)]+" (viking: then \p{N})
// ---------------------------------------------------------------------------

static bool is_bloom_word_char(uint32_t cp) {
    static const uint32_t k_stops[] = {'(', '|', '.', ',', '!', '?', ')', 0x2026, 0x3002, 0xFF0C, 0x3001, 0x0964,
                                       0x06D4, 0x060C};
    if (is_ws(cp)) return false;
    for (uint32_t s : k_stops) {
        if (cp == s) return false;
    }
    return true;
}
static int32_t match_bloom_word(const uint32_t * c, int32_t pos, int32_t e) {
    return match_prefixed_run(c, pos, e, c[pos] == ' ', is_bloom_word_char);
}
static void scan_bloom_words(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_bloom_word);
}

// ---------------------------------------------------------------------------
// tekken (llama.cpp's adaptation of Mistral's regex):
//   [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|
//   [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|
//   \p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// "Upper" is a letter but a-z, "lower" a letter but A-Z: a non-ASCII letter is both.
// ---------------------------------------------------------------------------

static bool tekken_upper(uint32_t cp) { return is_letter(cp) && !(cp >= 'a' && cp <= 'z'); }
static bool tekken_lower(uint32_t cp) { return is_letter(cp) && !(cp >= 'A' && cp <= 'Z'); }
static bool tekken_other(uint32_t cp) { return !(cflags(cp) & (WS | LET | NUM)); }

static int32_t match_tekken(const uint32_t * c, int32_t pos, int32_t e) {
    const uint32_t cp = c[pos];
    const uint16_t f = cflags(cp);
    // The optional prefix is taken when pos is no letter; without it neither word
    // alternative can start there, so only the prefixed tries matter.
    const int32_t j = (!is_cr_or_lf(cp) && !(f & (LET | NUM))) ? pos + 1 : pos;
    int32_t u = j;
    while (u < e && tekken_upper(c[u])) u++;
    // upper* lower+: the lower run after the upper run; else (backtracking) the
    // last upper that is also lower ends the match.
    if (u < e && tekken_lower(c[u])) {
        while (u < e && tekken_lower(c[u])) u++;
        return u - pos;
    }
    for (int32_t k = u - 1; k >= j; k--) {
        if (tekken_lower(c[k])) return k + 1 - pos;
    }
    if (u > j) return u - pos;  // upper+ lower* with no lower after it
    if (f & NUM) return 1;
    int32_t n = match_prefixed_run(c, pos, e, cp == ' ', tekken_other);
    if (n > 0) {
        while (pos + n < e && (is_cr_or_lf(c[pos + n]) || c[pos + n] == '/')) n++;
        return n;
    }
    return match_ws(c, pos, e);
}
static void scan_tekken(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_tekken);
}

// ---------------------------------------------------------------------------
// chameleon: <sentinel:[0-9]+> | (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z | ([\t\n]|    |  ) |
//   \p{N} | [\p{P}!-/:-@\[-`{-~] | then GPT-2's regex
// ---------------------------------------------------------------------------

static bool starts_with(const uint32_t * c, int32_t pos, int32_t e, const char * lit) {
    for (int32_t k = 0; lit[k]; k++) {
        if (pos + k >= e || c[pos + k] != (uint8_t) lit[k]) return false;
    }
    return true;
}

static int32_t match_sentinel(const uint32_t * c, int32_t pos, int32_t e) {
    if (!starts_with(c, pos, e, "<sentinel:")) return 0;
    int32_t j = pos + 10;
    while (j < e && ascii_digit(c[j])) j++;
    return (j > pos + 10 && j < e && c[j] == '>') ? j + 1 - pos : 0;
}

// {1,4} letters A-I then Z: only the whole run of A-I can be followed by Z.
static int32_t match_image(const uint32_t * c, int32_t pos, int32_t e) {
    if (!starts_with(c, pos, e, "IMGIMG")) return 0;
    int32_t j = pos + 6;
    while (j < e && j < pos + 10 && c[j] >= 'A' && c[j] <= 'I') j++;
    return (j > pos + 6 && j < e && c[j] == 'Z') ? j + 1 - pos : 0;
}

static int32_t match_chameleon_space(const uint32_t * c, int32_t pos, int32_t e) {
    if (c[pos] == '\t' || c[pos] == '\n') return 1;
    if (starts_with(c, pos, e, "    ")) return 4;
    return starts_with(c, pos, e, "  ") ? 2 : 0;
}

static bool is_chameleon_punct(uint32_t cp) { return is_punct(cp) || ascii_punct_sym(cp); }

static void scan_sentinels(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_sentinel);
}
static void scan_images(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_image);
}
static void scan_chameleon_spaces(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_matches(c, b, e, cut, match_chameleon_space);
}
static void scan_chameleon_punct(const uint32_t * c, int32_t b, int32_t e, uint8_t * cut) {
    split_singles(c, b, e, cut, is_chameleon_punct);
}

// ---------------------------------------------------------------------------
// Sequences per pre-tokenizer (llama.cpp's llm_tokenizer_bpe regex_exprs)
// ---------------------------------------------------------------------------

#define MAX_STEPS 6
struct pre_sequence {
    vocab_pre pre;
    piece_scanner steps[MAX_STEPS];
};

static const pre_sequence k_sequences[] = {
    {VOCAB_PRE_DEFAULT, {scan_punct_runs, scan_gpt2, scan_number_runs, scan_digit_triples}},
    {VOCAB_PRE_GPT2, {scan_gpt2}},
    {VOCAB_PRE_LLAMA3, {scan_llama3}},
    {VOCAB_PRE_QWEN2, {scan_qwen2}},
    {VOCAB_PRE_DEEPSEEK_LLM, {scan_cr_lf, scan_deepseek_letters, scan_deepseek_punct, scan_trailing_ws,
                              scan_deepseek_cjk, scan_number_runs}},
    {VOCAB_PRE_STARCODER, {scan_number_singles, scan_gpt2}},
    {VOCAB_PRE_FALCON, {scan_punct_runs_tick, scan_gpt2, scan_digit_triples}},
    {VOCAB_PRE_DEEPSEEK_CODER, {scan_cr_lf, scan_ws_letters, scan_ws_punct, scan_deepseek_cjk, scan_number_singles}},
    {VOCAB_PRE_DEEPSEEK3, {scan_number_triples, scan_deepseek3_cjk, scan_deepseek3_words}},
    {VOCAB_PRE_BLOOM, {scan_bloom_words}},
    {VOCAB_PRE_VIKING, {scan_bloom_words, scan_number_singles}},
    {VOCAB_PRE_TEKKEN, {scan_tekken}},
    {VOCAB_PRE_CHAMELEON, {scan_sentinels, scan_images, scan_chameleon_spaces, scan_number_singles,
                           scan_chameleon_punct, scan_gpt2}},
};

void pretokenize(vocab_pre pre, const uint32_t * cpts, int32_t n, uint8_t * cut) {
    if (n <= 0) return;
    memset(cut, 0, (size_t) n);
    cut[0] = 1;
    const pre_sequence * seq = &k_sequences[0];
    for (size_t i = 0; i < sizeof(k_sequences) / sizeof(k_sequences[0]); i++) {
        if (k_sequences[i].pre == pre) seq = &k_sequences[i];
    }
    for (int s = 0; s < MAX_STEPS && seq->steps[s]; s++) refine(cpts, n, cut, seq->steps[s]);
}

}  // namespace tern
