// tern.h entry points: chat templates (src/chat/) and a model's own template text.
#include "tern.h"
#include "chat/chat_template.h"
#include "core/log.h"
#include "core/status.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "port.h"
#if TERN_WITH_JINJA
#include "chat/chat_jinja.h"
#include "core/json.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace tern {

extern "C" int32_t tern_chat_apply_template(const char * tmpl, const tern_chat_message * msgs, size_t n_msgs,
                                            int add_assistant, char * buf, int32_t length) {
    if (!tmpl) tmpl = "chatml";  // as llama_chat_apply_template
    chat_tmpl t = chat_tmpl_detect(tmpl, strlen(tmpl));
    if (t == CHAT_TMPL_UNKNOWN) {
        tern_fail(TERN_ERR_UNSUPPORTED, "chat template: '%.48s%s' is no built-in name and has no known markers",
                  tmpl, strlen(tmpl) > 48 ? "..." : "");
        return -(int32_t) TERN_ERR_UNSUPPORTED;
    }
    chat_writer w = {buf, buf && length > 0 ? (size_t) length : 0, 0};
    tern_status s = chat_tmpl_apply(t, msgs, n_msgs, add_assistant != 0, &w);
    if (s != TERN_OK) return -(int32_t) s;
    if (w.len > (uint64_t) INT32_MAX) {
        tern_fail(TERN_ERR_INVALID_ARG, "chat template: formatted text of %llu bytes exceeds INT32_MAX",
                  (unsigned long long) w.len);
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    if (w.len < w.cap) buf[w.len] = 0;
    return (int32_t) w.len;
}

extern "C" tern_chat_params tern_chat_default_params(void) {
    tern_chat_params p;
    memset(&p, 0, sizeof(p));
    p.use_jinja = 1;
    p.add_generation_prompt = 1;
    p.now = -1;
    return p;
}

#if TERN_WITH_JINJA
// The text out to the caller's buffer as tern_chat_apply_template writes it.
static int32_t deliver(const char * text, size_t n, char * buf, int32_t length) {
    if (n > (size_t) INT32_MAX) {
        tern_fail(TERN_ERR_INVALID_ARG, "chat template: formatted text of %zu bytes exceeds INT32_MAX", n);
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    if (buf && length > 0) {
        size_t k = n < (size_t) length ? n : (size_t) length;
        memcpy(buf, text, k);
        if (n < (size_t) length) buf[n] = 0;
    }
    return (int32_t) n;
}
#endif

static int32_t apply_builtin(chat_tmpl t, const tern_chat_message * msgs, size_t n, bool add_ass, char * buf,
                             int32_t length) {
    chat_writer w = {buf, buf && length > 0 ? (size_t) length : 0, 0};
    tern_status s = chat_tmpl_apply(t, msgs, n, add_ass, &w);
    if (s != TERN_OK) return -(int32_t) s;
    if (w.len > (uint64_t) INT32_MAX) {
        tern_fail(TERN_ERR_INVALID_ARG, "chat template: formatted text of %llu bytes exceeds INT32_MAX",
                  (unsigned long long) w.len);
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    if (w.len < w.cap) buf[w.len] = 0;
    return (int32_t) w.len;
}

#if TERN_WITH_JINJA
// A token's text with special tokens written out (BOS / EOS for the template).
static size_t token_text(const tern_model * m, tern_token t, char * buf, size_t cap) {
    if (!m || t < 0) return 0;
    int32_t n = tern_token_to_piece(m, t, buf, (int32_t) cap - 1, 1);
    if (n < 0) n = 0;
    buf[n] = 0;
    return (size_t) n;
}

static jclock chat_clock(int64_t now) {
    jclock c = {0, 0};
    if (now >= 0) {
        c.now = now;
        return c;
    }
    // SOURCE_DATE_EPOCH (reproducible builds' variable) fixes the date from outside.
    if (const char * e = port_getenv("SOURCE_DATE_EPOCH")) {
        char * end;
        long long v = strtoll(e, &end, 10);
        if (end != e && *end == 0 && v >= 0) {
            c.now = v;
            return c;
        }
    }
    int64_t s;
    int32_t off;
    if (port_wall_clock(&s, &off)) {
        c.now = s;
        c.utc_offset = off;
    }
    return c;
}

// Parse an optional JSON input into the arena; NULL text gives NULL.
static bool json_input(const char * what, const char * text, tern_arena * a, json_node ** out) {
    *out = NULL;
    if (!text) return true;
    char err[160];
    *out = json_parse(text, strlen(text), a, err, sizeof(err));
    if (!*out) {
        tern_fail(TERN_ERR_INVALID_ARG, "chat: %s: %s", what, err);
        return false;
    }
    return true;
}
#endif

extern "C" int32_t tern_chat_apply(const tern_model * model, const tern_chat_params * params,
                                   const tern_chat_message * msgs, size_t n_msgs, char * buf, int32_t length) {
    tern_chat_params p = params ? *params : tern_chat_default_params();
    // The template text: given, the model's (a view into the file), or chatml.
    const char * tmpl = p.tmpl;
    size_t tmpl_len = tmpl ? strlen(tmpl) : 0;
    if (!tmpl && model) {
        gguf_str gs;
        if (gguf_get_str(&model->files.splits[0], "tokenizer.chat_template", &gs)) {
            tmpl = gs.data;
            tmpl_len = (size_t) gs.len;
        }
    }
    if (!tmpl) {
        tmpl = "chatml";
        tmpl_len = 6;
    }
    if (n_msgs > 0 && !msgs && !p.messages_json) {
        tern_fail(TERN_ERR_INVALID_ARG, "chat: messages is NULL with n_msgs = %zu", n_msgs);
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    chat_tmpl named = chat_tmpl_from_name(tmpl, tmpl_len);
    if (named != CHAT_TMPL_UNKNOWN || !p.use_jinja || !TERN_WITH_JINJA) {
        chat_tmpl t = named != CHAT_TMPL_UNKNOWN ? named : chat_tmpl_detect(tmpl, tmpl_len);
        if (t == CHAT_TMPL_UNKNOWN) {
            tern_fail(TERN_ERR_UNSUPPORTED, "chat template: '%.48s%s' is no built-in name and has no known markers%s", tmpl,
                      tmpl_len > 48 ? "..." : "", TERN_WITH_JINJA ? "" : " (this build has no Jinja engine: TERN_JINJA)");
            return -(int32_t) TERN_ERR_UNSUPPORTED;
        }
        if (p.messages_json) {
            tern_fail(TERN_ERR_UNSUPPORTED, "chat: a built-in template takes role / content messages, not messages_json");
            return -(int32_t) TERN_ERR_UNSUPPORTED;
        }
        return apply_builtin(t, msgs, n_msgs, p.add_generation_prompt != 0, buf, length);
    }
#if TERN_WITH_JINJA
    const size_t mem_size = p.mem ? p.mem_size : (p.mem_size ? p.mem_size : (size_t) 32 << 20);
    void * owned = p.mem ? NULL : port_alloc(mem_size);
    void * mem = p.mem ? p.mem : owned;
    if (!mem) {
        tern_fail(TERN_ERR_NO_MEMORY, "chat: cannot obtain %zu bytes for the template engine", mem_size);
        return -(int32_t) TERN_ERR_NO_MEMORY;
    }
    // JSON inputs first (an arena over the block's start), then the engine's bump block.
    size_t json_need = 0;
    const char * const inputs[3] = {p.messages_json, p.tools_json, p.extra_json};
    for (const char * t : inputs) {
        if (!t) continue;
        char err[160];
        size_t need = json_measure(t, strlen(t), err, sizeof(err));
        if (need == 0) {
            port_free(owned);
            tern_fail(TERN_ERR_INVALID_ARG, "chat: %s: %s",
                      t == p.messages_json ? "messages_json" : t == p.tools_json ? "tools_json" : "extra_json", err);
            return -(int32_t) TERN_ERR_INVALID_ARG;
        }
        json_need += need;
    }
    tern_arena a;
    json_node * jmsgs = NULL, * jtools = NULL, * jextra = NULL;
    const size_t json_bytes = json_need ? arena_buffer_size(json_need) : 0;
    if (json_bytes >= mem_size || (json_bytes && !arena_init(&a, mem, json_bytes))) {
        port_free(owned);
        tern_fail(TERN_ERR_NO_MEMORY, "chat: %zu bytes are too few for the JSON inputs", mem_size);
        return -(int32_t) TERN_ERR_NO_MEMORY;
    }
    if (json_bytes && (!json_input("messages_json", p.messages_json, &a, &jmsgs) ||
                       !json_input("tools_json", p.tools_json, &a, &jtools) ||
                       !json_input("extra_json", p.extra_json, &a, &jextra))) {
        port_free(owned);
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    if (jextra && jextra->type != JSON_OBJECT) {
        port_free(owned);
        tern_fail(TERN_ERR_INVALID_ARG, "chat: extra_json must be a JSON object");
        return -(int32_t) TERN_ERR_INVALID_ARG;
    }
    for (size_t i = 0; !jmsgs && i < n_msgs; i++) {
        if (!msgs[i].role || !msgs[i].content) {
            port_free(owned);
            tern_fail(TERN_ERR_INVALID_ARG, "chat: message %zu has a NULL %s", i, msgs[i].role ? "content" : "role");
            return -(int32_t) TERN_ERR_INVALID_ARG;
        }
    }
    char bos[256], eos[256];
    const char * bos_text = p.bos_token;
    const char * eos_text = p.eos_token;
    if (!bos_text) bos_text = token_text(model, model ? tern_token_bos(model) : -1, bos, sizeof(bos)) ? bos : "";
    if (!eos_text) eos_text = token_text(model, model ? tern_token_eos(model) : -1, eos, sizeof(eos)) ? eos : "";
    jmem jm = {(uint8_t *) mem + json_bytes, mem_size - json_bytes, 0, 0, 0};
    jinja_limits lim = jinja_default_limits();
    if (p.max_output) lim.max_output = p.max_output;
    if (p.max_steps) lim.max_steps = p.max_steps;
    chat_jinja_input in;
    memset(&in, 0, sizeof(in));
    in.tmpl = tmpl;
    in.tmpl_len = tmpl_len;
    in.msgs = msgs;
    in.n_msgs = n_msgs;
    in.messages = jmsgs;
    in.tools = jtools;
    in.extra = jextra;
    in.bos = bos_text;
    in.eos = eos_text;
    in.add_generation_prompt = p.add_generation_prompt != 0;
    in.clock = chat_clock(p.now);
    const char * out = NULL;
    size_t out_len = 0;
    bool parse_failed = false;
    char err[320];
    const jmem jm_start = jm;
    tern_status st = chat_jinja_apply(&in, &jm, &lim, &out, &out_len, &parse_failed, err, sizeof(err));
    if (st != TERN_OK && parse_failed) {
        // The engine cannot read it: llama.cpp's --jinja path then runs its ChatML
        // template instead (common_chat_templates_init), and so does Tern.
        TERN_LOG_AT(TERN_LOG_WARN, "chat template: %s; using ChatML instead (as llama.cpp)\n", err);
        static const char k_chatml_jinja[] =
            "{%- for message in messages -%}\n"
            "  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n"
            "{%- endfor -%}\n"
            "{%- if add_generation_prompt -%}\n"
            "  {{- '<|im_start|>assistant\\n' -}}\n"
            "{%- endif -%}";
        in.tmpl = k_chatml_jinja;
        in.tmpl_len = sizeof(k_chatml_jinja) - 1;
        jm = jm_start;
        st = chat_jinja_apply(&in, &jm, &lim, &out, &out_len, &parse_failed, err, sizeof(err));
    }
    int32_t r;
    if (st == TERN_OK) {
        r = deliver(out, out_len, buf, length);
    } else {
        tern_fail(st, "chat template: %s", err);
        r = -(int32_t) st;
    }
    port_free(owned);
    return r;
#else
    return -(int32_t) TERN_ERR_UNSUPPORTED;
#endif
}

extern "C" int32_t tern_chat_builtin_templates(const char ** names, size_t n) {
    for (size_t i = 0; names && i < n && i < (size_t) CHAT_TMPL_COUNT; i++) names[i] = chat_tmpl_name((chat_tmpl) i);
    return (int32_t) CHAT_TMPL_COUNT;
}

extern "C" int32_t tern_model_chat_template(const tern_model * m, char * buf, size_t buf_size) {
    if (!m) return -1;
    gguf_str s;
    if (!gguf_get_str(&m->files.splits[0], "tokenizer.chat_template", &s)) return -1;
    if (buf && buf_size > 0) {
        size_t n = s.len < buf_size - 1 ? (size_t) s.len : buf_size - 1;
        memcpy(buf, s.data, n);
        buf[n] = 0;
    }
    return s.len > (uint64_t) INT32_MAX ? INT32_MAX : (int32_t) s.len;
}

}  // namespace tern
