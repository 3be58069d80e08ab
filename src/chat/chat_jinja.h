// A conversation through a model's own Jinja chat template, as llama.cpp's
// --jinja path formats it (common_chat_templates_apply with minja's
// chat_template):
//
//   1. What the template can do is found by rendering it on probe
//      conversations (minja's capabilities): does it print a system message,
//      tools, tool calls (with string or object arguments), tool responses,
//      does it need typed content parts or non-null content.
//   2. What it cannot do is rewritten into what it can (minja's polyfills):
//      system messages merged into the next user message, tools described in
//      a system message, tool calls and responses written as JSON text,
//      arguments parsed into objects, content as typed parts.
//   3. The template renders with messages, add_generation_prompt, bos_token,
//      eos_token, tools, strftime_now(), date_string ("28 Nov 2026") and
//      datetime ("Nov 28 2026") from the clock below, as llama.cpp's chat
//      path defines them, and any extra variables (which win); a leading BOS
//      and a trailing EOS are removed from the text (the tokenizer adds them).
//
// Messages arrive as a JSON array (OpenAI style: role, content, tool_calls,
// name, tool_call_id, ...) or as role / content pairs; empty content becomes
// null, as llama.cpp's messages do. A render that fails where a message has a
// null content runs once more with "" there (minja measures that need,
// requires_non_null_content, and llama.cpp's newer path acts on it).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "chat/jinja.h"
#include "core/json.h"
#include "tern.h"

namespace tern {

struct chat_jinja_input {
    const char *              tmpl;
    size_t                    tmpl_len;
    const tern_chat_message * msgs;            // used when messages is NULL
    size_t                    n_msgs;
    const json_node *         messages;        // a JSON array, or NULL
    const json_node *         tools;           // a JSON array, or NULL
    const json_node *         extra;           // a JSON object of more variables, or NULL
    const char *              bos;
    const char *              eos;
    bool                      add_generation_prompt;
    jclock                    clock;
};

// Format into m (the template's parse and every render use it); *out is in m.
// TERN_ERR_INVALID_ARG with err set when the template does not parse
// (*parse_failed true then) or fails while rendering.
tern_status chat_jinja_apply(const chat_jinja_input * in, jmem * m, const jinja_limits * lim, const char ** out,
                             size_t * out_len, bool * parse_failed, char * err, size_t err_size);

}  // namespace tern
