// Pre-tokenizer scanners against the splits llama.cpp's regexes give,
// including llama-3's (no vector file exercises it).
#include <string>
#include <vector>

#include "check.h"
#include "vocab/pretokenize.h"
#include "vocab/unicode.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

static std::vector<std::string> split(vocab_pre pre, const std::string & text) {
    std::vector<uint32_t> cpts;
    for (size_t pos = 0; pos < text.size();) cpts.push_back(unicode_decode((const uint8_t *) text.data(), text.size(), &pos));
    std::vector<uint8_t> cut(cpts.size() + 1);
    pretokenize(pre, cpts.data(), (int32_t) cpts.size(), cut.data());
    std::vector<std::string> words;
    for (size_t i = 0; i < cpts.size(); i++) {
        if (cut[i]) words.emplace_back();
        char buf[4];
        words.back().append(buf, (size_t) unicode_encode(cpts[i], buf));
    }
    return words;
}

static void expect(vocab_pre pre, const std::string & text, const std::vector<std::string> & want) {
    std::vector<std::string> got = split(pre, text);
    std::string shown;
    for (const std::string & w : got) shown += "[" + w + "]";
    CHECK_MSG(got == want, "pre %d: '%s' -> %s", (int) pre, text.c_str(), shown.c_str());
}

int main() {
    // llama-3: case-insensitive contractions, digit groups of three, \s*[\r\n]+, \s+(?!\S).
    expect(VOCAB_PRE_LLAMA3, "Hello world", {"Hello", " world"});
    expect(VOCAB_PRE_LLAMA3, "I'M 12345", {"I", "'M", " ", "123", "45"});
    expect(VOCAB_PRE_LLAMA3, "a\n\n  b", {"a", "\n\n", " ", " b"});
    expect(VOCAB_PRE_LLAMA3, "x  ", {"x", "  "});
    expect(VOCAB_PRE_LLAMA3, "!!!\n\nabc", {"!!!\n\n", "abc"});
    expect(VOCAB_PRE_LLAMA3, "\xf0\x9f\x99\x82\xf0\x9f\x99\x82 ok", {"\xf0\x9f\x99\x82\xf0\x9f\x99\x82", " ok"});
    expect(VOCAB_PRE_LLAMA3, "\t\tword", {"\t", "\tword"});
    // qwen2: the same with single digits.
    expect(VOCAB_PRE_QWEN2, "I'M 12345", {"I", "'M", " ", "1", "2", "3", "4", "5"});
    // gpt-2: case-sensitive contractions, whole digit runs.
    expect(VOCAB_PRE_GPT2, "I'M 12345", {"I", "'", "M", " 12345"});
    expect(VOCAB_PRE_GPT2, "it's  ok", {"it", "'s", " ", " ok"});
    // default and falcon: digit runs cut in threes from the left.
    expect(VOCAB_PRE_DEFAULT, "12345", {"123", "45"});
    expect(VOCAB_PRE_FALCON, "a+=b`", {"a", "+=", "b", "`"});
    expect(VOCAB_PRE_DEFAULT, "a+=b`", {"a", "+=", "b", "`"});
    // starcoder: every digit alone.
    expect(VOCAB_PRE_STARCODER, "x42", {"x", "4", "2"});
    // deepseek-llm: letters, punctuation, CJK and numbers each their own pieces.
    expect(VOCAB_PRE_DEEPSEEK_LLM, "Hello, \xe4\xb8\x96\xe7\x95\x8c 123",
           {"Hello", ",", " ", "\xe4\xb8\x96\xe7\x95\x8c", " ", "123"});
    expect(VOCAB_PRE_DEEPSEEK_LLM, "a\r\nb  ", {"a", "\r", "\n", "b", "  "});
    // Invalid UTF-8 decodes to U+FFFD one byte at a time.
    std::vector<std::string> bad = split(VOCAB_PRE_GPT2, "\xff\xc3");
    CHECK(bad.size() == 1 && bad[0] == "\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(split(VOCAB_PRE_LLAMA3, "").empty());
    return tern_test_summary();
}
