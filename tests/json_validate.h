// A JSON-schema validator for the tests, written apart from the converter so
// that "the output validates" is checked by different code: type, properties,
// required, additionalProperties, enum, const, items (schema or tuple),
// prefixItems, minItems / maxItems, anyOf / oneOf, allOf, minLength /
// maxLength (in code points), integer and number minimum / maximum and their
// exclusive forms, pattern (with std::regex, ECMAScript), $ref "#/...".
// Uses Tern's JSON reader (core/json.h) on both texts; test code, so it
// recurses and uses the standard library freely.
#pragma once
#include <math.h>
#include <string.h>

#include <regex>
#include <string>
#include <vector>

#include "core/json.h"

struct json_doc {
    std::vector<uint8_t> mem;
    tern::tern_arena     a;
    tern::json_node *    root = NULL;
    std::string          error;
    explicit json_doc(const std::string & text) {
        char err[256];
        size_t need = tern::json_measure(text.data(), text.size(), err, sizeof(err));
        if (need == 0) { error = err; return; }
        mem.resize(need + 64);
        tern::arena_init(&a, mem.data(), mem.size());
        root = tern::json_parse(text.data(), text.size(), &a, err, sizeof(err));
        if (!root) error = err;
    }
};

struct json_validator {
    const tern::json_node * schema_root;
    std::string why;

    static bool is_type(const tern::json_node * v, const char * t) {
        using namespace tern;
        if (!strcmp(t, "object")) return v->type == JSON_OBJECT;
        if (!strcmp(t, "array")) return v->type == JSON_ARRAY;
        if (!strcmp(t, "string")) return v->type == JSON_STRING;
        if (!strcmp(t, "boolean")) return v->type == JSON_BOOL;
        if (!strcmp(t, "null")) return v->type == JSON_NULL;
        if (!strcmp(t, "number")) return v->type == JSON_INT || v->type == JSON_FLOAT;
        if (!strcmp(t, "integer")) return v->type == JSON_INT || (v->type == JSON_FLOAT && v->d == floor(v->d));
        return false;
    }

