// K-quant quantizers against llama-quantize's output: every 2-D tensor of
// ktest-llama-F32.gguf is quantized here and compared byte for byte with the
// same tensor in each quantized ktest-llama file where it is a K-quant.
// Q6_K must be bit-identical; for the other types our RMS error against the
// F32 data must not exceed llama.cpp's. A few blocks of each K-quant type are
// also decoded by an independent walk of the layout (ggml's loop structure)
// and compared with tern_dequantize_row_<t>.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "gguf/gguf.h"
#include "tensor/quants_k.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

struct kformat {
    tern_type type;
    const char * name;
    size_t block_bytes;
    void (*quantize)(const float *, void *, int64_t);
    void (*dequantize)(const void *, float *, int64_t);
};

const kformat k_formats[] = {
    {TERN_TYPE_Q2_K, "Q2_K", sizeof(block_q2_K), tern_quantize_row_q2_K, tern_dequantize_row_q2_K},
    {TERN_TYPE_Q3_K, "Q3_K", sizeof(block_q3_K), tern_quantize_row_q3_K, tern_dequantize_row_q3_K},
    {TERN_TYPE_Q4_K, "Q4_K", sizeof(block_q4_K), tern_quantize_row_q4_K, tern_dequantize_row_q4_K},
    {TERN_TYPE_Q5_K, "Q5_K", sizeof(block_q5_K), tern_quantize_row_q5_K, tern_dequantize_row_q5_K},
    {TERN_TYPE_Q6_K, "Q6_K", sizeof(block_q6_K), tern_quantize_row_q6_K, tern_dequantize_row_q6_K},
};

const kformat * find_format(tern_type t) {
    for (const kformat & f : k_formats) {
        if (f.type == t) return &f;
    }
    return nullptr;
}

// A GGUF file read whole, with its parsed index.
struct loaded_gguf {
    std::vector<uint8_t> bytes;
    std::vector<uint8_t> arena_buf;
    gguf_file file;

    const uint8_t * tensor_data(int64_t i) const { return file.base + file.data_offset + file.tensors[i].offset; }
};

bool load_gguf(const std::string & path, loaded_gguf * out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    out->bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    gguf_span span = {out->bytes.data(), out->bytes.size(), out->bytes.size()};
    size_t need = 0;
    uint64_t need_prefix = 0;
    if (gguf_measure(&span, path.c_str(), nullptr, NULL, nullptr, &need, &need_prefix) != TERN_OK) return false;
    out->arena_buf.resize(arena_buffer_size(need));
    tern_arena arena;
    if (!arena_init(&arena, out->arena_buf.data(), out->arena_buf.size())) return false;
    return gguf_parse(&span, path.c_str(), &arena, &out->file) == TERN_OK;
}

double rms_error(const float * a, const float * b, size_t n) {
    double e = 0;
    for (size_t i = 0; i < n; ++i) e += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
    return sqrt(e / (double) n);
}

// --- Independent decoders: ggml's dequantize_row_<t> loop structure, one block.
void ref_decode_q2_K(const block_q2_K * b, float * y) {
    const float d = tern_fp16_to_fp32(b->d), dmin = tern_fp16_to_fp32(b->dmin);
    const uint8_t * q = b->qs;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int part = 0; part < 2; ++part) {
                uint8_t sc = b->scales[is++];
                float dl = d * (sc & 0xF), ml = dmin * (sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * ((q[16 * part + l] >> shift) & 3) - ml;
            }
        }
    }
}

void ref_decode_q3_K(const block_q3_K * b, float * y) {
    // Unpack the 16 6-bit scales by the other route: all low nibbles first.
    int sc[16];
    for (int j = 0; j < 8; ++j) {
        sc[j] = b->scales[j] & 0xF;
        sc[j + 8] = b->scales[j] >> 4;
    }
    for (int j = 0; j < 16; ++j) sc[j] |= ((b->scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
    const float d = tern_fp16_to_fp32(b->d);
    const uint8_t * q = b->qs;
    uint8_t m = 1;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
        for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
            for (int part = 0; part < 2; ++part) {
                float dl = d * (sc[is++] - 32);
                for (int l = 16 * part; l < 16 * part + 16; ++l) {
                    *y++ = dl * (((q[l] >> shift) & 3) - ((b->hmask[l] & m) ? 0 : 4));
                }
            }
        }
    }
}

