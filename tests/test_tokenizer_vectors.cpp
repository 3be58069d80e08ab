// Tokenizer vectors of llama.cpp's test-tokenizer-0: every string of
// vocab/<name>.gguf.inp must give exactly the ids of the matching .out line
// (add_special = false, parse_special = false). Also: every vocab file loads
// into an exactly-sized arena, and byte-level BPE / SPM detokenize back to the input.
#include <string>
#include <vector>

#include "check.h"
#include "test_vocab_util.h"

static const char * k_vector_vocabs[] = {"llama-spm", "phi-3", "gpt-2", "qwen2", "deepseek-llm", "starcoder", "falcon"};
static const char * k_load_only[] = {"gpt-neox", "baichuan", "bert-bge"};

static std::vector<std::string> split_inputs(const std::string & s) {
    static const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    for (size_t pos = 0;;) {
        size_t next = s.find(sep, pos);
        if (next == std::string::npos) break;
        out.push_back(s.substr(pos, next - pos));
        pos = next + sep.size();
    }
    return out;
}

static std::vector<std::vector<tern_token>> parse_outputs(const std::string & s) {
    std::vector<std::vector<tern_token>> out;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t eol = s.find('\n', pos);
        if (eol == std::string::npos) eol = s.size();
        std::vector<tern_token> ids;
        const char * p = s.c_str() + pos;
        const char * end = s.c_str() + eol;
        while (p < end) {
            char * q;
            long id = strtol(p, &q, 10);
            if (q == p) break;
            ids.push_back((tern_token) id);
            p = q;
        }
        out.push_back(ids);
        pos = eol + 1;
    }
    return out;
}

static std::string ids_text(const std::vector<tern_token> & ids) {
    std::string s;
    for (tern_token t : ids) s += " " + std::to_string(t);
    return s;
}

static void check_vectors(const std::string & dir, const char * name) {
    std::string base = dir + "/vocab/ggml-vocab-" + name + ".gguf";
    test_vocab tv;
    tern_status st = test_vocab_load(&tv, base);
    CHECK_MSG(st == TERN_OK, "%s: load failed: %s", name, tern_last_error());
    if (st != TERN_OK) return;
    std::vector<uint8_t> inp_bytes, out_bytes;
    CHECK(read_file_bytes(base + ".inp", &inp_bytes) && read_file_bytes(base + ".out", &out_bytes));
    std::vector<std::string> inputs = split_inputs(std::string(inp_bytes.begin(), inp_bytes.end()));
    std::vector<std::vector<tern_token>> expected = parse_outputs(std::string(out_bytes.begin(), out_bytes.end()));
    CHECK_MSG(inputs.size() == expected.size() && !inputs.empty(), "%s: %zu inputs, %zu outputs", name,
              inputs.size(), expected.size());
    const tern_vocab * v = &tv.vocab;
    int pass = 0, round_trips = 0;
    for (size_t i = 0; i < inputs.size() && i < expected.size(); i++) {
        int32_t status;
        bool peak_ok;
        std::vector<tern_token> got = test_tokenize(v, inputs[i], false, false, &status, &peak_ok);
        CHECK_MSG(peak_ok, "%s #%zu: tokenizer left its scratch", name, i);
        bool same = status >= 0 && got == expected[i];
        pass += same;
        CHECK_MSG(same, "%s #%zu '%s':\n  want%s\n  got %s", name, i, inputs[i].c_str(), ids_text(expected[i]).c_str(),
                  ids_text(got).c_str());
        // Byte-level BPE is lossless; SPM adds its leading space.
        std::string want = inputs[i];
        if (v->type == TERN_VOCAB_SPM && v->add_space_prefix && !want.empty()) want = " " + want;
        std::string back = test_detokenize(v, got);
        round_trips += back == want;
        CHECK_MSG(back == want, "%s #%zu: round trip '%s' -> '%s'", name, i, inputs[i].c_str(), back.c_str());
    }
    printf("%-13s %3d / %zu vectors match, %d round trips\n", name, pass, inputs.size(), round_trips);
}

static void check_loads(const std::string & dir, const char * name) {
    test_vocab tv;
    tern_status st = test_vocab_load(&tv, dir + "/vocab/ggml-vocab-" + name + ".gguf");
    CHECK_MSG(st == TERN_OK, "%s: load failed: %s", name, tern_last_error());
    if (st != TERN_OK) return;
    // vocab_load took exactly what the measuring pass planned.
    CHECK_MSG(tv.vocab_used == tv.vocab_planned, "%s: vocab took %zu bytes, planned %zu", name, tv.vocab_used,
              tv.vocab_planned);
    CHECK(vocab_n_tokens(&tv.vocab) > 0);
}

int main() {
    std::string dir = tern_test_shared_dir();
    for (const char * name : k_vector_vocabs) {
        check_loads(dir, name);
        check_vectors(dir, name);
    }
    for (const char * name : k_load_only) check_loads(dir, name);
    return tern_test_summary();
}
