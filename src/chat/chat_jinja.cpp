// A conversation through a model's Jinja template (see chat_jinja.h): probe
// renders for the template's capabilities, minja's polyfills, the render.
#include "chat/chat_jinja.h"

#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include "chat/jinja_ast.h"
#include "core/status.h"

namespace tern {

namespace {

const char * const USER_NEEDLE = "<User Needle>";
const char * const SYS_NEEDLE = "<System Needle>";

struct caps {
    bool supports_tools;
    bool supports_tool_calls;
    bool supports_tool_responses;
    bool supports_system_role;
    bool requires_object_arguments;
    bool requires_typed_content;
    char spent[320];   // the error of a probe that used up the step budget (the call fails with it)
};

// A render that failed for the shared step budget: the call fails with its
// error (it names where the template was), not the next render's line 1.
void keep_budget_error(const jmem * m, const jinja_limits * lim, const char * err, char * spent) {
    if (m->spent > lim->max_steps && !spent[0]) snprintf(spent, 320, "%s", err);
}

// Values are built with a render state that only allocates and records errors.
struct builder {
    jrender r;
    explicit builder(jmem * m, const jinja_limits * lim) {
        memset(&r, 0, sizeof(r));
        r.m = m;
        r.lim = *lim;
    }
    jv str(const char * z) { return jv_cstr(&r, z); }
    jv dict() { return jv_new_dict(&r, 4); }
    jv list() { return jv_new_list(&r, 4); }
    void set(jv & d, const char * k, jv v) { jdict_set(&r, d.o, jv_cstr(&r, k), v); }
    void push(jv & l, jv v) { jlist_push(&r, l.l, v); }
    jv msg(const char * role, jv content) {
        jv d = dict();
        set(d, "role", str(role));
        set(d, "content", content);
        return d;
    }
    // JSON tree -> value (nesting is bounded by the JSON reader's depth).
    jv from_json(const json_node * n, int depth = 0) {
        if (depth > JSON_MAX_DEPTH) { jfail(&r, "JSON nested too deep"); return jv_none(); }
        switch (n->type) {
            case JSON_NULL: return jv_none();
            case JSON_BOOL: return jv_bool(n->b);
            case JSON_INT: return jv_int(n->i);
            case JSON_FLOAT: return jv_float(n->d);
            case JSON_STRING: return jv_str(n->s, n->n);
            case JSON_ARRAY: {
                jv l = jv_new_list(&r, n->n);
                for (const json_node * c = n->first; c && !r.failed; c = c->next) jlist_push(&r, l.l, from_json(c, depth + 1));
                return l;
            }
            case JSON_OBJECT: {
                jv d = jv_new_dict(&r, n->n);
                for (const json_node * c = n->first; c && !r.failed; c = c->next) {
                    jdict_set(&r, d.o, jv_str(c->key, c->key_len), from_json(c, depth + 1));
                }
                return d;
            }
        }
        return jv_none();
    }
};

bool has_text(const char * s, size_t n, const char * needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        if (memcmp(s + i, needle, k) == 0) return true;
    }
    return false;
}

struct render_in {
    jv   messages;
    jv   tools;        // J_UNDEF: none
    jv   extra;        // a dict or J_UNDEF
    bool add_generation_prompt;
    jv   example;      // the tool call example for templates without tools (a string or J_UNDEF)
};

bool render(const jtemplate * t, jmem * m, const jinja_limits * lim, const chat_jinja_input * in, const render_in & ri,
            const jclock & clock, const char ** out, size_t * out_len, char * err, size_t err_size) {
    builder b(m, lim);
    jglobal g[64];
    size_t n = 0;
    g[n++] = jglobal{"messages", ri.messages};
    g[n++] = jglobal{"add_generation_prompt", jv_bool(ri.add_generation_prompt)};
    g[n++] = jglobal{"bos_token", b.str(in->bos ? in->bos : "")};
    g[n++] = jglobal{"eos_token", b.str(in->eos ? in->eos : "")};
    b.r.clock = clock;
    // Today's date for the templates that print it, as llama.cpp's chat path
    // defines them (Llama 3.1 / 3.3: "Today Date: 28 Nov 2026"; FireFunction v2:
    // "Nov 28 2026"); extra_json's come after and win.
    g[n++] = jglobal{"date_string", jinja_strftime(&b.r, "%d %b %Y", 8)};
    g[n++] = jglobal{"datetime", jinja_strftime(&b.r, "%b %d %Y", 8)};
    if (ri.tools.t != J_UNDEF) g[n++] = jglobal{"tools", ri.tools};
    if (ri.extra.t == J_DICT) {
        for (uint32_t i = 0; i < ri.extra.o->n && n < 64; i++) {
            if (ri.extra.o->k[i].t == J_STR) g[n++] = jglobal{ri.extra.o->k[i].s, ri.extra.o->v[i]};
        }
    }
    if (b.r.failed) return false;
    return jinja_render(t, m, lim, g, n, &clock, out, out_len, err, err_size);
}

// minja's try_raw_render: the template on a probe conversation, no polyfills,
// the clock at 0; true when the text holds the needle (a failed render holds nothing).
bool probe(char * spent, const jtemplate * t, jmem * m, const jinja_limits * lim, const chat_jinja_input * in, jv messages,
           jv tools, const char * needle, const char * needle2 = NULL) {
    render_in ri = {messages, tools, jv_undef(), false, jv_undef()};
    const char * out;
    size_t n;
    char err[320];
    jclock zero = {0, 0};
    if (!render(t, m, lim, in, ri, zero, &out, &n, err, sizeof(err))) {
        keep_budget_error(m, lim, err, spent);
        return false;
    }
    return has_text(out, n, needle) || (needle2 && has_text(out, n, needle2));
}

caps detect_caps(const jtemplate * t, jmem * m, const jinja_limits * lim, const chat_jinja_input * in) {
    caps c;
    memset(&c, 0, sizeof(c));
    const size_t mark = m->used;
    builder b(m, lim);
    auto typed = [&](const char * text) {
        jv parts = b.list();
        jv part = b.dict();
        b.set(part, "type", b.str("text"));
        b.set(part, "text", b.str(text));
        b.push(parts, part);
        return parts;
    };
    auto one = [&](jv msg) { jv l = b.list(); b.push(l, msg); return l; };
    jv str_user = b.msg("user", b.str(USER_NEEDLE));
    jv typed_user = b.msg("user", typed(USER_NEEDLE));
    const size_t base = m->used;
    c.requires_typed_content = !probe(c.spent, t, m, lim, in, one(str_user), jv_undef(), USER_NEEDLE);
    m->used = base;
    if (c.requires_typed_content) {
        c.requires_typed_content = probe(c.spent, t, m, lim, in, one(typed_user), jv_undef(), USER_NEEDLE);
        m->used = base;
    }
    jv user = c.requires_typed_content ? typed_user : str_user;
    {
        jv l = b.list();
        b.push(l, b.msg("system", c.requires_typed_content ? typed(SYS_NEEDLE) : b.str(SYS_NEEDLE)));
        b.push(l, user);
        c.supports_system_role = probe(c.spent, t, m, lim, in, l, jv_undef(), SYS_NEEDLE);
        m->used = base;
    }
    {
        // tools: [{"name": "some_tool", "type": "function", "function": {...}}]
        jv tool = b.dict();
        b.set(tool, "name", b.str("some_tool"));
        b.set(tool, "type", b.str("function"));
        jv fn = b.dict();
        b.set(fn, "name", b.str("some_tool"));
        b.set(fn, "description", b.str("Some tool."));
        jv params = b.dict();
        b.set(params, "type", b.str("object"));
        jv props = b.dict();
        jv argp = b.dict();
        b.set(argp, "type", b.str("string"));
        b.set(argp, "description", b.str("Some argument."));
        b.set(props, "arg", argp);
        b.set(params, "properties", props);
        jv req = b.list();
        b.push(req, b.str("arg"));
        b.set(params, "required", req);
        b.set(fn, "parameters", params);
        b.set(tool, "function", fn);
        c.supports_tools = probe(c.spent, t, m, lim, in, one(user), one(tool), "some_tool");
        m->used = base;
    }
    auto tool_call_msg = [&](jv calls) {
        jv d = b.dict();
        b.set(d, "role", b.str("assistant"));
        b.set(d, "content", jv_none());
        b.set(d, "tool_calls", calls);
        return d;
    };
    auto tool_call = [&](const char * name, jv args) {
        jv tc = b.dict();
        b.set(tc, "id", b.str("call_1___"));
        b.set(tc, "type", b.str("function"));
        jv fn = b.dict();
        b.set(fn, "arguments", args);
        b.set(fn, "name", b.str(name));
        b.set(tc, "function", fn);
        return tc;
    };
    jv args_obj = b.dict();
    b.set(args_obj, "argument_needle", b.str("print('Hello, World!')"));
    jv args_str = b.str("{\"argument_needle\":\"print('Hello, World!')\"}");
    const size_t base2 = m->used;   // the probes below reuse what is above
    bool str_args, obj_args;
    {
        jv l = b.list();
        b.push(l, user);
        b.push(l, tool_call_msg(one(tool_call("ipython", args_str))));
        str_args = probe(c.spent, t, m, lim, in, l, jv_undef(), "\"argument_needle\":", "'argument_needle':");
        m->used = base2;
    }
    {
        jv l = b.list();
        b.push(l, user);
        b.push(l, tool_call_msg(one(tool_call("ipython", args_obj))));
        obj_args = probe(c.spent, t, m, lim, in, l, jv_undef(), "\"argument_needle\":", "'argument_needle':");
        m->used = base2;
    }
    c.supports_tool_calls = str_args || obj_args;
    c.requires_object_arguments = !str_args && obj_args;
    if (c.supports_tool_calls) {
        jv args = c.requires_object_arguments ? args_obj : args_str;
        jv l = b.list();
        b.push(l, user);
        b.push(l, tool_call_msg(one(tool_call("test_tool1", args))));
        jv resp = b.dict();
        b.set(resp, "role", b.str("tool"));
        b.set(resp, "name", b.str("test_tool1"));
        b.set(resp, "content", b.str("Some response!"));
        b.set(resp, "tool_call_id", b.str("call_911_"));
        b.push(l, resp);
        c.supports_tool_responses = probe(c.spent, t, m, lim, in, l, jv_undef(), "Some response!");
        m->used = base2;
    }
    m->used = mark;
    return c;
}

// nlohmann's dump(2) of a value (the polyfills write tool calls and responses as JSON text).
jv dump2(jrender * r, const jv & v) {
    jbuf out;
    jbuf_init(&out, r, r->lim.max_output);
    jv_write_repr(r, &out, v, true, 2, 0);
    return jbuf_value(&out);
}

jv * member(const jv & d, const char * k) { return d.t == J_DICT ? jdict_find(d.o, k, strlen(k)) : NULL; }

jv shallow_copy(builder & b, const jv & d) {
    jv c = jv_new_dict(&b.r, d.o->n);
    for (uint32_t i = 0; i < d.o->n; i++) jdict_set(&b.r, c.o, d.o->k[i], d.o->v[i]);
    return c;
}

void erase(jv & d, const char * k) {
    size_t n = strlen(k);
    for (uint32_t i = 0; i < d.o->n; i++) {
        if (d.o->k[i].t == J_STR && d.o->k[i].n == n && memcmp(d.o->k[i].s, k, n) == 0) {
            memmove(d.o->k + i, d.o->k + i + 1, sizeof(jv) * (d.o->n - i - 1));
            memmove(d.o->v + i, d.o->v + i + 1, sizeof(jv) * (d.o->n - i - 1));
            d.o->n--;
            return;
        }
    }
}

// Whether a message has a null content; make_empty: those become "" (in place).
bool null_contents(jv & msgs, bool make_empty) {
    bool any = false;
    for (uint32_t i = 0; msgs.t == J_LIST && i < msgs.l->n; i++) {
        jv * c = msgs.l->v[i].t == J_DICT ? member(msgs.l->v[i], "content") : NULL;
        if (c && c->t == J_NONE) {
            any = true;
            if (!make_empty) continue;
            c->t = J_STR;   // "" (static, NUL-terminated as every string)
            c->n = 0;
            c->s = "";
        }
    }
    return any;
}

// minja's chat_template::apply polyfills. false with err set.
bool polyfill(builder & b, const caps & cp, const render_in & in, jv * out_messages, char * err, size_t err_size) {
    const jv & msgs = in.messages;
    bool has_tools = in.tools.t == J_LIST && in.tools.l->n > 0;
    bool has_tool_calls = false, has_tool_responses = false, has_string_content = false;
    for (uint32_t i = 0; i < msgs.l->n; i++) {
        const jv & m = msgs.l->v[i];
        if (m.t != J_DICT) {
            snprintf(err, err_size, "message %u is not an object", i);
            return false;
        }
        jv * tc = member(m, "tool_calls");
        jv * role = member(m, "role");
        jv * content = member(m, "content");
        if (tc && !jv_null(*tc)) has_tool_calls = true;
        if (role && role->t == J_STR && !strcmp(role->s, "tool")) has_tool_responses = true;
        if (content && content->t == J_STR) has_string_content = true;
    }
    const bool p_system = !cp.supports_system_role;
    const bool p_tools = has_tools && !cp.supports_tools;
    const bool p_tool_calls = has_tool_calls && !cp.supports_tool_calls;
    const bool p_tool_responses = has_tool_responses && !cp.supports_tool_responses;
    const bool p_object_args = has_tool_calls && cp.requires_object_arguments;
    const bool p_typed = has_string_content && cp.requires_typed_content;
    if (!(p_system || p_tools || p_tool_calls || p_tool_responses || p_object_args || p_typed)) {
        *out_messages = msgs;
        return true;
    }
    jv actual = b.list();
    auto add_message = [&](const jv & m) {
        jv * content = member(m, "content");
        if (p_typed && content && content->t == J_STR) {
            jv parts = b.list();
            jv part = b.dict();
            b.set(part, "type", b.str("text"));
            b.set(part, "text", *content);
            b.push(parts, part);
            jv n = b.dict();
            b.set(n, "role", *member(m, "role"));
            b.set(n, "content", parts);
            b.push(actual, n);
        } else {
            b.push(actual, m);
        }
    };
    jbuf pending;
    jbuf_init(&pending, &b.r, b.r.lim.max_output);
    auto flush_sys = [&]() {
        if (pending.n == 0) return;
        add_message(b.msg("user", jbuf_value(&pending)));
        jbuf_init(&pending, &b.r, b.r.lim.max_output);
    };
    jv adjusted = msgs;
    if (p_tools) {
        jbuf sys;
        jbuf_init(&sys, &b.r, b.r.lim.max_output);
        jbuf_puts(&sys, "You can call any of the following tools to satisfy the user's requests: ");
        jv_write_repr(&b.r, &sys, in.tools, true, 2, 0);
        if (in.example.t == J_STR && in.example.n) {
            jbuf_puts(&sys, "\n\nExample tool call syntax:\n\n");
            jbuf_put(&sys, in.example.s, in.example.n);
            jbuf_puts(&sys, "\n\n");
        }
        jv prompt = jbuf_value(&sys);
        adjusted = b.list();
        jv * first_role = msgs.l->n > 0 ? member(msgs.l->v[0], "role") : NULL;
        if (first_role && first_role->t == J_STR && !strcmp(first_role->s, "system")) {
            jbuf merged;
            jbuf_init(&merged, &b.r, b.r.lim.max_output);
            jv * c0 = member(msgs.l->v[0], "content");
            if (c0) jv_write_str(&b.r, &merged, *c0);
            jbuf_puts(&merged, "\n\n");
            jbuf_put(&merged, prompt.s, prompt.n);
            b.push(adjusted, b.msg("system", jbuf_value(&merged)));
            for (uint32_t i = 1; i < msgs.l->n; i++) b.push(adjusted, msgs.l->v[i]);
        } else {
            b.push(adjusted, b.msg("system", prompt));
            for (uint32_t i = 0; i < msgs.l->n; i++) b.push(adjusted, msgs.l->v[i]);
        }
    }
    for (uint32_t i = 0; i < adjusted.l->n && !b.r.failed; i++) {
        jv message = shallow_copy(b, adjusted.l->v[i]);
        jv * role_v = member(message, "role");
        if (!role_v || !member(message, "content")) {
            snprintf(err, err_size, "message %u must have 'role' and 'content'", i);
            return false;
        }
        if (role_v->t != J_STR) {
            snprintf(err, err_size, "message %u: 'role' must be a string", i);
            return false;
        }
        const jv role = *role_v;
        if (jv * tcs = member(message, "tool_calls")) {
            if ((p_object_args || p_tool_calls) && tcs->t == J_LIST) {
                for (uint32_t k = 0; k < tcs->l->n; k++) {
                    jv & tc = tcs->l->v[k];
                    jv * type = member(tc, "type");
                    jv * fn = member(tc, "function");
                    if (!type || type->t != J_STR || strcmp(type->s, "function") || !fn) continue;
                    jv * a = member(*fn, "arguments");
                    if (a && a->t == J_STR) {
                        char jerr[8];
                        size_t need = json_measure(a->s, a->n, jerr, sizeof(jerr));
                        tern_arena ar;
                        void * mem = need ? jmem_alloc(b.r.m, need + 64) : NULL;
                        if (mem && arena_init(&ar, mem, need + 64)) {
                            json_node * parsed = json_parse(a->s, a->n, &ar, jerr, sizeof(jerr));
                            if (parsed) *a = b.from_json(parsed);
                        }
                    }
                }
            }
            if (p_tool_calls) {
                jv content = *member(message, "content");
                jv calls = b.list();
                for (uint32_t k = 0; tcs->t == J_LIST && k < tcs->l->n; k++) {
                    jv & tc = tcs->l->v[k];
                    jv * type = member(tc, "type");
                    jv * fn = member(tc, "function");
                    if (!type || type->t != J_STR || strcmp(type->s, "function") || !fn) continue;
                    jv call = b.dict();
                    jv * name = member(*fn, "name");
                    jv * a = member(*fn, "arguments");
                    b.set(call, "name", name ? *name : jv_none());
                    b.set(call, "arguments", a ? *a : jv_none());
                    if (jv * id = member(tc, "id")) b.set(call, "id", *id);
                    b.push(calls, call);
                }
                jv obj = b.dict();
                b.set(obj, "tool_calls", calls);
                if (!jv_null(content) && !(content.t == J_STR && content.n == 0)) b.set(obj, "content", content);
                b.set(message, "content", dump2(&b.r, obj));
                erase(message, "tool_calls");
            }
        }
        if (p_tool_responses && !strcmp(role.s, "tool")) {
            b.set(message, "role", b.str("user"));
            jv resp = b.dict();
            b.set(resp, "content", *member(message, "content"));
            if (jv * name = member(message, "name")) b.set(resp, "name", *name);
            if (jv * id = member(message, "tool_call_id")) b.set(resp, "tool_call_id", *id);
            jv obj = b.dict();
            b.set(obj, "tool_response", resp);
            b.set(message, "content", dump2(&b.r, obj));
            erase(message, "name");
        }
        jv * content = member(message, "content");
        if (content && !jv_null(*content) && p_system) {
            jv text = content->t == J_STR ? *content : jv_to_str(&b.r, *content);
            if (!strcmp(role.s, "system")) {
                if (pending.n) jbuf_put(&pending, "\n", 1);
                jbuf_put(&pending, text.s, text.n);
                continue;
            }
            if (!strcmp(role.s, "user")) {
                if (pending.n) {
                    if (text.n) {
                        jbuf_put(&pending, "\n", 1);
                        jbuf_put(&pending, text.s, text.n);
                    }
                    b.set(message, "content", jbuf_value(&pending));
                    jbuf_init(&pending, &b.r, b.r.lim.max_output);
                }
            } else {
                flush_sys();
            }
        }
        add_message(message);
    }
    flush_sys();
    if (b.r.failed) {
        snprintf(err, err_size, "%s", "out of memory preparing the messages");
        return false;
    }
    *out_messages = actual;
    return true;
}

// minja's tool call example (chat_template's constructor), for templates
// that print no tools: the text a template writes for an assistant turn that
// calls tool_name(arg1 = "some_value"), found as what the conversation
// [user, that turn] adds to [user] with the generation prompt, a trailing EOS
// dropped. J_UNDEF when the template fails or prints neither name nor value.
jv tool_call_example(const jtemplate * t, jmem * m, const jinja_limits * lim, const chat_jinja_input * in, caps & cp) {
    builder b(m, lim);
    jv user = b.msg("user", b.str("Hey"));
    jv args;
    if (cp.requires_object_arguments) {
        args = b.dict();
        b.set(args, "arg1", b.str("some_value"));
    } else {
        args = b.str("{\"arg1\": \"some_value\"}");
    }
    jv fn = b.dict();
    b.set(fn, "name", b.str("tool_name"));
    b.set(fn, "arguments", args);
    jv call = b.dict();
    b.set(call, "id", b.str("call_1___"));
    b.set(call, "type", b.str("function"));
    b.set(call, "function", fn);
    jv calls = b.list();
    b.push(calls, call);
    jv turn = b.msg("assistant", jv_none());
    b.set(turn, "tool_calls", calls);
    jv first = b.list(), both = b.list();
    b.push(first, user);
    b.push(both, user);
    b.push(both, turn);
    if (b.r.failed) return jv_undef();
    const char * text[2];
    size_t len[2];
    for (int k = 0; k < 2; k++) {
        render_in ri = {k == 0 ? first : both, jv_undef(), jv_undef(), k == 0, jv_undef()};
        jv msgs;
        char err[320];
        if (!polyfill(b, cp, ri, &msgs, err, sizeof(err))) return jv_undef();
        ri.messages = msgs;
        if (!render(t, m, lim, in, ri, in->clock, &text[k], &len[k], err, sizeof(err))) {
            keep_budget_error(m, lim, err, cp.spent);
            return jv_undef();
        }
    }
    // As minja compares (unsigned sizes): the last EOS of the full text is cut
    // when it sits where the prefix would end, or just before a final newline.
    const char * full = text[1];
    size_t nfull = len[1];
    const size_t ne = in->eos ? strlen(in->eos) : 0;
    size_t eos_last = (size_t)-1;
    if (ne <= nfull) {
        for (size_t i = nfull - ne + 1; i-- > 0;) {
            if (memcmp(full + i, in->eos, ne) == 0) {
                eos_last = i;
                break;
            }
        }
    }
    if (eos_last == len[0] - ne || (nfull > 0 && full[nfull - 1] == '\n' && eos_last == nfull - ne - 1)) {
        if (eos_last != (size_t)-1) nfull = eos_last;
    }
    // The common prefix, never ending just after a '<' (DeepSeek R1 adds
    // <think> to the generation prompt and its tool calls start with '<').
    size_t common = 0;
    for (size_t i = 0; i < len[0] && i < nfull; i++) {
        if (text[0][i] != full[i]) break;
        if (text[0][i] == '<') continue;
        common = i + 1;
    }
    const char * ex = full + common;
    const size_t nex = nfull - common;
    if (!has_text(ex, nex, "tool_name") && !has_text(ex, nex, "some_value")) return jv_undef();
    return jv_str(ex, (uint32_t)nex);
}

bool src_has(const chat_jinja_input * in, const char * needle) { return has_text(in->tmpl, in->tmpl_len, needle); }

// minja's add_system: a system message first, or appended to the first one.
jv add_system(builder & b, const jv & msgs, const char * text) {
    jv out = b.list();
    jv * role = msgs.l->n > 0 ? member(msgs.l->v[0], "role") : NULL;
    if (role && role->t == J_STR && !strcmp(role->s, "system")) {
        jbuf merged;
        jbuf_init(&merged, &b.r, b.r.lim.max_output);
        if (jv * c = member(msgs.l->v[0], "content")) jv_write_str(&b.r, &merged, *c);
        jbuf_puts(&merged, "\n\n");
        jbuf_puts(&merged, text);
        b.push(out, b.msg("system", jbuf_value(&merged)));
        for (uint32_t i = 1; i < msgs.l->n; i++) b.push(out, msgs.l->v[i]);
    } else {
        b.push(out, b.msg("system", b.str(text)));
        for (uint32_t i = 0; i < msgs.l->n; i++) b.push(out, msgs.l->v[i]);
    }
    return out;
}

// What llama.cpp's tool-call handlers (common/chat.cpp) change in the prompt,
// chosen by markers of the template's source as there: Llama 3.x gets
// tools_in_user_message = false and its built-in tools, FireFunction v2 its
// functions, templates without a handler a system line asking
// for JSON. (The handlers' grammars for tool calls are not built here.)
void handler_tweaks(builder & b, const chat_jinja_input * in, render_in * ri) {
    const bool has_tools = ri->tools.t == J_LIST && ri->tools.l->n > 0;
    auto set_extra = [&](const char * k, jv v) {
        if (ri->extra.t != J_DICT) ri->extra = b.dict();
        if (!jdict_find(ri->extra.o, k, strlen(k))) b.set(ri->extra, k, v);
    };
    if (src_has(in, "<\xef\xbd\x9c" "tool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>") ||   // DeepSeek R1
        src_has(in, "<|END_THINKING|><|START_ACTION|>") || src_has(in, ">>>all")) {
        return;
    }
    if (src_has(in, " functools[")) {   // FireFunction v2: tools only as text (its datetime: render())
        set_extra("functions", has_tools ? dump2(&b.r, ri->tools) : b.str(""));
        ri->tools = jv_undef();
        return;
    }
    if (!has_tools) return;
    if (src_has(in, "<tool_call>") || (src_has(in, "<|start_header_id|>") && src_has(in, "<function=")) ||
        src_has(in, "[TOOL_CALLS]")) {
        return;
    }
    if (src_has(in, "<|start_header_id|>ipython<|end_header_id|>")) {
        jv builtin = b.list();
        for (uint32_t i = 0; i < ri->tools.l->n; i++) {
            jv * fn = member(ri->tools.l->v[i], "function");
            jv * name = fn ? member(*fn, "name") : NULL;
            if (!name || name->t != J_STR) continue;
            for (const char * bt : {"wolfram_alpha", "web_search", "brave_search", "python", "code_interpreter"}) {
                if (!strcmp(name->s, bt)) b.push(builtin, *name);
            }
        }
        set_extra("tools_in_user_message", jv_bool(false));
        set_extra("builtin_tools", builtin.l->n ? builtin : jv_none());
        return;
    }
    ri->messages = add_system(b, ri->messages,
                              "Respond in JSON format, either with `tool_call` (a request to call tools) or with "
                              "`response` reply to the user's request");
}

// The messages, tools and extra variables of one render, rewritten as minja
// does (handler tweaks, polyfills), then the render. empty_for_null: null
// contents become "" (the retry of chat_jinja_apply); *had_null: whether the
// messages rendered had a null content.
tern_status prepare_and_render(const jtemplate * tmpl, jmem * m, const jinja_limits * lim, const chat_jinja_input * in,
                               caps & cp, bool empty_for_null, const char ** out_text, size_t * out_n, bool * had_null,
                               char * err, size_t err_size) {
    builder b(m, lim);
    render_in ri;
    ri.add_generation_prompt = in->add_generation_prompt;
    ri.example = jv_undef();
    ri.tools = in->tools ? b.from_json(in->tools) : jv_undef();
    ri.extra = in->extra ? b.from_json(in->extra) : jv_undef();
    if (in->messages) {
        ri.messages = b.from_json(in->messages);
        if (ri.messages.t != J_LIST) {
            snprintf(err, err_size, "the messages must be a JSON array");
            return TERN_ERR_INVALID_ARG;
        }
        // Empty content is null, and typed parts join into text unless the
        // template wants them, as llama.cpp's messages are.
        for (uint32_t i = 0; i < ri.messages.l->n; i++) {
            jv * c = member(ri.messages.l->v[i], "content");
            if (c && c->t == J_STR && c->n == 0) *c = jv_none();
            if (c && c->t == J_LIST && !cp.requires_typed_content) {
                jbuf text;
                jbuf_init(&text, &b.r, lim->max_output);
                for (uint32_t k = 0; k < c->l->n; k++) {
                    jv * type = member(c->l->v[k], "type");
                    jv * t = member(c->l->v[k], "text");
                    if (!type || type->t != J_STR || strcmp(type->s, "text") || !t || t->t != J_STR) continue;
                    if (text.n) jbuf_put(&text, "\n", 1);
                    jbuf_put(&text, t->s, t->n);
                }
                *c = jbuf_value(&text);
            }
        }
    } else {
        ri.messages = b.list();
        for (size_t i = 0; i < in->n_msgs && !b.r.failed; i++) {
            const char * content = in->msgs[i].content;
            b.push(ri.messages, b.msg(in->msgs[i].role, content && *content ? b.str(content) : jv_none()));
        }
    }
    if (b.r.failed) {
        snprintf(err, err_size, "out of memory preparing the messages");
        return TERN_ERR_NO_MEMORY;
    }
    handler_tweaks(b, in, &ri);
    if (ri.tools.t == J_LIST && ri.tools.l->n > 0 && !cp.supports_tools) ri.example = tool_call_example(tmpl, m, lim, in, cp);
    jv messages;
    if (cp.spent[0]) {
        snprintf(err, err_size, "%s", cp.spent);
        return TERN_ERR_INVALID_ARG;
    }
    if (!polyfill(b, cp, ri, &messages, err, err_size)) return TERN_ERR_INVALID_ARG;
    ri.messages = messages;
    *had_null = null_contents(ri.messages, empty_for_null);
    if (!render(tmpl, m, lim, in, ri, in->clock, out_text, out_n, err, err_size)) return TERN_ERR_INVALID_ARG;
    return TERN_OK;
}

}  // namespace