// Q4_K (qh == nullptr) and Q5_K.
void ref_decode_k4(tern_fp16 dh, tern_fp16 dminh, const uint8_t * s, const uint8_t * qs, const uint8_t * qh,
                   float * y) {
    const float d = tern_fp16_to_fp32(dh), dmin = tern_fp16_to_fp32(dminh);
    for (int c = 0; c < 4; ++c) {
        for (int u = 0; u < 2; ++u) {
            int j = 2 * c + u;
            int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
            int mn = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
            float dl = d * sc, ml = dmin * mn;
            for (int l = 0; l < 32; ++l) {
                int v = (qs[32 * c + l] >> (4 * u)) & 0xF;
                if (qh && (qh[l] >> j & 1)) v += 16;
                *y++ = dl * v - ml;
            }
        }
    }
}

void ref_decode_q6_K(const block_q6_K * b, float * y) {
    const float d = tern_fp16_to_fp32(b->d);
    for (int h = 0; h < 2; ++h) {
        const uint8_t * ql = b->ql + 64 * h;
        const uint8_t * qh = b->qh + 32 * h;
        const int8_t * sc = b->scales + 8 * h;
        for (int l = 0; l < 32; ++l) {
            int is = l / 16;
            int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[128 * h + l] = d * sc[is] * q1;
            y[128 * h + l + 32] = d * sc[is + 2] * q2;
            y[128 * h + l + 64] = d * sc[is + 4] * q3;
            y[128 * h + l + 96] = d * sc[is + 6] * q4;
        }
    }
}

void ref_decode(tern_type t, const uint8_t * block, float * y) {
    switch (t) {
        case TERN_TYPE_Q2_K: ref_decode_q2_K((const block_q2_K *) block, y); break;
        case TERN_TYPE_Q3_K: ref_decode_q3_K((const block_q3_K *) block, y); break;
        case TERN_TYPE_Q4_K: {
            const block_q4_K * b = (const block_q4_K *) block;
            ref_decode_k4(b->d, b->dmin, b->scales, b->qs, nullptr, y);
            break;
        }
        case TERN_TYPE_Q5_K: {
            const block_q5_K * b = (const block_q5_K *) block;
            ref_decode_k4(b->d, b->dmin, b->scales, b->qs, b->qh, y);
            break;
        }
        case TERN_TYPE_Q6_K: ref_decode_q6_K((const block_q6_K *) block, y); break;
        default: break;
    }
}

// First blocks, a middle one and the last one of a tensor, independently decoded.
void check_independent_decode(const kformat & f, const uint8_t * data, int64_t n_blocks, const char * where) {
    const int64_t picks[] = {0, 1, 2, n_blocks / 2, n_blocks - 1};
    for (int64_t ib : picks) {
        const uint8_t * block = data + ib * f.block_bytes;
        float want[QK_K], got[QK_K];
        ref_decode(f.type, block, want);
        f.dequantize(block, got, QK_K);
        float max_diff = 0, max_abs = 0;
        for (int i = 0; i < QK_K; ++i) {
            max_diff = fmaxf(max_diff, fabsf(want[i] - got[i]));
            max_abs = fmaxf(max_abs, fabsf(want[i]));
        }
        CHECK_MSG(max_diff <= 1e-6f * max_abs, "%s block %lld: dequantize differs by %g", where, (long long) ib,
                  max_diff);
    }
}

struct type_tally {
    int tensors = 0;
    int identical = 0;
    int decoded = 0;  // tensors checked by the independent decoder
};

}  // namespace

