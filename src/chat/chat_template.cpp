// Built-in chat templates and their detection (see chat_template.h). The output of
// every template is byte-identical to llama.cpp's llm_chat_apply_template (commit
// c392e509), including its quirks: which roles a template drops, where content is
// trimmed, templates that never add the assistant prompt.
#include "chat/chat_template.h"
#include "core/status.h"

#include <string.h>

namespace tern {

namespace {

// A byte range (not NUL-terminated).
struct view {
    const char * p;
    size_t       n;
};

view cstr(const char * s) { return view{s, strlen(s)}; }

bool eq(view v, const char * z) {
    size_t n = strlen(z);
    return v.n == n && memcmp(v.p, z, n) == 0;
}

bool contains(view hay, const char * needle) {
    size_t n = strlen(needle);
    if (n == 0) return true;
    if (n > hay.n) return false;
    const char first = needle[0];
    for (size_t i = 0; i + n <= hay.n; i++) {
        if (hay.p[i] == first && memcmp(hay.p + i, needle, n) == 0) return true;
    }
    return false;
}

bool starts_with(view v, const char * prefix) {
    size_t n = strlen(prefix);
    return v.n >= n && memcmp(v.p, prefix, n) == 0;
}

// isspace() of the "C" locale.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

view trim(view v) {
    while (v.n > 0 && is_space(v.p[0])) { v.p++; v.n--; }
    while (v.n > 0 && is_space(v.p[v.n - 1])) v.n--;
    return v;
}

constexpr const char * k_names[CHAT_TMPL_COUNT] = {
    "chatglm3", "chatglm4", "chatml", "command-r", "deepseek", "deepseek2", "deepseek3", "exaone3",
    "falcon3", "gemma", "gigachat", "glmedge", "granite", "llama2", "llama2-sys", "llama2-sys-bos",
    "llama2-sys-strip", "llama3", "megrez", "minicpm", "mistral-v1", "mistral-v3", "mistral-v3-tekken",
    "mistral-v7", "monarch", "openchat", "orion", "phi3", "phi4", "rwkv-world", "vicuna", "vicuna-orca",
    "zephyr",
};

// Non-ASCII markers, spelled as UTF-8 bytes (split where a hex escape would swallow a letter).
#define U8_MINICPM_USER  "<\xe7\x94\xa8\xe6\x88\xb7>"                          /* <用户> */
#define U8_FW_BAR        "\xef\xbd\x9c"                                        /* ｜ U+FF5C */
#define U8_LOWER_BLOCK   "\xe2\x96\x81"                                        /* ▁ U+2581 */
#define U8_DS_USER       "<" U8_FW_BAR "User" U8_FW_BAR ">"                    /* <｜User｜> */
#define U8_DS_ASSISTANT  "<" U8_FW_BAR "Assistant" U8_FW_BAR ">"               /* <｜Assistant｜> */
#define U8_DS_EOS        "<" U8_FW_BAR "end" U8_LOWER_BLOCK "of" U8_LOWER_BLOCK "sentence" U8_FW_BAR ">"

// ---- output ----

struct out {
    chat_writer * w;

    void put(const char * s, size_t n) {
        if (w->len < w->cap) {
            size_t room = w->cap - (size_t) w->len;
            memcpy(w->buf + w->len, s, n < room ? n : room);
        }
        w->len += n;
    }
    out & operator<<(const char * z) { put(z, strlen(z)); return *this; }
    out & operator<<(view v) { put(v.p, v.n); return *this; }
};

struct msg {
    view role;
    view content;
};

msg msg_at(const tern_chat_message * msgs, size_t i) { return msg{cstr(msgs[i].role), cstr(msgs[i].content)}; }

// ---- the templates ----

void fmt_chatml(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|im_start|>" << x.role << "\n" << x.content << "<|im_end|>\n";
    }
    if (add_ass) o << "<|im_start|>assistant\n";
}

void fmt_mistral_v7(out & o, const tern_chat_message * m, size_t n) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << "[SYSTEM_PROMPT] " << x.content << "[/SYSTEM_PROMPT]";
        } else if (eq(x.role, "user")) {
            o << "[INST] " << x.content << "[/INST]";
        } else {
            o << " " << x.content << "</s>";
        }
    }
}

