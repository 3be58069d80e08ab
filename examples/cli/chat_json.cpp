#include "chat_json.h"

#include <stdint.h>
#include <stdio.h>

namespace {

struct reader {
    const std::string & s;
    size_t at;
    std::string err;

    explicit reader(const std::string & text) : s(text), at(0) {}

    // Record the first error at the current position; always false.
    bool fail(const char * what) {
        if (!err.empty()) return false;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < s.size(); i++) {
            const unsigned char c = (unsigned char) s[i];
            if (c == '\n') { line++; col = 1; }
            else if ((c & 0xc0) != 0x80) col++;  // UTF-8 continuation bytes share their character's column
        }
        char buf[200];
        snprintf(buf, sizeof(buf), "line %zu, column %zu: %s", line, col, what);
        err = buf;
        return false;
    }
    void ws() { while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r')) at++; }
    bool peek(char c) {
        ws();
        return at < s.size() && s[at] == c;
    }
    bool eat(char c) {
        if (!peek(c)) return false;
        at++;
        return true;
    }
    bool literal(const char * word) {
        size_t i = 0;
        while (word[i] && at + i < s.size() && s[at + i] == word[i]) i++;
        if (word[i]) return false;
        at += i;
        return true;
    }
    static void utf8(uint32_t cp, std::string * out) {
        if (cp < 0x80) *out += (char) cp;
        else if (cp < 0x800) { *out += (char) (0xc0 | (cp >> 6)); *out += (char) (0x80 | (cp & 0x3f)); }
        else if (cp < 0x10000) {
            *out += (char) (0xe0 | (cp >> 12)); *out += (char) (0x80 | ((cp >> 6) & 0x3f)); *out += (char) (0x80 | (cp & 0x3f));
        } else {
            *out += (char) (0xf0 | (cp >> 18)); *out += (char) (0x80 | ((cp >> 12) & 0x3f));
            *out += (char) (0x80 | ((cp >> 6) & 0x3f)); *out += (char) (0x80 | (cp & 0x3f));
        }
    }
    bool hex4(uint32_t * v) {
        *v = 0;
        for (int i = 0; i < 4; i++) {
            const char c = at < s.size() ? s[at] : '\0';
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return fail("a \\u escape needs 4 hex digits");
            *v = *v * 16 + (uint32_t) d;
            at++;
        }
        return true;
    }
    // A string literal; out may be NULL (checked and skipped).
    bool string(std::string * out) {
        ws();
        if (at >= s.size() || s[at] != '"') return fail("expected a string");
        at++;
        if (out) out->clear();
        std::string sink;
        std::string * o = out ? out : &sink;
        for (;;) {
            if (at >= s.size()) return fail("an unterminated string");
            const unsigned char c = (unsigned char) s[at];
            if (c == '"') { at++; return true; }
            if (c < 0x20) return fail("a control character inside a string (escape it)");
            if (c != '\\') { *o += (char) c; at++; continue; }
            const size_t esc = at++;
            const char e = at < s.size() ? s[at++] : '\0';
            switch (e) {
                case '"': *o += '"'; break;
                case '\\': *o += '\\'; break;
                case '/': *o += '/'; break;
                case 'b': *o += '\b'; break;
                case 'f': *o += '\f'; break;
                case 'n': *o += '\n'; break;
                case 'r': *o += '\r'; break;
                case 't': *o += '\t'; break;
                case 'u': {
                    uint32_t cp;
                    if (!hex4(&cp)) return false;
                    if (cp >= 0xd800 && cp < 0xdc00) {  // a high surrogate needs its low half next
                        if (at + 1 >= s.size() || s[at] != '\\' || s[at + 1] != 'u') {
                            at = esc;
                            return fail("a high surrogate (\\uD800-\\uDBFF) without a low one after it");
                        }
                        at += 2;
                        uint32_t lo;
                        if (!hex4(&lo)) return false;
                        if (lo < 0xdc00 || lo >= 0xe000) {
                            at = esc;
                            return fail("a high surrogate (\\uD800-\\uDBFF) without a low one after it");
                        }
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    } else if (cp >= 0xdc00 && cp < 0xe000) {
                        at = esc;
                        return fail("a lone low surrogate (\\uDC00-\\uDFFF)");
                    } else if (cp == 0) {
                        at = esc;
                        return fail("\\u0000: a NUL character cannot be part of a message");
                    }
                    utf8(cp, o);
                    break;
                }
                default: at = esc; return fail("an unknown escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
        }
    }
    bool digits() {
        const size_t start = at;
        while (at < s.size() && s[at] >= '0' && s[at] <= '9') at++;
        return at > start;
    }
    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    bool number() {
        if (at < s.size() && s[at] == '-') at++;
        if (at < s.size() && s[at] == '0') at++;
        else if (!digits()) return fail("expected a value");
        if (at < s.size() && s[at] == '.') {
            at++;
            if (!digits()) return fail("a digit must follow the decimal point");
        }
        if (at < s.size() && (s[at] == 'e' || s[at] == 'E')) {
            at++;
            if (at < s.size() && (s[at] == '+' || s[at] == '-')) at++;
            if (!digits()) return fail("a digit must follow the exponent");
        }
        return true;
    }
    // Any value, checked and skipped.
    bool skip_value(int depth) {
        if (depth > CHAT_JSON_MAX_DEPTH) return fail("nested too deeply");
        ws();
        if (at >= s.size()) return fail("expected a value");
        const char c = s[at];
        if (c == '"') return string(NULL);
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            at++;
            if (eat(close)) return true;
            do {
                if (c == '{') {
                    if (!string(NULL)) return false;
                    if (!eat(':')) return fail("expected ':'");
                }
                if (!skip_value(depth + 1)) return false;
            } while (eat(','));
            if (eat(close)) return true;
            return fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        if (literal("true") || literal("false") || literal("null")) return true;
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        return fail("expected a value");
    }
    // "content": a string, null (empty) or an array of parts; the text parts are
    // joined with "\n" (llama.cpp's legacy template route), other types skipped.
    bool content(std::string * out) {
        out->clear();
        ws();
        if (literal("null")) return true;
        if (!peek('[')) {
            if (!peek('"')) return fail("\"content\" must be a string, null or an array of parts");
            return string(out);
        }
        at++;
        if (eat(']')) return true;
        do {
            if (!eat('{')) return fail("expected '{' (a content part)");
            const size_t start = at - 1;
            std::string type, text;
            bool has_type = false, has_text = false;
            if (!eat('}')) {
                do {
                    std::string key;
                    if (!string(&key)) return false;
                    if (!eat(':')) return fail("expected ':'");
                    if (key == "type") { if (!string(&type)) return false; has_type = true; }
                    else if (key == "text") { if (!string(&text)) return false; has_text = true; }
                    else if (!skip_value(3)) return false;
                } while (eat(','));
                if (!eat('}')) return fail("expected ',' or '}'");
            }
            if (!has_type) { at = start; return fail("a content part needs \"type\""); }
            if (type == "text") {
                if (!has_text) { at = start; return fail("a text part needs \"text\""); }
                if (!out->empty()) *out += '\n';
                *out += text;
            }
        } while (eat(','));
        if (!eat(']')) return fail("expected ',' or ']'");
        return true;
    }
    bool message(chat_msg * m) {
        if (!eat('{')) return fail("expected '{' (a message object)");
        const size_t start = at - 1;
        bool has_role = false, has_content = false;
        if (!eat('}')) {
            do {
                std::string key;
                if (!string(&key)) return false;
                if (!eat(':')) return fail("expected ':'");
                if (key == "role") {
                    ws();
                    if (!peek('"')) return fail("\"role\" must be a string");
                    if (!string(&m->role)) return false;
                    has_role = true;
                } else if (key == "content") {
                    if (!content(&m->content)) return false;
                    has_content = true;
                } else if (!skip_value(2)) {
                    return false;
                }
            } while (eat(','));
            if (!eat('}')) return fail("expected ',' or '}'");
        }
        if (!has_role || !has_content) {
            at = start;
            return fail("a message needs \"role\" and \"content\"");
        }
        return true;
    }
};

}  // namespace

bool chat_json_parse_messages(const std::string & text, std::vector<chat_msg> * out, std::string * error) {
    reader r(text);
    out->clear();
    if (text.compare(0, 3, "\xef\xbb\xbf") == 0) r.at = 3;  // a UTF-8 byte order mark
    bool ok = r.eat('[') || r.fail("expected '[' (an array of messages)");
    if (ok && !r.eat(']')) {
        do {
            chat_msg m;
            if (!(ok = r.message(&m))) break;
            out->push_back(m);
        } while (r.eat(','));
        if (ok && !r.eat(']')) ok = r.fail("expected ',' or ']'");
    }
    if (ok) {
        r.ws();
        if (r.at != text.size()) ok = r.fail("text after the array");
    }
    if (!ok) {
        *error = r.err;
        out->clear();
    }
    return ok;
}
