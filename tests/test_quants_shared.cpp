// Quantizers against llama.cpp: every 2-D tensor of an F32 model, quantized
// here, must have the same bytes as the same tensor in the files llama-quantize
// made from it, whenever that tensor has one of this part's types there
// (F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; K-quant tensors are test_quants_k_shared's).
// IQ4_NL: reports how many tensors are bit-identical and requires the others to
// be at least as accurate as llama.cpp's (RMS error within a factor 1.0001).
// Also decodes blocks of every such tensor by hand from the file bytes and
// compares with the dequantizers.
#include <math.h>
#include <stdio.h>
#include <string>
#include <vector>
#include "check.h"
#include "core/arena.h"
#include "gguf/gguf.h"
#include "tensor/types.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

struct model_file {
    std::vector<uint8_t> bytes;
    std::vector<uint8_t> arena_buf;
    tern_arena arena;
    gguf_file f;

    const uint8_t * data(const gguf_tensor_info & t) const { return f.base + f.data_offset + t.offset; }
};

bool load(const std::string & path, model_file & m) {
    FILE * fp = fopen(path.c_str(), "rb");
    if (!fp) return false;
    fseek(fp, 0, SEEK_END);
    m.bytes.resize((size_t) ftell(fp));
    fseek(fp, 0, SEEK_SET);
    const bool read_ok = fread(m.bytes.data(), 1, m.bytes.size(), fp) == m.bytes.size();
    fclose(fp);
    if (!read_ok) return false;
    const gguf_span span = {m.bytes.data(), m.bytes.size(), m.bytes.size()};
    size_t need = 0;
    uint64_t need_prefix = 0;
    if (gguf_measure(&span, path.c_str(), nullptr, NULL, nullptr, &need, &need_prefix) != TERN_OK) return false;
    m.arena_buf.resize(arena_buffer_size(need));
    return arena_init(&m.arena, m.arena_buf.data(), m.arena_buf.size()) &&
           gguf_parse(&span, path.c_str(), &m.arena, &m.f) == TERN_OK;
}

// ---------------------------------------------------------------- hand decoding
// Written from the format descriptions, sharing nothing with src/tensor.

double half(const uint8_t * p) {
    const int h = p[0] | p[1] << 8;
    const int e = (h >> 10) & 31, mant = h & 1023;
    const double v = e == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, e - 25);
    return (h & 0x8000) ? -v : v;
}

const int k_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Value i (0..31) of the block at p.
double hand_value(tern_type type, const uint8_t * p, int i) {
    const int nib_at = i & 15, hi = i >= 16;
    auto nib = [&](const uint8_t * qs) { return hi ? qs[nib_at] >> 4 : qs[nib_at] & 15; };
    auto bit5 = [&](const uint8_t * qh) { return ((qh[i / 8] >> (i % 8)) & 1) << 4; };
    switch (type) {
        case TERN_TYPE_F16: return half(p + 2 * i);
        case TERN_TYPE_Q4_0: return half(p) * (nib(p + 2) - 8);
        case TERN_TYPE_Q4_1: return half(p) * nib(p + 4) + half(p + 2);
        case TERN_TYPE_Q5_0: return half(p) * ((nib(p + 6) | bit5(p + 2)) - 16);
        case TERN_TYPE_Q5_1: return half(p) * (nib(p + 8) | bit5(p + 4)) + half(p + 2);
        case TERN_TYPE_Q8_0: return half(p) * (int8_t) p[2 + i];
        case TERN_TYPE_IQ4_NL: return half(p) * k_iq4nl[nib(p + 2)];
        default: return NAN;
    }
}