// mistral-v1 / v3 / v3-tekken: differ in the spaces around [INST] and whether
// assistant content is trimmed.
void fmt_mistral(out & o, chat_tmpl t, const tern_chat_message * m, size_t n) {
    const char * lead = t == CHAT_TMPL_MISTRAL_V1 ? " " : "";
    const char * trail = t == CHAT_TMPL_MISTRAL_V3_TEKKEN ? "" : " ";
    const bool trim_assistant = t == CHAT_TMPL_MISTRAL_V3;
    bool in_turn = false;
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (!in_turn) {
            o << lead << "[INST]" << trail;
            in_turn = true;
        }
        if (eq(x.role, "system")) {
            o << x.content << "\n\n";
        } else if (eq(x.role, "user")) {
            o << x.content << lead << "[/INST]";
        } else {
            o << trail << (trim_assistant ? trim(x.content) : x.content) << "</s>";
            in_turn = false;
        }
    }
}

void fmt_llama2(out & o, chat_tmpl t, const tern_chat_message * m, size_t n) {
    const bool sys_block = t != CHAT_TMPL_LLAMA2;
    const bool bos_in_history = t == CHAT_TMPL_LLAMA2_SYS_BOS;
    const bool strip = t == CHAT_TMPL_LLAMA2_SYS_STRIP;
    bool in_turn = true;  // the first [INST] is written without BOS
    o << "[INST] ";
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        view c = strip ? trim(x.content) : x.content;
        if (!in_turn) {
            in_turn = true;
            o << (bos_in_history ? "<s>[INST] " : "[INST] ");
        }
        if (eq(x.role, "system")) {
            if (sys_block) {
                o << "<<SYS>>\n" << c << "\n<</SYS>>\n\n";
            } else {
                o << c << "\n";  // no system block: the text leads the first user turn
            }
        } else if (eq(x.role, "user")) {
            o << c << " [/INST]";
        } else {
            o << c << "</s>";
            in_turn = false;
        }
    }
}

// "<|role|>\n" + content + end, for every role (phi3, falcon3, zephyr).
void fmt_role_bars(out & o, const tern_chat_message * m, size_t n, bool add_ass, const char * end) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|" << x.role << "|>\n" << x.content << end;
    }
    if (add_ass) o << "<|assistant|>\n";
}

void fmt_phi4(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|im_start|>" << x.role << "<|im_sep|>" << x.content << "<|im_end|>";
    }
    if (add_ass) o << "<|im_start|>assistant<|im_sep|>";
}

void fmt_monarch(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << (i == 0 ? "" : "<s>") << x.role << "\n" << x.content << "</s>\n";
    }
    if (add_ass) o << "<s>assistant\n";
}

void fmt_gemma(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    view system = {"", 0};  // merged into the next user turn
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            system = trim(x.content);
            continue;
        }
        const bool model = eq(x.role, "assistant") || eq(x.role, "model");
        o << "<start_of_turn>" << (eq(x.role, "assistant") ? cstr("model") : x.role) << "\n";
        if (system.n > 0 && !model) {
            o << system << "\n\n";
            system = view{"", 0};
        }
        o << trim(x.content) << "<end_of_turn>\n";
    }
    if (add_ass) o << "<start_of_turn>model\n";
}

void fmt_orion(out & o, const tern_chat_message * m, size_t n) {
    view system = {"", 0};
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            system = x.content;
        } else if (eq(x.role, "user")) {
            o << "Human: ";
            if (system.n > 0) {
                o << system << "\n\n";
                system = view{"", 0};
            }
            o << x.content << "\n\nAssistant: </s>";
        } else {
            o << x.content << "</s>";
        }
    }
}

void fmt_openchat(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << x.content << "<|end_of_turn|>";
            continue;
        }
        // The role with its first byte upper-cased (ASCII only, as toupper in the "C" locale).
        o << "GPT4 Correct ";
        if (x.role.n > 0) {
            char first = x.role.p[0];
            if (first >= 'a' && first <= 'z') first = (char) (first - 'a' + 'A');
            o.put(&first, 1);
            o << view{x.role.p + 1, x.role.n - 1};
        }
        o << ": " << x.content << "<|end_of_turn|>";
    }
    if (add_ass) o << "GPT4 Correct Assistant:";
}

void fmt_vicuna(out & o, bool orca, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            if (orca) o << "SYSTEM: " << x.content << "\n";
            else      o << x.content << "\n\n";
        } else if (eq(x.role, "user")) {
            o << "USER: " << x.content << "\n";
        } else if (eq(x.role, "assistant")) {
            o << "ASSISTANT: " << x.content << "</s>\n";
        }
    }
    if (add_ass) o << "ASSISTANT:";
}

