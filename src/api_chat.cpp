// tern.h entry points: chat templates (src/chat/) and a model's own template text.
#include "tern.h"
#include "chat/chat_template.h"
#include "core/status.h"
#include "gguf/gguf.h"
#include "model/model.h"

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