// Decode the first, a middle and the last block of a tensor by hand.
void check_hand_decode(const gguf_tensor_info & t, const uint8_t * data, const char * file) {
    const tern_type_traits * tr = tern_type_traits_get(t.type);
    const int64_t n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
    const int64_t bl = 32;  // for F16, 32 values
    const int64_t block_bytes = t.type == TERN_TYPE_F16 ? 64 : (int64_t) tr->type_size;
    int bad = 0;
    for (int64_t b : {(int64_t) 0, n / bl / 2, n / bl - 1}) {
        float y[32];
        tr->to_float(data + b * block_bytes, y, bl);
        for (int i = 0; i < bl; i++) {
            const double v = hand_value(t.type, data + b * block_bytes, i);
            if (!(fabs(v - y[i]) <= 1e-6 * fabs(v))) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%s: %s: %d hand-decoded values differ", file, t.name, bad);
}

// ---------------------------------------------------------------- comparison

bool is_mine(tern_type type) {
    switch (type) {
        case TERN_TYPE_F16: case TERN_TYPE_Q4_0: case TERN_TYPE_Q4_1: case TERN_TYPE_Q5_0:
        case TERN_TYPE_Q5_1: case TERN_TYPE_Q8_0: case TERN_TYPE_IQ4_NL: return true;
        default: return false;
    }
}

double rms_error(const float * x, const std::vector<float> & y) {
    double se = 0;
    for (size_t i = 0; i < y.size(); i++) se += (double) (x[i] - y[i]) * (x[i] - y[i]);
    return sqrt(se / (double) y.size());
}

void compare_file(const std::string & dir, const char * f32_name, const char * quant_name) {
    model_file src, ref;
    const bool ok = load(dir + "/" + f32_name, src) && load(dir + "/" + quant_name, ref);
    CHECK_MSG(ok, "cannot read %s / %s: %s", f32_name, quant_name, tern_last_error());
    if (!ok) return;
    int compared = 0, identical = 0;
    for (uint64_t i = 0; i < src.f.n_tensors; i++) {
        const gguf_tensor_info & ts = src.f.tensors[i];
        if (ts.n_dims != 2 || ts.type != TERN_TYPE_F32) continue;
        const int64_t k = gguf_find_tensor(&ref.f, ts.name);
        CHECK_MSG(k >= 0, "%s: no tensor %s", quant_name, ts.name);
        if (k < 0) continue;
        const gguf_tensor_info & tq = ref.f.tensors[k];
        if (!is_mine(tq.type)) continue;
        CHECK_MSG(tq.ne[0] == ts.ne[0] && tq.ne[1] == ts.ne[1], "%s: %s shape", quant_name, ts.name);
        check_hand_decode(tq, ref.data(tq), quant_name);

        const tern_type_traits * tr = tern_type_traits_get(tq.type);
        const int64_t ne0 = ts.ne[0], rows = ts.ne[1];
        const size_t row_bytes = tern_row_size(tq.type, ne0);
        const float * x = (const float *) src.data(ts);
        std::vector<uint8_t> q(row_bytes * rows);
        for (int64_t r = 0; r < rows; r++) tr->from_float(x + r * ne0, q.data() + r * row_bytes, ne0);
        compared++;
        const uint8_t * theirs = ref.data(tq);
        if (memcmp(q.data(), theirs, q.size()) == 0) {
            identical++;
            continue;
        }
        size_t at = 0;
        while (q[at] == theirs[at]) at++;
        if (tq.type != TERN_TYPE_IQ4_NL) {
            CHECK_MSG(false, "%s: %s (%s): bytes differ from llama.cpp's at row %zu, byte %zu", quant_name, ts.name,
                      tr->name, at / row_bytes, at % row_bytes);
            continue;
        }
        std::vector<float> ours(ne0 * rows), llama(ne0 * rows);
        tr->to_float(q.data(), ours.data(), ne0 * rows);
        tr->to_float(theirs, llama.data(), ne0 * rows);
        const double e_ours = rms_error(x, ours), e_llama = rms_error(x, llama);
        printf("  %s: %s differs (from row %zu): rms error %.9g here, %.9g llama.cpp\n", quant_name, ts.name,
               at / row_bytes, e_ours, e_llama);
        CHECK_MSG(e_ours <= e_llama * 1.0001, "%s: %s: rms error %g > llama.cpp's %g", quant_name, ts.name, e_ours,
                  e_llama);
    }
    printf("%s: %d of %d tensors bit-identical with llama.cpp\n", quant_name, identical, compared);
    CHECK_MSG(compared > 0, "%s: no tensor of a type under test", quant_name);
}

}  // namespace

int main() {
    const std::string dir = std::string(tern_test_shared_dir()) + "/models";
    const char * ktest[] = {"ktest-llama-F16.gguf",  "ktest-llama-Q4_0.gguf", "ktest-llama-Q4_1.gguf",
                            "ktest-llama-Q5_0.gguf", "ktest-llama-Q5_1.gguf", "ktest-llama-Q8_0.gguf",
                            "ktest-llama-IQ4_NL.gguf"};
    for (const char * q : ktest) compare_file(dir, "ktest-llama-F32.gguf", q);
    const char * stories[] = {"TinyStories-656K-F16.gguf", "TinyStories-656K-Q4_0.gguf", "TinyStories-656K-Q8_0.gguf",
                              "TinyStories-656K-IQ4_NL.gguf"};
    for (const char * q : stories) compare_file(dir, "TinyStories-656K-F32.gguf", q);
    return tern_test_summary();
}