void fmt_deepseek(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << x.content;
        } else if (eq(x.role, "user")) {
            o << "### Instruction:\n" << x.content << "\n";
        } else if (eq(x.role, "assistant")) {
            o << "### Response:\n" << x.content << "\n<|EOT|>\n";
        }
    }
    if (add_ass) o << "### Response:\n";
}

void fmt_command_r(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        const char * token = eq(x.role, "system") ? "<|SYSTEM_TOKEN|>"
                           : eq(x.role, "user") ? "<|USER_TOKEN|>"
                           : eq(x.role, "assistant") ? "<|CHATBOT_TOKEN|>" : NULL;
        if (token) o << "<|START_OF_TURN_TOKEN|>" << token << trim(x.content) << "<|END_OF_TURN_TOKEN|>";
    }
    if (add_ass) o << "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
}

void fmt_llama3(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|start_header_id|>" << x.role << "<|end_header_id|>\n\n" << trim(x.content) << "<|eot_id|>";
    }
    if (add_ass) o << "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// chatglm3 ("[gMASK]sop", "\n " before content), chatglm4 ("[gMASK]<sop>"), glmedge (no prefix).
void fmt_glm(out & o, const char * prefix, const char * sep, const tern_chat_message * m, size_t n, bool add_ass) {
    o << prefix;
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|" << x.role << "|>" << sep << x.content;
    }
    if (add_ass) o << "<|assistant|>";
}

void fmt_minicpm(out & o, const tern_chat_message * m, size_t n) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "user")) o << U8_MINICPM_USER << trim(x.content) << "<AI>";
        else                    o << trim(x.content);
    }
}

void fmt_deepseek2(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << x.content << "\n\n";
        } else if (eq(x.role, "user")) {
            o << "User: " << x.content << "\n\n";
        } else if (eq(x.role, "assistant")) {
            o << "Assistant: " << x.content << U8_DS_EOS;
        }
    }
    if (add_ass) o << "Assistant:";
}

void fmt_deepseek3(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << x.content << "\n\n";
        } else if (eq(x.role, "user")) {
            o << U8_DS_USER << x.content;
        } else if (eq(x.role, "assistant")) {
            o << U8_DS_ASSISTANT << x.content << U8_DS_EOS;
        }
    }
    if (add_ass) o << U8_DS_ASSISTANT;
}

void fmt_exaone3(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "system")) {
            o << "[|system|]" << trim(x.content) << "[|endofturn|]\n";
        } else if (eq(x.role, "user")) {
            o << "[|user|]" << trim(x.content) << "\n";
        } else if (eq(x.role, "assistant")) {
            o << "[|assistant|]" << trim(x.content) << "[|endofturn|]\n";
        }
    }
    if (add_ass) o << "[|assistant|]";
}

void fmt_rwkv_world(out & o, const tern_chat_message * m, size_t n) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "user")) o << "User: " << x.content << "\n\nAssistant:";
        else                    o << x.content << "\n\n";
    }
}

void fmt_granite(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|start_of_role|>" << x.role << "<|end_of_role|>";
        if (eq(x.role, "assistant_tool_call")) o << "<|tool_call|>";
        o << x.content << "<|end_of_text|>\n";
    }
    if (add_ass) o << "<|start_of_role|>assistant<|end_of_role|>\n";
}

void fmt_gigachat(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    const bool has_system = n > 0 && eq(cstr(m[0].role), "system");
    o << "<s>";
    if (has_system) o << cstr(m[0].content) << "<|message_sep|>";
    for (size_t i = has_system ? 1 : 0; i < n; i++) {
        msg x = msg_at(m, i);
        if (eq(x.role, "user")) {
            o << "user<|role_sep|>" << x.content << "<|message_sep|>"
              << "available functions<|role_sep|>[]<|message_sep|>";
        } else if (eq(x.role, "assistant")) {
            o << "assistant<|role_sep|>" << x.content << "<|message_sep|>";
        }
    }
    if (add_ass) o << "assistant<|role_sep|>";
}

void fmt_megrez(out & o, const tern_chat_message * m, size_t n, bool add_ass) {
    for (size_t i = 0; i < n; i++) {
        msg x = msg_at(m, i);
        o << "<|role_start|>" << x.role << "<|role_end|>" << x.content << "<|turn_end|>";
    }
    if (add_ass) o << "<|role_start|>assistant<|role_end|>";
}

}  // namespace

