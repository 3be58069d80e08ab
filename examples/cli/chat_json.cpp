#include "chat_json.h"

#include <stdio.h>
#include <ctype.h>
#include <stdint.h>

namespace {

struct reader {
    const std::string & s;
    size_t at = 0;
    std::string err;

    bool fail(const char * what) {
        if (!err.empty()) return false;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < s.size(); i++) {
            if (s[i] == '\n') { line++; col = 1; } else col++;
        }
        char buf[160];
        snprintf(buf, sizeof(buf), "line %zu, column %zu: %s", line, col, what);
        err = buf;
        return false;
    }
    void ws() { while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r')) at++; }
    bool eat(char c) {
        ws();
        if (at < s.size() && s[at] == c) { at++; return true; }
        return false;
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
        if (at + 4 > s.size()) return fail("a \\u escape needs 4 hex digits");
        *v = 0;
        for (int i = 0; i < 4; i++) {
            const char c = s[at++];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return fail("a \\u escape needs 4 hex digits");
            *v = *v * 16 + (uint32_t) d;
        }
        return true;
    }
    bool string(std::string * out) {
        ws();
        if (at >= s.size() || s[at] != '"') return fail("expected a string");
        at++;
        out->clear();
        while (at < s.size() && s[at] != '"') {
            const unsigned char c = (unsigned char) s[at];
            if (c < 0x20) return fail("a control character inside a string");
            if (c != '\\') { *out += (char) c; at++; continue; }
            if (++at >= s.size()) break;
            const char e = s[at++];
            switch (e) {
                case '"': *out += '"'; break;
                case '\\': *out += '\\'; break;
                case '/': *out += '/'; break;
                case 'b': *out += '\b'; break;
                case 'f': *out += '\f'; break;
                case 'n': *out += '\n'; break;
                case 'r': *out += '\r'; break;
                case 't': *out += '\t'; break;
                case 'u': {
                    uint32_t cp;
                    if (!hex4(&cp)) return false;
                    if (cp >= 0xd800 && cp < 0xdc00) {  // a high surrogate needs its low half
                        uint32_t lo;
                        if (at + 2 > s.size() || s[at] != '\\' || s[at + 1] != 'u') return fail("a lone high surrogate");
                        at += 2;
                        if (!hex4(&lo)) return false;
                        if (lo < 0xdc00 || lo >= 0xe000) return fail("a high surrogate without its low half");
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    } else if (cp >= 0xdc00 && cp < 0xe000) {
                        return fail("a lone low surrogate");
                    }
                    utf8(cp, out);
                    break;
                }
                default: return fail("an unknown escape");
            }
        }
        if (at >= s.size()) return fail("an unterminated string");
        at++;
        return true;
    }
    // Any value (skipped), for keys other than role and content.
    bool skip_value(int depth = 0) {
        if (depth > 64) return fail("nested too deeply");
        ws();
        if (at >= s.size()) return fail("expected a value");
        std::string tmp;
        const char c = s[at];
        if (c == '"') return string(&tmp);
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            at++;
            if (eat(close)) return true;
            do {
                if (c == '{') {
                    if (!string(&tmp)) return false;
                    if (!eat(':')) return fail("expected ':'");
                }
                if (!skip_value(depth + 1)) return false;
            } while (eat(','));
            return eat(close) || fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        const size_t start = at;
        while (at < s.size() && (isalnum((unsigned char) s[at]) || s[at] == '-' || s[at] == '+' || s[at] == '.')) at++;
        const std::string word = s.substr(start, at - start);
        if (word == "true" || word == "false" || word == "null") return true;
        if (!word.empty() && (isdigit((unsigned char) word[0]) || word[0] == '-')) return true;
        at = start;
        return fail("expected a value");
    }
};

}  // namespace

bool chat_json_parse_messages(const std::string & text, std::vector<chat_msg> * out, std::string * error) {
    reader r{text};
    out->clear();
    bool ok = r.eat('[') || r.fail("expected '[' (an array of messages)");
    if (ok && !r.eat(']')) {
        do {
            if (!r.eat('{')) { ok = r.fail("expected '{' (a message object)"); break; }
            chat_msg m;
            bool has_role = false, has_content = false;
            if (!r.eat('}')) {
                do {
                    std::string key;
                    if (!r.string(&key) || !(r.eat(':') || r.fail("expected ':'"))) { ok = false; break; }
                    if (key == "role") { ok = r.string(&m.role); has_role = true; }
                    else if (key == "content") { ok = r.string(&m.content); has_content = true; }
                    else ok = r.skip_value();
                    if (!ok) break;
                } while (r.eat(','));
                if (ok && !r.eat('}')) ok = r.fail("expected ',' or '}'");
            }
            if (!ok) break;
            if (!has_role || !has_content) { ok = r.fail("a message needs \"role\" and \"content\" strings"); break; }
            out->push_back(m);
        } while (r.eat(','));
        if (ok && !r.eat(']')) ok = r.fail("expected ',' or ']'");
    }
    if (ok) {
        r.ws();
        if (r.at != text.size()) ok = r.fail("text after the array");
    }
    if (!ok) *error = r.err;
    return ok;
}