tern_status chat_jinja_apply(const chat_jinja_input * in, jmem * m, const jinja_limits * lim, const char ** out,
                             size_t * out_len, bool * parse_failed, char * err, size_t err_size) {
    *parse_failed = false;
    jtemplate t;
    tern_status st = jinja_parse(in->tmpl, in->tmpl_len, m, lim, &t, err, err_size);
    if (st != TERN_OK) {
        *parse_failed = st == TERN_ERR_INVALID_ARG;
        return st;
    }
    caps cp = detect_caps(&t, m, lim, in);
    const char * text;
    size_t n;
    const size_t mark = m->used;
    bool had_null = false;
    st = prepare_and_render(&t, m, lim, in, cp, false, &text, &n, &had_null, err, err_size);
    if (st == TERN_ERR_INVALID_ARG && had_null && m->spent <= lim->max_steps) {
        // A template that fails on a null content (QwQ's message.content.split() on a
        // tool-call turn) runs once more with "" there: minja measures this need
        // (requires_non_null_content) and llama.cpp's newer path acts on it. Only
        // after a failure, so that what renders is never changed; the step budget is
        // shared, and the first error is the one reported when the second fails too.
        m->used = mark;
        char err2[8];
        if (prepare_and_render(&t, m, lim, in, cp, true, &text, &n, &had_null, err2, sizeof(err2)) != TERN_OK) return st;
        err[0] = 0;
    } else if (st != TERN_OK) {
        return st;
    }
    // llama.cpp's fix of DeepSeek R1's official template (common_chat_params_init_deepseek_r1):
    // tool calls closed before the tool outputs or the next user turn, no dangling tool outputs.
#define DS_BAR "\xef\xbd\x9c"
#define DS_SP "\xe2\x96\x81"
    if (src_has(in, "{% if ns.is_tool %}{{'<" DS_BAR "tool" DS_SP "outputs" DS_SP "end" DS_BAR ">'}}")) {
        static const char CALL_END[] = "<" DS_BAR "tool" DS_SP "call" DS_SP "end" DS_BAR ">";
        static const char OUT_BEGIN[] = "<" DS_BAR "tool" DS_SP "outputs" DS_SP "begin" DS_BAR ">";
        static const char OUT_END[] = "<" DS_BAR "tool" DS_SP "outputs" DS_SP "end" DS_BAR ">";
        static const char USER[] = "<" DS_BAR "User" DS_BAR ">";
        static const char CLOSE[] = "<" DS_BAR "tool" DS_SP "calls" DS_SP "end" DS_BAR "><" DS_BAR "end" DS_SP "of" DS_SP "sentence" DS_BAR ">";
        static const char EOS_TEXT[] = "<" DS_BAR "end" DS_SP "of" DS_SP "sentence" DS_BAR ">";
        static const char ASSISTANT[] = "<" DS_BAR "Assistant" DS_BAR ">";
        jrender rr;
        memset(&rr, 0, sizeof(rr));
        rr.m = m;
        rr.lim = *lim;
        jbuf fixed;
        jbuf_init(&fixed, &rr, lim->max_output);
        const size_t lc = sizeof(CALL_END) - 1;
        size_t i = 0;
        while (i < n) {
            if (i + lc <= n && memcmp(text + i, CALL_END, lc) == 0) {
                size_t k = i + lc;
                while (k < n && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r')) k++;
                const bool next = (k + sizeof(OUT_BEGIN) - 1 <= n && memcmp(text + k, OUT_BEGIN, sizeof(OUT_BEGIN) - 1) == 0) ||
                                  (k + sizeof(USER) - 1 <= n && memcmp(text + k, USER, sizeof(USER) - 1) == 0);
                jbuf_put(&fixed, text + i, lc);
                if (next) {
                    jbuf_puts(&fixed, CLOSE);
                    i = k;
                } else {
                    i += lc;
                }
                continue;
            }
            jbuf_put(&fixed, text + i, 1);
            i++;
        }
        if (fixed.n >= sizeof(OUT_END) - 1 && memcmp(fixed.p + fixed.n - (sizeof(OUT_END) - 1), OUT_END, sizeof(OUT_END) - 1) == 0) {
            jbuf_puts(&fixed, EOS_TEXT);
            if (in->add_generation_prompt) jbuf_puts(&fixed, ASSISTANT);
        }
        jv v = jbuf_value(&fixed);
        if (rr.failed) {
            snprintf(err, err_size, "out of memory in the DeepSeek R1 fix");
            return TERN_ERR_NO_MEMORY;
        }
        text = v.s;
        n = v.n;
    }
#undef DS_BAR
#undef DS_SP
    // The tokenizer adds BOS and EOS: a template's own at the very ends are removed.
    const size_t nb = in->bos ? strlen(in->bos) : 0, ne = in->eos ? strlen(in->eos) : 0;
    if (nb && n >= nb && memcmp(text, in->bos, nb) == 0) {
        text += nb;
        n -= nb;
    }
    if (ne && n >= ne && memcmp(text + n - ne, in->eos, ne) == 0) n -= ne;
    *out = text;
    *out_len = n;
    return TERN_OK;
}

}  // namespace tern