int main() {
    const std::string dir = std::string(tern_test_shared_dir()) + "/models/";
    loaded_gguf f32;
    const bool f32_ok = load_gguf(dir + "ktest-llama-F32.gguf", &f32);
    CHECK_MSG(f32_ok, "cannot load ktest-llama-F32.gguf");
    if (!f32_ok) return tern_test_summary();

    const char * variants[] = {"Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q4_0",
                               "Q4_1", "Q5_0",   "Q5_1",   "Q8_0"};
    // Our quantization of (F32 tensor index, type), made once and reused by
    // every file that stores that tensor in that type.
    std::map<std::pair<int64_t, int>, std::vector<uint8_t>> ours;
    std::map<int, type_tally> tally;

    for (const char * variant : variants) {
        const std::string name = std::string("ktest-llama-") + variant + ".gguf";
        loaded_gguf qf;
        const bool ok = load_gguf(dir + name, &qf);
        CHECK_MSG(ok, "cannot load %s", name.c_str());
        if (!ok) continue;
        for (uint64_t ti = 0; ti < f32.file.n_tensors; ++ti) {
            const gguf_tensor_info & src = f32.file.tensors[ti];
            if (src.n_dims != 2 || src.type != TERN_TYPE_F32) continue;
            int64_t qi = gguf_find_tensor(&qf.file, src.name);
            CHECK_MSG(qi >= 0, "%s: tensor %s missing", name.c_str(), src.name);
            if (qi < 0) continue;
            const gguf_tensor_info & dst = qf.file.tensors[qi];
            const kformat * fmt = find_format(dst.type);
            if (!fmt) continue;

            const int64_t n = src.ne[0] * src.ne[1];
            const int64_t n_blocks = n / QK_K;
            CHECK_MSG(dst.bytes == (uint64_t) n_blocks * fmt->block_bytes, "%s %s: %llu bytes", name.c_str(),
                      src.name, (unsigned long long) dst.bytes);
            const float * x = (const float *) f32.tensor_data((int64_t) ti);
            std::vector<uint8_t> & mine = ours[{(int64_t) ti, (int) dst.type}];
            if (mine.empty()) {
                mine.resize((size_t) n_blocks * fmt->block_bytes);
                fmt->quantize(x, mine.data(), n);
            }
            const uint8_t * theirs = qf.tensor_data(qi);
            type_tally & t = tally[(int) dst.type];
            t.tensors++;
            const bool identical = memcmp(mine.data(), theirs, mine.size()) == 0;
            t.identical += identical;

            std::string where = name + " " + src.name + " (" + fmt->name + ")";
            if (t.decoded < 3) {
                check_independent_decode(*fmt, theirs, n_blocks, where.c_str());
                t.decoded++;
            }
            if (fmt->type == TERN_TYPE_Q6_K) {
                CHECK_MSG(identical, "%s: not bit-identical to llama.cpp", where.c_str());
            }
            if (!identical) {
                int64_t diff_blocks = 0;
                for (int64_t b = 0; b < n_blocks; ++b) {
                    diff_blocks += memcmp(mine.data() + b * fmt->block_bytes, theirs + b * fmt->block_bytes,
                                          fmt->block_bytes) != 0;
                }
                std::vector<float> dm((size_t) n), dt((size_t) n);
                fmt->dequantize(mine.data(), dm.data(), n);
                fmt->dequantize(theirs, dt.data(), n);
                double e_mine = rms_error(dm.data(), x, (size_t) n);
                double e_theirs = rms_error(dt.data(), x, (size_t) n);
                printf("%s: %lld of %lld blocks differ, rms error ours %.6g, llama.cpp %.6g\n", where.c_str(),
                       (long long) diff_blocks, (long long) n_blocks, e_mine, e_theirs);
                CHECK_MSG(e_mine <= e_theirs * 1.0001, "%s: rms error %.6g > llama.cpp's %.6g", where.c_str(),
                          e_mine, e_theirs);
            }
        }
    }
    for (const kformat & f : k_formats) {
        const type_tally & t = tally[(int) f.type];
        printf("%s: %d of %d tensors bit-identical to llama.cpp\n", f.name, t.identical, t.tensors);
        CHECK_MSG(t.tensors > 0, "no %s tensor found in the ktest-llama files", f.name);
    }
    return tern_test_summary();
}