    static size_t utf8_count(const char * s, size_t n) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++) c += ((unsigned char) s[i] & 0xc0) != 0x80;
        return c;
    }

    bool fail(const std::string & w) {
        why = w;
        return false;
    }

    const tern::json_node * resolve(const tern::json_node * s) {
        using namespace tern;
        for (int hops = 0; s && s->type == JSON_OBJECT && json_get(s, "$ref") && hops < 32; hops++) {
            const json_node * r = json_get(s, "$ref");
            std::string ref(r->s, r->n);
            const json_node * t = schema_root;
            size_t pos = 2;
            while (t && pos <= ref.size()) {
                size_t e = ref.find('/', pos);
                if (e == std::string::npos) e = ref.size();
                t = json_get(t, ref.substr(pos, e - pos).c_str());
                pos = e + 1;
            }
            s = t;
        }
        return s;
    }

    bool valid(const tern::json_node * v, const tern::json_node * s) {
        using namespace tern;
        s = resolve(s);
        if (!s) return fail("unresolved $ref");
        if (s->type == JSON_BOOL) return s->b || fail("false schema");
        if (const json_node * t = json_get(s, "type")) {
            bool ok = false;
            if (t->type == JSON_STRING) ok = is_type(v, t->s);
            for (const json_node * x = t->type == JSON_ARRAY ? t->first : NULL; x; x = x->next) ok = ok || is_type(v, x->s);
            if (!ok) return fail("type");
        }
        if (const json_node * c = json_get(s, "const")) {
            if (!json_equal(c, v)) return fail("const");
        }
        if (const json_node * e = json_get(s, "enum")) {
            bool ok = false;
            for (const json_node * x = e->first; x; x = x->next) ok = ok || json_equal(x, v);
            if (!ok) return fail("enum");
        }
        for (const char * k : {"anyOf", "oneOf"}) {
            if (const json_node * alts = json_get(s, k)) {
                int n = 0;
                for (const json_node * a = alts->first; a; a = a->next) n += valid(v, a);
                if (n == 0 || (!strcmp(k, "oneOf") && n > 1)) return fail(k);
            }
        }
        if (const json_node * all = json_get(s, "allOf")) {
            for (const json_node * a = all->first; a; a = a->next) {
                if (!valid(v, a)) return false;
            }
        }
        if (v->type == JSON_OBJECT) {
            const json_node * props = json_get(s, "properties");
            if (const json_node * req = json_get(s, "required")) {
                for (const json_node * r = req->first; r; r = r->next) {
                    if (!json_get(v, r->s)) return fail(std::string("required ") + r->s);
                }
            }
            const json_node * add = json_get(s, "additionalProperties");
            for (const json_node * m = v->first; m; m = m->next) {
                const json_node * ps = props ? json_get(props, m->key) : NULL;
                if (ps) {
                    if (!valid(m, ps)) return false;
                } else if (add && add->type == JSON_BOOL && !add->b) {
                    return fail(std::string("additional property ") + m->key);
                } else if (add && add->type == JSON_OBJECT && !valid(m, add)) {
                    return false;
                }
            }
        }
        if (v->type == JSON_ARRAY) {
            const json_node * items = json_get(s, "items");
            const json_node * prefix = json_get(s, "prefixItems");
            const json_node * tuple = items && items->type == JSON_ARRAY ? items : prefix;
            uint32_t i = 0;
            for (const json_node * x = v->first; x; x = x->next, i++) {
                const json_node * is = tuple ? json_at(tuple, i) : items;
                if (tuple && !is && items && items->type != JSON_ARRAY) is = items;
                if (is && !valid(x, is)) return false;
            }
            if (const json_node * mn = json_get(s, "minItems")) { if (v->n < (uint32_t) mn->i) return fail("minItems"); }
            if (const json_node * mx = json_get(s, "maxItems")) { if (v->n > (uint32_t) mx->i) return fail("maxItems"); }
        }
        if (v->type == JSON_STRING) {
            size_t n = utf8_count(v->s, v->n);
            if (const json_node * mn = json_get(s, "minLength")) { if (n < (size_t) mn->i) return fail("minLength"); }
            if (const json_node * mx = json_get(s, "maxLength")) { if (n > (size_t) mx->i) return fail("maxLength"); }
            if (const json_node * p = json_get(s, "pattern")) {
                if (!std::regex_search(std::string(v->s, v->n), std::regex(std::string(p->s, p->n)))) return fail("pattern");
            }
        }
        if (v->type == JSON_INT || v->type == JSON_FLOAT) {
            double d = v->type == JSON_INT ? (double) v->i : v->d;
            auto num = [](const json_node * x) { return x->type == JSON_INT ? (double) x->i : x->d; };
            if (const json_node * m = json_get(s, "minimum")) { if (d < num(m)) return fail("minimum"); }
            if (const json_node * m = json_get(s, "maximum")) { if (d > num(m)) return fail("maximum"); }
            if (const json_node * m = json_get(s, "exclusiveMinimum")) { if (d <= num(m)) return fail("exclusiveMinimum"); }
            if (const json_node * m = json_get(s, "exclusiveMaximum")) { if (d >= num(m)) return fail("exclusiveMaximum"); }
        }
        return true;
    }
};

// The text parses as JSON and validates against the schema; *why says what failed.
static inline bool json_validates(const std::string & text, const std::string & schema, std::string * why) {
    json_doc doc(text), sch(schema);
    if (!sch.root) { *why = "schema: " + sch.error; return false; }
    if (!doc.root) { *why = "not JSON: " + doc.error; return false; }
    json_validator v{sch.root, ""};
    bool ok = v.valid(doc.root, sch.root);
    *why = v.why;
    return ok;
}