const char * chat_tmpl_name(chat_tmpl t) {
    return (int) t >= 0 && (int) t < CHAT_TMPL_COUNT ? k_names[t] : NULL;
}

chat_tmpl chat_tmpl_from_name(const char * s, size_t len) {
    if (!s) return CHAT_TMPL_UNKNOWN;
    view v = {s, len};
    for (int i = 0; i < CHAT_TMPL_COUNT; i++) {
        if (eq(v, k_names[i])) return (chat_tmpl) i;
    }
    return CHAT_TMPL_UNKNOWN;
}

chat_tmpl chat_tmpl_detect(const char * s, size_t len) {
    chat_tmpl named = chat_tmpl_from_name(s, len);
    if (named != CHAT_TMPL_UNKNOWN || !s) return named;
    const view t = {s, len};
    auto has = [&t](const char * marker) { return contains(t, marker); };

    if (has("<|im_start|>")) {
        return has("<|im_sep|>") ? CHAT_TMPL_PHI4 : CHAT_TMPL_CHATML;
    }
    if (starts_with(t, "mistral") || has("[INST]")) {
        if (has("[SYSTEM_PROMPT]")) return CHAT_TMPL_MISTRAL_V7;
        // Mistral's official v1 / v3 / v3-tekken templates.
        if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
            if (has(" [INST]")) return CHAT_TMPL_MISTRAL_V1;
            if (has("\"[INST]\"")) return CHAT_TMPL_MISTRAL_V3_TEKKEN;
            return CHAT_TMPL_MISTRAL_V3;
        }
        // llama2 and its variants.
        if (has("content.strip()")) return CHAT_TMPL_LLAMA2_SYS_STRIP;
        if (has("bos_token + '[INST]")) return CHAT_TMPL_LLAMA2_SYS_BOS;
        if (has("<<SYS>>")) return CHAT_TMPL_LLAMA2_SYS;
        return CHAT_TMPL_LLAMA2;
    }
    if (has("<|assistant|>") && has("<|end|>")) return CHAT_TMPL_PHI3;
    if (has("<|assistant|>") && has("<|user|>")) return has("</s>") ? CHAT_TMPL_FALCON3 : CHAT_TMPL_GLMEDGE;
    if (has("<|user|>") && has("<|endoftext|>")) return CHAT_TMPL_ZEPHYR;
    if (has("bos_token + message['role']")) return CHAT_TMPL_MONARCH;
    if (has("<start_of_turn>")) return CHAT_TMPL_GEMMA;
    if (has("'\\n\\nAssistant: ' + eos_token")) return CHAT_TMPL_ORION;      // OrionStarAI/Orion-14B-Chat
    if (has("GPT4 Correct ")) return CHAT_TMPL_OPENCHAT;                     // openchat/openchat-3.5-0106
    if (has("USER: ") && has("ASSISTANT: ")) {                               // vicuna 1.1, Orca-Vicuna
        return has("SYSTEM: ") ? CHAT_TMPL_VICUNA_ORCA : CHAT_TMPL_VICUNA;
    }
    if (has("### Instruction:") && has("<|EOT|>")) return CHAT_TMPL_DEEPSEEK; // deepseek-coder-instruct
    if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return CHAT_TMPL_COMMAND_R;
    if (has("<|start_header_id|>") && has("<|end_header_id|>")) return CHAT_TMPL_LLAMA3;
    if (has("[gMASK]sop")) return CHAT_TMPL_CHATGLM3;
    if (has("[gMASK]<sop>")) return CHAT_TMPL_CHATGLM4;
    if (has(U8_MINICPM_USER)) return CHAT_TMPL_MINICPM;
    if (has("'Assistant: ' + message['content'] + eos_token")) return CHAT_TMPL_DEEPSEEK2;
    if (has(U8_DS_ASSISTANT) && has(U8_DS_USER) && has(U8_DS_EOS)) return CHAT_TMPL_DEEPSEEK3;
    if (has("[|system|]") && has("[|assistant|]") && has("[|endofturn|]")) return CHAT_TMPL_EXAONE3;
    if (has("rwkv-world")) return CHAT_TMPL_RWKV_WORLD;
    if (has("<|start_of_role|>")) return CHAT_TMPL_GRANITE;
    if (has("message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]")) {
        return CHAT_TMPL_GIGACHAT;
    }
    if (has("<|role_start|>")) return CHAT_TMPL_MEGREZ;
    return CHAT_TMPL_UNKNOWN;
}

