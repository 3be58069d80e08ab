// Chat templates: the built-in prompt formats of llama.cpp's llm_chat_apply_template
// (same names, same bytes out) and the detection of one of them from a model's Jinja
// tokenizer.chat_template by marker strings (llm_chat_detect_template's rules). No
// Jinja is interpreted.
//
// Everything works on byte views (pointer + length, not NUL-terminated, so a template
// can be read straight from the GGUF file) and writes through a bounded writer into
// the caller's buffer: no heap, no static constructors.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"

namespace tern {

// The built-in templates, in the byte order of their names (the order
// tern_chat_builtin_templates lists them, like llama_chat_builtin_templates).
enum chat_tmpl {
    CHAT_TMPL_UNKNOWN = -1,
    CHAT_TMPL_CHATGLM3 = 0,
    CHAT_TMPL_CHATGLM4,
    CHAT_TMPL_CHATML,
    CHAT_TMPL_COMMAND_R,
    CHAT_TMPL_DEEPSEEK,
    CHAT_TMPL_DEEPSEEK2,
    CHAT_TMPL_DEEPSEEK3,
    CHAT_TMPL_EXAONE3,
    CHAT_TMPL_FALCON3,
    CHAT_TMPL_GEMMA,
    CHAT_TMPL_GIGACHAT,
    CHAT_TMPL_GLMEDGE,
    CHAT_TMPL_GRANITE,
    CHAT_TMPL_LLAMA2,
    CHAT_TMPL_LLAMA2_SYS,
    CHAT_TMPL_LLAMA2_SYS_BOS,
    CHAT_TMPL_LLAMA2_SYS_STRIP,
    CHAT_TMPL_LLAMA3,
    CHAT_TMPL_MEGREZ,
    CHAT_TMPL_MINICPM,
    CHAT_TMPL_MISTRAL_V1,
    CHAT_TMPL_MISTRAL_V3,
    CHAT_TMPL_MISTRAL_V3_TEKKEN,
    CHAT_TMPL_MISTRAL_V7,
    CHAT_TMPL_MONARCH,
    CHAT_TMPL_OPENCHAT,
    CHAT_TMPL_ORION,
    CHAT_TMPL_PHI3,
    CHAT_TMPL_PHI4,
    CHAT_TMPL_RWKV_WORLD,
    CHAT_TMPL_VICUNA,
    CHAT_TMPL_VICUNA_ORCA,
    CHAT_TMPL_ZEPHYR,
    CHAT_TMPL_COUNT
};

// "chatml", ...; NULL outside [0, CHAT_TMPL_COUNT).
const char * chat_tmpl_name(chat_tmpl t);

// The built-in whose name is exactly these len bytes, else CHAT_TMPL_UNKNOWN.
chat_tmpl chat_tmpl_from_name(const char * s, size_t len);

// A built-in name first, then the markers of a Jinja template; CHAT_TMPL_UNKNOWN
// when neither matches.
chat_tmpl chat_tmpl_detect(const char * s, size_t len);

// Bounded writer: copies what fits in [buf, buf + cap) and keeps counting the
// bytes a complete output needs (len) past the end.
struct chat_writer {
    char *   buf;
    size_t   cap;
    uint64_t len;
};

// Format msgs[0..n) with template t. Appends to w; TERN_ERR_INVALID_ARG when msgs
// is NULL with n > 0 or a message's role or content is NULL (nothing written then),
// TERN_ERR_UNSUPPORTED for an unknown t. Sets tern_last_error on failure.
tern_status chat_tmpl_apply(chat_tmpl t, const tern_chat_message * msgs, size_t n, bool add_assistant,
                            chat_writer * w);

}  // namespace tern
