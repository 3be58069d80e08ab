// Reads ../shared/reference/<model>.<i>.json and .prompt_logits.f32 (format in
// reference/README.md) with a small JSON reader for exactly those files.
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

struct reference_case {
    std::string model;
    std::string prompt;
    int n_vocab = 0;
    std::vector<int> prompt_tokens;
    std::vector<int> prompt_argmax;
    std::vector<int> greedy_tokens;
    std::vector<double> greedy_margin;
    std::string greedy_text;
    std::vector<float> prompt_logits;  // [n_prompt][n_vocab]
};

namespace refjson {

inline void skip_ws(const std::string & s, size_t & i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) i++;
}

inline std::string parse_string(const std::string & s, size_t & i) {
    std::string out;
    i++;  // opening quote
    while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\') {
            i++;
            char c = s[i++];
            if (c == 'n') out += '\n';
            else if (c == 't') out += '\t';
            else if (c == 'r') out += '\r';
            else if (c == 'b') out += '\b';
            else if (c == 'f') out += '\f';
            else if (c == 'u') {
                unsigned cp = (unsigned) strtoul(s.substr(i, 4).c_str(), NULL, 16);
                i += 4;
                if (cp >= 0xd800 && cp < 0xdc00 && s.compare(i, 2, "\\u") == 0) {
                    unsigned lo = (unsigned) strtoul(s.substr(i + 2, 4).c_str(), NULL, 16);
                    i += 6;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                if (cp < 0x80) out += (char) cp;
                else if (cp < 0x800) { out += (char) (0xc0 | (cp >> 6)); out += (char) (0x80 | (cp & 63)); }
                else if (cp < 0x10000) { out += (char) (0xe0 | (cp >> 12)); out += (char) (0x80 | ((cp >> 6) & 63)); out += (char) (0x80 | (cp & 63)); }
                else { out += (char) (0xf0 | (cp >> 18)); out += (char) (0x80 | ((cp >> 12) & 63)); out += (char) (0x80 | ((cp >> 6) & 63)); out += (char) (0x80 | (cp & 63)); }
            } else out += c;
        } else {
            out += s[i++];
        }
    }
    i++;  // closing quote
    return out;
}

inline std::vector<double> parse_numbers(const std::string & s, size_t & i) {
    std::vector<double> v;
    i++;  // [
    for (;;) {
        skip_ws(s, i);
        if (s[i] == ']') { i++; break; }
        char * end;
        v.push_back(strtod(s.c_str() + i, &end));
        i = end - s.c_str();
        skip_ws(s, i);
        if (s[i] == ',') i++;
    }
    return v;
}

} // namespace refjson

inline bool read_file_bytes(const std::string & path, std::string & out) {
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    fclose(f);
    return true;
}

// Load <dir>/<stem>.json and <dir>/<stem>.prompt_logits.f32.
inline bool reference_load(const std::string & dir, const std::string & stem, reference_case & rc) {
    std::string s;
    if (!read_file_bytes(dir + "/" + stem + ".json", s)) return false;
    size_t i = 0;
    refjson::skip_ws(s, i);
    if (s[i] != '{') return false;
    i++;
    for (;;) {
        refjson::skip_ws(s, i);
        if (s[i] == '}') break;
        std::string key = refjson::parse_string(s, i);
        refjson::skip_ws(s, i);
        i++;  // :
        refjson::skip_ws(s, i);
        if (s[i] == '"') {
            std::string v = refjson::parse_string(s, i);
            if (key == "model") rc.model = v;
            else if (key == "prompt") rc.prompt = v;
            else if (key == "greedy_text") rc.greedy_text = v;
        } else if (s[i] == '[') {
            std::vector<double> v = refjson::parse_numbers(s, i);
            std::vector<int> iv(v.begin(), v.end());
            if (key == "prompt_tokens") rc.prompt_tokens = iv;
            else if (key == "prompt_argmax") rc.prompt_argmax = iv;
            else if (key == "greedy_tokens") rc.greedy_tokens = iv;
            else if (key == "greedy_margin") rc.greedy_margin = v;
        } else {
            char * end;
            double v = strtod(s.c_str() + i, &end);
            if (end == s.c_str() + i) {  // true / false / null
                while (i < s.size() && s[i] != ',' && s[i] != '}') i++;
            } else {
                i = end - s.c_str();
            }
            if (key == "n_vocab") rc.n_vocab = (int) v;
        }
        refjson::skip_ws(s, i);
        if (s[i] == ',') i++;
    }
    std::string raw;
    if (!read_file_bytes(dir + "/" + stem + ".prompt_logits.f32", raw)) return false;
    rc.prompt_logits.resize(raw.size() / sizeof(float));
    memcpy(rc.prompt_logits.data(), raw.data(), rc.prompt_logits.size() * sizeof(float));
    return rc.n_vocab > 0 && rc.prompt_logits.size() == rc.prompt_tokens.size() * (size_t) rc.n_vocab;
}