tern_status chat_tmpl_apply(chat_tmpl t, const tern_chat_message * msgs, size_t n, bool add_ass, chat_writer * w) {
    if (!w) return tern_fail(TERN_ERR_INVALID_ARG, "chat template: no output");
    if (n > 0 && !msgs) return tern_fail(TERN_ERR_INVALID_ARG, "chat template: messages is NULL with n_msgs = %zu", n);
    for (size_t i = 0; i < n; i++) {
        if (!msgs[i].role || !msgs[i].content) {
            return tern_fail(TERN_ERR_INVALID_ARG, "chat template: message %zu has a NULL %s", i,
                             msgs[i].role ? "content" : "role");
        }
    }
    out o = {w};
    switch (t) {
        case CHAT_TMPL_CHATML:            fmt_chatml(o, msgs, n, add_ass); break;
        case CHAT_TMPL_MISTRAL_V7:        fmt_mistral_v7(o, msgs, n); break;
        case CHAT_TMPL_MISTRAL_V1:
        case CHAT_TMPL_MISTRAL_V3:
        case CHAT_TMPL_MISTRAL_V3_TEKKEN: fmt_mistral(o, t, msgs, n); break;
        case CHAT_TMPL_LLAMA2:
        case CHAT_TMPL_LLAMA2_SYS:
        case CHAT_TMPL_LLAMA2_SYS_BOS:
        case CHAT_TMPL_LLAMA2_SYS_STRIP:  fmt_llama2(o, t, msgs, n); break;
        case CHAT_TMPL_PHI3:              fmt_role_bars(o, msgs, n, add_ass, "<|end|>\n"); break;
        case CHAT_TMPL_PHI4:              fmt_phi4(o, msgs, n, add_ass); break;
        case CHAT_TMPL_FALCON3:           fmt_role_bars(o, msgs, n, add_ass, "\n"); break;
        case CHAT_TMPL_ZEPHYR:            fmt_role_bars(o, msgs, n, add_ass, "<|endoftext|>\n"); break;
        case CHAT_TMPL_MONARCH:           fmt_monarch(o, msgs, n, add_ass); break;
        case CHAT_TMPL_GEMMA:             fmt_gemma(o, msgs, n, add_ass); break;
        case CHAT_TMPL_ORION:             fmt_orion(o, msgs, n); break;
        case CHAT_TMPL_OPENCHAT:          fmt_openchat(o, msgs, n, add_ass); break;
        case CHAT_TMPL_VICUNA:            fmt_vicuna(o, false, msgs, n, add_ass); break;
        case CHAT_TMPL_VICUNA_ORCA:       fmt_vicuna(o, true, msgs, n, add_ass); break;
        case CHAT_TMPL_DEEPSEEK:          fmt_deepseek(o, msgs, n, add_ass); break;
        case CHAT_TMPL_COMMAND_R:         fmt_command_r(o, msgs, n, add_ass); break;
        case CHAT_TMPL_LLAMA3:            fmt_llama3(o, msgs, n, add_ass); break;
        case CHAT_TMPL_CHATGLM3:          fmt_glm(o, "[gMASK]sop", "\n ", msgs, n, add_ass); break;
        case CHAT_TMPL_CHATGLM4:          fmt_glm(o, "[gMASK]<sop>", "\n", msgs, n, add_ass); break;
        case CHAT_TMPL_GLMEDGE:           fmt_glm(o, "", "\n", msgs, n, add_ass); break;
        case CHAT_TMPL_MINICPM:           fmt_minicpm(o, msgs, n); break;
        case CHAT_TMPL_DEEPSEEK2:         fmt_deepseek2(o, msgs, n, add_ass); break;
        case CHAT_TMPL_DEEPSEEK3:         fmt_deepseek3(o, msgs, n, add_ass); break;
        case CHAT_TMPL_EXAONE3:           fmt_exaone3(o, msgs, n, add_ass); break;
        case CHAT_TMPL_RWKV_WORLD:        fmt_rwkv_world(o, msgs, n); break;
        case CHAT_TMPL_GRANITE:           fmt_granite(o, msgs, n, add_ass); break;
        case CHAT_TMPL_GIGACHAT:          fmt_gigachat(o, msgs, n, add_ass); break;
        case CHAT_TMPL_MEGREZ:            fmt_megrez(o, msgs, n, add_ass); break;
        default:
            return tern_fail(TERN_ERR_UNSUPPORTED, "chat template: unknown template %d", (int) t);
    }
    return TERN_OK;
}

}  // namespace tern
