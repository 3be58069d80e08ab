// tern-make-model: synthetic GGUF models with the shapes of real ones (random
// weights, a real tokenizer) for performance work. The file has llama.cpp's
// keys, tensor names and shapes, so llama.cpp loads the same file.
//
//   tern-make-model --shape tinyllama --type Q4_K -o /tmp/tinyllama-q4k.gguf
//
// Weights: 2-D tensors N(0, std), norms 1 + N(0, 0.01), biases N(0, std).
// Every row has its own PRNG stream, seeded from (seed, tensor index, row), so
// the file is byte-identical for any thread count. Workers take chunks of rows,
// generate one row in F32 into a scratch row of their own and quantize it
// straight into the tensor's final buffer: the F32 model never exists in
// memory (peak = the output file's size + the vocabulary file).
//
// Types follow llama-quantize with a pure type: every 2-D weight gets --type,
// output.weight (or, with tied embeddings, token_embd.weight) gets Q6_K when
// --type is a K-quant; a row length that is no multiple of the type's block
// falls back as llama.cpp does (Q2_K/Q3_K -> IQ4_NL, Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0, else F16). Norms and biases stay F32.
//
// The tokenizer: every tokenizer.* key of a vocabulary GGUF (--vocab, default
// <shared>/vocab/<shape's vocab> with <shared> from --shared-dir or the
// TERN_SHARED_DIR environment variable); n_vocab is its token count.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/arena.h"
#include "core/status.h"
#include "cpu/threadpool.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "tensor/types.h"
#include "tern.h"

// Tern's internals live in namespace tern.
using namespace tern;

namespace {

// Families beyond llama/qwen2 add their tensors and keys (plan_model, set_hparams).
enum shape_family { FAM_LLAMA, FAM_QWEN2, FAM_LLAMA3, FAM_GEMMA2, FAM_GEMMA3, FAM_SMOLLM3, FAM_PHI3, FAM_GRANITE };

struct model_shape {
    const char * name;
    const char * arch;
    shape_family family;
    uint32_t     n_embd, n_layer, n_head, n_head_kv, n_ff;
    uint32_t     head_dim;     // 0: n_embd / n_head (gemma's and phi-4-mini's differ or rotate part)
    uint32_t     n_rot;        // 0: head_dim (phi3 rotates 96 of 96 or 128)
    float        rope_freq_base, norm_rms_eps;
    bool         qkv_bias;     // qwen2: q/k/v biases
    bool         tied;         // no output.weight: the token embedding is the output
    uint32_t     n_ctx_train;  // <arch>.context_length
    uint32_t     n_vocab;      // 0: the vocabulary file's; more: padded with unused tokens
    const char * vocab_file;   // default vocabulary, in <shared>/vocab/
};

// The 1B-class shapes of issue 25 are the published models' config.json
// dimensions. Vocabularies: the shared files have neither Llama 3's, Gemma's nor
// o200k, so those files carry a shared vocabulary of the same kind (BPE: gpt-2's;
// SentencePiece: llama-spm's) padded to the real token count with unused tokens:
// the embedding and output matrices have the real size, which is what speed needs.
const model_shape k_shapes[] = {
    { "tinyllama",    "llama",   FAM_LLAMA,   2048, 22, 32,  4, 5632,    0,  0, 10000.0f,   1e-5f, false, false,   2048,      0, "ggml-vocab-llama-spm.gguf" },
    { "qwen2.5-0.5b", "qwen2",   FAM_QWEN2,    896, 24, 14,  2, 4864,    0,  0, 1000000.0f, 1e-6f, true,  true,    2048,      0, "ggml-vocab-qwen2.gguf" },
    { "llama-3.2-1b", "llama",   FAM_LLAMA3,  2048, 16, 32,  8, 8192,    0,  0, 500000.0f,  1e-5f, false, true,  131072, 128256, "ggml-vocab-gpt-2.gguf" },
    { "gemma-2-2b",   "gemma2",  FAM_GEMMA2,  2304, 26,  8,  4, 9216,  256,  0, 10000.0f,   1e-6f, false, true,    8192, 256000, "ggml-vocab-llama-spm.gguf" },
    { "gemma-3-1b",   "gemma3",  FAM_GEMMA3,  1152, 26,  4,  1, 6912,  256,  0, 1000000.0f, 1e-6f, false, true,   32768, 262144, "ggml-vocab-llama-spm.gguf" },
    { "smollm3-3b",   "smollm3", FAM_SMOLLM3, 2048, 36, 16,  4, 11008,   0,  0, 5000000.0f, 1e-6f, false, true,   65536, 128256, "ggml-vocab-gpt-2.gguf" },
    { "phi-3.5-mini", "phi3",    FAM_PHI3,    3072, 32, 32, 32, 8192,    0,  0, 10000.0f,   1e-5f, false, false, 131072,      0, "ggml-vocab-phi-3.gguf" },
    { "phi-4-mini",   "phi3",    FAM_PHI3,    3072, 32, 24,  8, 8192,    0, 96, 10000.0f,   1e-5f, false, true,  131072, 200064, "ggml-vocab-gpt-2.gguf" },
    { "granite-3.1-2b", "granite", FAM_GRANITE, 2048, 40, 32, 8, 8192,   0,  0, 5000000.0f, 1e-5f, false, true,  131072,  49155, "ggml-vocab-starcoder.gguf" },
    { "tiny",         "llama",   FAM_LLAMA,     64,  2,  4,  2,  128,    0,  0, 10000.0f,   1e-5f, false, false,   2048,      0, "ggml-vocab-llama-spm.gguf" },
    { "tiny-qwen2",   "qwen2",   FAM_QWEN2,     64,  2,  4,  2,  128,    0,  0, 1000000.0f, 1e-6f, true,  true,    2048,      0, "ggml-vocab-qwen2.gguf" },
};
uint32_t shape_head_dim(const model_shape & s) { return s.head_dim ? s.head_dim : s.n_embd / s.n_head; }
uint32_t shape_n_rot(const model_shape & s) { return s.n_rot ? s.n_rot : shape_head_dim(s); }
const float    k_norm_noise = 0.01f;

struct options {
    const model_shape * shape = NULL;
    tern_type   type = TERN_TYPE_Q8_0;
    std::string vocab, shared_dir, out;
    uint64_t    seed = 42;
    float       std_dev = 0.02f;
    int         n_threads = 1;
};

void usage(FILE * f) {
    fprintf(f,
        "usage: tern-make-model --shape SHAPE [--type TYPE] [--vocab FILE.gguf] [--shared-dir DIR]\n"
        "                       [--seed N] [--std X] [--threads N] -o OUT.gguf\n"
        "  --shape S       tinyllama (dim 2048, 22 layers, 32/4 heads, ffn 5632, vocab 32000)\n"
        "                  qwen2.5-0.5b (dim 896, 24 layers, 14/2 heads, ffn 4864, vocab 151936,\n"
        "                  q/k/v biases, tied embeddings)\n"
        "                  the 1B-class shapes of the newer families, their real dimensions and\n"
        "                  token counts (vocabularies the shared folder lacks are padded):\n"
        "                  llama-3.2-1b (rope_freqs), gemma-2-2b, gemma-3-1b, smollm3-3b,\n"
        "                  phi-3.5-mini, phi-4-mini (LongRoPE), granite-3.1-2b\n"
        "                  tiny, tiny-qwen2 (dim 64, 2 layers, 4/2 heads, ffn 128: for tests)\n"
        "  --type T        weight type: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K\n"
        "                  Q5_K Q6_K IQ4_NL (default Q8_0)\n"
        "  --vocab FILE    GGUF whose tokenizer.* keys are copied (default: <shared>/vocab/ and the\n"
        "                  shape's: llama-spm, qwen2, gpt-2, phi-3 or starcoder)\n"
        "  --shared-dir D  folder with vocab/ (default: $TERN_SHARED_DIR)\n"
        "  --seed N        PRNG seed (default 42); --std X  weight standard deviation (default 0.02)\n"
        "  --threads N     quantizing threads (default: all online CPUs)\n");
}

// A type usable as a weight: compiled in, with a quantizer and a dot product.
bool parse_type(const char * s, tern_type * out) {
    for (int id = 0; id < TERN_TYPE_COUNT; id++) {
        const tern_type_traits * tr = tern_type_traits_get((tern_type) id);
        if (tr && tr->from_float && tr->vec_dot && strcasecmp(tr->name, s) == 0) {
            *out = (tern_type) id;
            return true;
        }
    }
    return false;
}

bool parse_args(int argc, char ** argv, options * o) {
    const char * env = getenv("TERN_SHARED_DIR");
    if (env) o->shared_dir = env;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o->n_threads = cpus > 0 ? (int) cpus : 1;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        const char * v = i + 1 < argc ? argv[++i] : NULL;
        if (!v) { fprintf(stderr, "tern-make-model: %s needs a value\n", a); return false; }
        if (!strcmp(a, "--shape")) {
            for (const model_shape & s : k_shapes) if (!strcmp(s.name, v)) o->shape = &s;
            if (!o->shape) { fprintf(stderr, "tern-make-model: unknown shape '%s'\n", v); return false; }
        } else if (!strcmp(a, "--type")) {
            if (!parse_type(v, &o->type)) { fprintf(stderr, "tern-make-model: unknown weight type '%s'\n", v); return false; }
        } else if (!strcmp(a, "--vocab")) o->vocab = v;
        else if (!strcmp(a, "--shared-dir")) o->shared_dir = v;
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--std")) o->std_dev = strtof(v, NULL);
        else if (!strcmp(a, "--threads")) o->n_threads = atoi(v);
        else if (!strcmp(a, "-o")) o->out = v;
        else { fprintf(stderr, "tern-make-model: unknown option '%s'\n", a); return false; }
    }
    if (!o->shape || o->out.empty() || o->n_threads < 1 || !(o->std_dev > 0)) {
        fprintf(stderr, "tern-make-model: --shape and -o are required (--threads >= 1, --std > 0)\n");
        return false;
    }
    if (o->n_threads > TERN_MAX_THREADS) o->n_threads = TERN_MAX_THREADS;
    if (o->vocab.empty()) {
        if (o->shared_dir.empty()) {
            fprintf(stderr, "tern-make-model: give --vocab FILE, --shared-dir DIR or TERN_SHARED_DIR\n");
            return false;
        }
        o->vocab = o->shared_dir + "/vocab/" + o->shape->vocab_file;
    }
    return true;
}

// ---------------------------------------------------------------------------
// The vocabulary file: read whole, parsed; its tokenizer keys are copied by view.
// ---------------------------------------------------------------------------
struct vocab_file {
    std::vector<uint8_t> bytes;
    std::vector<uint8_t> arena_buf;
    tern_arena           arena;
    gguf_file            f;
    uint32_t             n_vocab = 0;
};

tern_status load_vocab(const char * path, vocab_file * v) {
    FILE * fp = fopen(path, "rb");
    if (!fp) return tern_fail(TERN_ERR_IO, "%s: cannot open the vocabulary file", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    v->bytes.resize(n > 0 ? (size_t) n : 0);
    bool ok = n > 0 && fread(v->bytes.data(), 1, (size_t) n, fp) == (size_t) n;
    fclose(fp);
    if (!ok) return tern_fail(TERN_ERR_IO, "%s: read failed", path);
    gguf_span span = { v->bytes.data(), v->bytes.size(), v->bytes.size() };
    size_t need = 0;
    uint64_t need_prefix = 0;
    TERN_TRY(gguf_measure(&span, path, NULL, NULL, NULL, &need, &need_prefix));
    v->arena_buf.resize(arena_buffer_size(need));
    arena_init(&v->arena, v->arena_buf.data(), v->arena_buf.size());
    TERN_TRY(gguf_parse(&span, path, &v->arena, &v->f));
    const gguf_kv * tokens = gguf_get_arr(&v->f, "tokenizer.ggml.tokens", GGUF_TYPE_STRING);
    if (!tokens || tokens->arr_n == 0 || tokens->arr_n > INT32_MAX) {
        return tern_fail(TERN_ERR_FORMAT, "%s: no tokenizer.ggml.tokens string array", path);
    }
    v->n_vocab = (uint32_t) tokens->arr_n;
    return TERN_OK;
}

// ---------------------------------------------------------------------------
// Tensor plan: names, shapes, types and final buffers.
// ---------------------------------------------------------------------------
// FILL_ROPE_*: RoPE frequency factors, deterministic (fill_rope_factors).
enum fill_kind { FILL_WEIGHT, FILL_NORM, FILL_BIAS, FILL_ROPE_LLAMA3, FILL_ROPE_LONG, FILL_ROPE_SHORT };

struct planned_tensor {
    char      name[64];
    tern_type type;
    int64_t   ne0, ne1;    // ne1 == 1: a vector
    fill_kind kind;
    size_t    row_bytes;
    uint8_t * data;        // ne1 rows of row_bytes, filled by the workers
};

bool is_k_quant(tern_type t) { return tern_type_traits_get(t)->blck_size == 256; }

// llama.cpp's replacement when a row of ne0 values is no whole number of blocks.
tern_type fit_type(tern_type t, int64_t ne0) {
    if (ne0 % tern_type_traits_get(t)->blck_size == 0) return t;
    tern_type alt = TERN_TYPE_F16;
    switch (t) {
        case TERN_TYPE_Q2_K: case TERN_TYPE_Q3_K: alt = TERN_TYPE_IQ4_NL; break;
        case TERN_TYPE_Q4_K: alt = TERN_TYPE_Q5_0; break;
        case TERN_TYPE_Q5_K: alt = TERN_TYPE_Q5_1; break;
        case TERN_TYPE_Q6_K: alt = TERN_TYPE_Q8_0; break;
        default: break;
    }
    const tern_type_traits * tr = tern_type_traits_get(alt);
    return tr && ne0 % tr->blck_size == 0 ? alt : TERN_TYPE_F16;
}

struct tensor_plan {
    std::vector<planned_tensor> tensors;

    void add(const char * name, int64_t ne0, int64_t ne1, fill_kind kind, tern_type type) {
        planned_tensor t;
        memset(&t, 0, sizeof(t));
        snprintf(t.name, sizeof(t.name), "%s", name);
        t.type = kind == FILL_WEIGHT ? fit_type(type, ne0) : TERN_TYPE_F32;
        t.ne0 = ne0;
        t.ne1 = ne1;
        t.kind = kind;
        t.row_bytes = tern_row_size(t.type, ne0);
        tensors.push_back(t);
    }
    void add_layer(int il, const char * suffix, int64_t ne0, int64_t ne1, fill_kind kind, tern_type type) {
        char name[64];
        snprintf(name, sizeof(name), "blk.%d.%s", il, suffix);
        add(name, ne0, ne1, kind, type);
    }
};

// llama.cpp's tensors for the shape, in its file order (convert_hf_to_gguf's).
void plan_model(const model_shape & s, uint32_t n_vocab, tern_type type, tensor_plan * p) {
    const bool tied = s.tied;
    const int64_t n_embd = s.n_embd, head_dim = shape_head_dim(s);
    const int64_t n_q = head_dim * s.n_head, n_kv = head_dim * s.n_head_kv;
    const tern_type out_type = is_k_quant(type) ? TERN_TYPE_Q6_K : type;
    const bool gemma = s.family == FAM_GEMMA2 || s.family == FAM_GEMMA3, phi3 = s.family == FAM_PHI3;
    // RoPE factor vectors come first, as the converter writes them: [n_rot / 2]
    if (s.family == FAM_LLAMA3) p->add("rope_freqs.weight", shape_n_rot(s) / 2, 1, FILL_ROPE_LLAMA3, TERN_TYPE_F32);
    if (phi3) {
        p->add("rope_factors_long.weight", shape_n_rot(s) / 2, 1, FILL_ROPE_LONG, TERN_TYPE_F32);
        p->add("rope_factors_short.weight", shape_n_rot(s) / 2, 1, FILL_ROPE_SHORT, TERN_TYPE_F32);
    }
    p->add("token_embd.weight", n_embd, n_vocab, FILL_WEIGHT, tied ? out_type : type);
    p->add("output_norm.weight", n_embd, 1, FILL_NORM, TERN_TYPE_F32);
    if (!tied) p->add("output.weight", n_embd, n_vocab, FILL_WEIGHT, out_type);
    for (int il = 0; il < (int) s.n_layer; il++) {
        p->add_layer(il, "attn_norm.weight", n_embd, 1, FILL_NORM, TERN_TYPE_F32);
        if (phi3) {
            p->add_layer(il, "attn_qkv.weight", n_embd, n_q + 2 * n_kv, FILL_WEIGHT, type);  // rows q | k | v
        } else {
            p->add_layer(il, "attn_q.weight", n_embd, n_q, FILL_WEIGHT, type);
            p->add_layer(il, "attn_k.weight", n_embd, n_kv, FILL_WEIGHT, type);
            p->add_layer(il, "attn_v.weight", n_embd, n_kv, FILL_WEIGHT, type);
        }
        if (s.qkv_bias) {
            p->add_layer(il, "attn_q.bias", n_q, 1, FILL_BIAS, TERN_TYPE_F32);
            p->add_layer(il, "attn_k.bias", n_kv, 1, FILL_BIAS, TERN_TYPE_F32);
            p->add_layer(il, "attn_v.bias", n_kv, 1, FILL_BIAS, TERN_TYPE_F32);
        }
        if (s.family == FAM_GEMMA3) {
            p->add_layer(il, "attn_q_norm.weight", head_dim, 1, FILL_NORM, TERN_TYPE_F32);
            p->add_layer(il, "attn_k_norm.weight", head_dim, 1, FILL_NORM, TERN_TYPE_F32);
        }
        p->add_layer(il, "attn_output.weight", n_q, n_embd, FILL_WEIGHT, type);
        if (gemma) p->add_layer(il, "post_attention_norm.weight", n_embd, 1, FILL_NORM, TERN_TYPE_F32);
        p->add_layer(il, "ffn_norm.weight", n_embd, 1, FILL_NORM, TERN_TYPE_F32);
        if (phi3) {
            p->add_layer(il, "ffn_up.weight", n_embd, 2 * (int64_t) s.n_ff, FILL_WEIGHT, type);  // rows gate | up
        } else {
            p->add_layer(il, "ffn_gate.weight", n_embd, s.n_ff, FILL_WEIGHT, type);
            p->add_layer(il, "ffn_up.weight", n_embd, s.n_ff, FILL_WEIGHT, type);
        }
        p->add_layer(il, "ffn_down.weight", s.n_ff, n_embd, FILL_WEIGHT, type);
        if (gemma) p->add_layer(il, "post_ffw_norm.weight", n_embd, 1, FILL_NORM, TERN_TYPE_F32);
    }
}

// ---------------------------------------------------------------------------
// Random rows: splitmix64 streams, Box-Muller normals.
// ---------------------------------------------------------------------------
uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct row_rng {
    uint64_t state;
    row_rng(uint64_t seed, uint64_t tensor, uint64_t row)
        : state(mix64(mix64(mix64(seed) + tensor * 0x9e3779b97f4a7c15ull) + row)) {}
    uint64_t next() { return mix64(state += 0x9e3779b97f4a7c15ull); }
    // Uniform in (0, 1] and [0, 1), 24 bits.
    float open_unit() { return (float) ((next() >> 40) + 1) * (1.0f / 16777216.0f); }
    float unit() { return (float) (next() >> 40) * (1.0f / 16777216.0f); }
};

// The factors a converted file carries: Llama 3.x's (convert_hf_to_gguf's "llama3"
// formula with factor 32, low 1, high 4, an original context of 8192, for each pair
// i of frequency base^(-2i/n_rot) and wavelength w = 2 pi / frequency: 1 where
// w < 8192 / 4, 32 where w > 8192 / 1, between them 1 / ((1 - m) / 32 + m) with
// m = (8192 / w - 1) / (4 - 1)); LongRoPE's long factors rising from 1 to ~27 over the
// pairs (Phi-3.5's run 1.0 .. 27.4) and short ones of 1.
void fill_rope_factors(const planned_tensor & t, float rope_base, float * out) {
    const int64_t n_pairs = t.ne0;
    for (int64_t i = 0; i < n_pairs; i++) {
        if (t.kind == FILL_ROPE_SHORT) { out[i] = 1.0f; continue; }
        if (t.kind == FILL_ROPE_LONG) { out[i] = 1.0f + 26.4f * (float) i / (float) (n_pairs - 1); continue; }
        const double w = 6.283185307179586 * pow((double) rope_base, (double) i / (double) n_pairs);
        const double lo_w = 8192.0 / 1.0, hi_w = 8192.0 / 4.0;
        if (w < hi_w) out[i] = 1.0f;
        else if (w > lo_w) out[i] = 32.0f;
        else {
            const double m = (8192.0 / w - 1.0) / (4.0 - 1.0);
            out[i] = (float) (1.0 / ((1.0 - m) / 32.0 + m));
        }
    }
}

void fill_row(const planned_tensor & t, uint64_t seed, uint64_t tensor_index, int64_t row, float std_dev, float * out) {
    row_rng rng(seed, tensor_index, (uint64_t) row);
    const float mean = t.kind == FILL_NORM ? 1.0f : 0.0f;
    const float sd = t.kind == FILL_NORM ? k_norm_noise : std_dev;
    for (int64_t i = 0; i < t.ne0; i += 2) {
        const float r = sqrtf(-2.0f * logf(rng.open_unit())) * sd;
        const float a = 6.2831853f * rng.unit();
        out[i] = mean + r * cosf(a);
        if (i + 1 < t.ne0) out[i + 1] = mean + r * sinf(a);
    }
}

// ---------------------------------------------------------------------------
// Parallel fill: work items are chunks of rows of one tensor.
// ---------------------------------------------------------------------------
struct work_item {
    uint32_t tensor;
    int64_t  row0, row1;
};

struct fill_job {
    std::vector<planned_tensor> * tensors;
    std::vector<work_item>        items;
    std::vector<std::vector<float>> scratch;  // [n_threads][max ne0]
    uint64_t                      seed;
    float                         std_dev;
    float                         rope_base;
    std::atomic<size_t>           next{0};
    std::atomic<uint64_t>         values_done{0};
    uint64_t                      values_total = 0;
    bool                          show_progress = false;
};

void fill_worker(int32_t ith, int32_t /* nth */, void * arg) {
    fill_job * job = (fill_job *) arg;
    float * row = job->scratch[ith].data();
    int last_pct = -1;
    for (size_t k; (k = job->next.fetch_add(1, std::memory_order_relaxed)) < job->items.size();) {
        const work_item & w = job->items[k];
        const planned_tensor & t = (*job->tensors)[w.tensor];
        const tern_type_traits * tr = tern_type_traits_get(t.type);
        for (int64_t r = w.row0; r < w.row1; r++) {
            if (t.kind >= FILL_ROPE_LLAMA3) fill_rope_factors(t, job->rope_base, row);
            else fill_row(t, job->seed, w.tensor, r, job->std_dev, row);
            tr->from_float(row, t.data + (size_t) r * t.row_bytes, t.ne0);
        }
        const uint64_t n = (uint64_t) (w.row1 - w.row0) * t.ne0;
        const uint64_t done = job->values_done.fetch_add(n) + n;
        const int pct = (int) (100 * done / job->values_total);
        if (ith == 0 && job->show_progress && pct != last_pct) {
            fprintf(stderr, "\rtern-make-model: %3d%%", pct);
            last_pct = pct;
        }
    }
}

tern_status fill_tensors(std::vector<planned_tensor> * tensors, const options & o) {
    fill_job job;
    job.tensors = tensors;
    job.seed = o.seed;
    job.std_dev = o.std_dev;
    job.rope_base = o.shape->rope_freq_base;
    job.show_progress = isatty(2);
    int64_t max_ne0 = 0;
    for (uint32_t i = 0; i < tensors->size(); i++) {
        const planned_tensor & t = (*tensors)[i];
        max_ne0 = t.ne0 > max_ne0 ? t.ne0 : max_ne0;
        job.values_total += (uint64_t) t.ne0 * t.ne1;
        const int64_t rows_per_item = t.ne0 >= 65536 ? 1 : 65536 / t.ne0;  // ~64K values per item
        for (int64_t r = 0; r < t.ne1; r += rows_per_item) {
            job.items.push_back({ i, r, r + rows_per_item < t.ne1 ? r + rows_per_item : t.ne1 });
        }
    }
    tern_threadpool_params pp = tern_threadpool_default_params(o.n_threads);
    tern_threadpool * pool = NULL;
    TERN_TRY(tern_threadpool_create(&pp, &pool));
    const int32_t nth = tern_threadpool_n_threads(pool);
    job.scratch.assign((size_t) nth, std::vector<float>((size_t) max_ne0));
    tern_threadpool_run(pool, fill_worker, &job);
    tern_threadpool_free(pool);
    if (job.show_progress) fprintf(stderr, "\n");
    return TERN_OK;
}

// ---------------------------------------------------------------------------
// The file.
// ---------------------------------------------------------------------------

// llama.cpp's general.file_type (llama_ftype) for a model of one weight type.
uint32_t llama_ftype(tern_type t) {
    switch (t) {
        case TERN_TYPE_F32: return 0;
        case TERN_TYPE_F16: return 1;
        case TERN_TYPE_Q4_0: return 2;
        case TERN_TYPE_Q4_1: return 3;
        case TERN_TYPE_Q8_0: return 7;
        case TERN_TYPE_Q5_0: return 8;
        case TERN_TYPE_Q5_1: return 9;
        case TERN_TYPE_Q2_K: return 10;
        case TERN_TYPE_Q3_K: return 11;   // Q3_K_S
        case TERN_TYPE_Q4_K: return 14;   // Q4_K_S
        case TERN_TYPE_Q5_K: return 16;   // Q5_K_S
        case TERN_TYPE_Q6_K: return 18;
        case TERN_TYPE_IQ4_NL: return 25;
        case TERN_TYPE_BF16: return 32;
        default: return 0;
    }
}

tern_status set_hparams(gguf_writer * w, const model_shape & s, uint32_t n_vocab, tern_type type) {
    char name[128];
    auto key = [&](const char * suffix) {
        snprintf(name, sizeof(name), "%s.%s", s.arch, suffix);
        return name;
    };
    TERN_TRY(gguf_writer_set_str(w, "general.architecture", s.arch));
    char title[96];
    snprintf(title, sizeof(title), "tern synthetic %s %s", s.name, tern_type_traits_get(type)->name);
    TERN_TRY(gguf_writer_set_str(w, "general.name", title));
    TERN_TRY(gguf_writer_set_u32(w, key("vocab_size"), n_vocab));
    TERN_TRY(gguf_writer_set_u32(w, key("context_length"), s.n_ctx_train));
    TERN_TRY(gguf_writer_set_u32(w, key("embedding_length"), s.n_embd));
    TERN_TRY(gguf_writer_set_u32(w, key("block_count"), s.n_layer));
    TERN_TRY(gguf_writer_set_u32(w, key("feed_forward_length"), s.n_ff));
    TERN_TRY(gguf_writer_set_u32(w, key("rope.dimension_count"), shape_n_rot(s)));
    TERN_TRY(gguf_writer_set_u32(w, key("attention.head_count"), s.n_head));
    TERN_TRY(gguf_writer_set_u32(w, key("attention.head_count_kv"), s.n_head_kv));
    TERN_TRY(gguf_writer_set_f32(w, key("attention.layer_norm_rms_epsilon"), s.norm_rms_eps));
    if (s.family != FAM_GEMMA2) TERN_TRY(gguf_writer_set_f32(w, key("rope.freq_base"), s.rope_freq_base));
    if (s.head_dim) {
        TERN_TRY(gguf_writer_set_u32(w, key("attention.key_length"), s.head_dim));
        TERN_TRY(gguf_writer_set_u32(w, key("attention.value_length"), s.head_dim));
    }
    switch (s.family) {
        case FAM_GEMMA2:
            TERN_TRY(gguf_writer_set_f32(w, key("attn_logit_softcapping"), 50.0f));
            TERN_TRY(gguf_writer_set_f32(w, key("final_logit_softcapping"), 30.0f));
            TERN_TRY(gguf_writer_set_u32(w, key("attention.sliding_window"), 4096));
            break;
        case FAM_GEMMA3:
            TERN_TRY(gguf_writer_set_u32(w, key("attention.sliding_window"), 512));
            break;
        case FAM_PHI3: {
            // LongRoPE: the factors chosen by context against the original 4096; the
            // attention factor the converter writes, sqrt(1 + ln(32) / ln(4096)).
            TERN_TRY(gguf_writer_set_u32(w, key("rope.scaling.original_context_length"), 4096));
            TERN_TRY(gguf_writer_set_f32(w, key("rope.scaling.attn_factor"), sqrtf(1.0f + logf(32.0f) / logf(4096.0f))));
            // Phi-3.5-mini's window is past any context (262144); Phi-4-mini has none.
            TERN_TRY(gguf_writer_set_u32(w, key("attention.sliding_window"), s.n_head_kv == s.n_head ? 262144 : 0));
            break;
        }
        case FAM_GRANITE:  // granite-3.1-2b's config.json
            TERN_TRY(gguf_writer_set_f32(w, key("embedding_scale"), 12.0f));
            TERN_TRY(gguf_writer_set_f32(w, key("residual_scale"), 0.22f));
            TERN_TRY(gguf_writer_set_f32(w, key("attention.scale"), 0.015625f));
            TERN_TRY(gguf_writer_set_f32(w, key("logit_scale"), 8.0f));
            break;
        default: break;
    }
    TERN_TRY(gguf_writer_set_u32(w, "general.file_type", llama_ftype(type)));
    if (tern_type_traits_get(type)->is_quantized) TERN_TRY(gguf_writer_set_u32(w, "general.quantization_version", 2));
    return TERN_OK;
}

// The tokenizer.* keys, by view; with n_vocab past the file's token count the
// per-token arrays (tokens, scores, token_type) are extended with unused tokens
// "<|tern_pad_N|>" (score 0, type 5: unused), which no text tokenizes to.
tern_status copy_tokenizer(gguf_writer * w, const gguf_file & vocab, uint32_t n_vocab, std::vector<std::string> * pad_text) {
    for (uint64_t i = 0; i < vocab.n_kv; i++) {
        const gguf_kv & kv = vocab.kv[i];
        const gguf_str k = kv.key;
        if (k.len <= 10 || memcmp(k.data, "tokenizer.", 10) != 0) continue;
        const bool per_token = kv.type == GGUF_TYPE_ARRAY && kv.arr_n < n_vocab &&
                               (gguf_str_eq(k, "tokenizer.ggml.tokens") || gguf_str_eq(k, "tokenizer.ggml.scores") ||
                                gguf_str_eq(k, "tokenizer.ggml.token_type"));
        if (!per_token) { TERN_TRY(gguf_writer_copy_kv(w, &kv)); continue; }
        const uint64_t n_old = kv.arr_n;
        std::string key_name((const char *) k.data, (size_t) k.len);
        if (kv.arr_type == GGUF_TYPE_STRING) {
            std::vector<const char *> strs(n_vocab);
            std::vector<std::string> old_text(n_old);
            for (uint64_t t = 0; t < n_old; t++) {
                old_text[t].assign((const char *) kv.strs[t].data, (size_t) kv.strs[t].len);
                strs[t] = old_text[t].c_str();
            }
            pad_text->resize(n_vocab - n_old);
            for (uint64_t t = n_old; t < n_vocab; t++) {
                char buf[32];
                snprintf(buf, sizeof(buf), "<|tern_pad_%u|>", (unsigned) (t - n_old));
                (*pad_text)[t - n_old] = buf;
                strs[t] = (*pad_text)[t - n_old].c_str();
            }
            TERN_TRY(gguf_writer_set_arr_str(w, key_name.c_str(), strs.data(), n_vocab));  // the writer copies
        } else if (kv.arr_type == GGUF_TYPE_FLOAT32 || kv.arr_type == GGUF_TYPE_INT32) {
            std::vector<uint8_t> vals((size_t) n_vocab * 4);
            memcpy(vals.data(), kv.data, (size_t) n_old * 4);
            const float zero = 0.0f;
            const int32_t unused = 5;
            for (uint64_t t = n_old; t < n_vocab; t++) {
                memcpy(vals.data() + t * 4, kv.arr_type == GGUF_TYPE_FLOAT32 ? (const void *) &zero : (const void *) &unused, 4);
            }
            TERN_TRY(gguf_writer_set_arr(w, key_name.c_str(), kv.arr_type, vals.data(), n_vocab));
        } else {
            return tern_fail(TERN_ERR_FORMAT, "%s: cannot pad an array of type %d", key_name.c_str(), (int) kv.arr_type);
        }
    }
    return TERN_OK;
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

tern_status make_model(const options & o) {
    const double t0 = now_s();
    vocab_file vocab;
    TERN_TRY(load_vocab(o.vocab.c_str(), &vocab));

    const uint32_t n_vocab = o.shape->n_vocab > vocab.n_vocab ? o.shape->n_vocab : vocab.n_vocab;
    tensor_plan plan;
    plan_model(*o.shape, n_vocab, o.type, &plan);
    uint64_t bytes = 0, params = 0;
    for (planned_tensor & t : plan.tensors) {
        t.data = (uint8_t *) malloc(t.row_bytes * (size_t) t.ne1);
        if (!t.data) return tern_fail(TERN_ERR_NO_MEMORY, "tensor '%s': %zu bytes", t.name, t.row_bytes * (size_t) t.ne1);
        bytes += t.row_bytes * (uint64_t) t.ne1;
        params += (uint64_t) t.ne0 * t.ne1;
    }
    struct free_buffers {
        tensor_plan * p;
        ~free_buffers() { for (planned_tensor & t : p->tensors) free(t.data); }
    } release = { &plan };

    TERN_TRY(fill_tensors(&plan.tensors, o));
    const double t_fill = now_s() - t0;

    // The writer copies padded per-token arrays into its arena: under 96 bytes a token.
    std::vector<uint8_t> writer_mem(((size_t) 1 << 20) + (size_t) n_vocab * 96);
    tern_arena arena;
    arena_init(&arena, writer_mem.data(), writer_mem.size());
    gguf_writer w;
    TERN_TRY(gguf_writer_init(&w, &arena, (uint32_t) vocab.f.n_kv + 32, (uint32_t) plan.tensors.size()));
    TERN_TRY(set_hparams(&w, *o.shape, n_vocab, o.type));
    std::vector<std::string> pad_text;
    TERN_TRY(copy_tokenizer(&w, vocab.f, n_vocab, &pad_text));
    for (const planned_tensor & t : plan.tensors) {
        const int64_t ne[2] = { t.ne0, t.ne1 };
        TERN_TRY(gguf_writer_add_tensor(&w, t.name, t.type, t.ne1 == 1 ? 1 : 2, ne, t.data));
    }
    TERN_TRY(gguf_writer_write(&w, o.out.c_str()));
    printf("%s: %s %s, %.3f B parameters, vocab %u (%s), %.1f MiB of tensors; generated in %.1f s with %d threads, "
           "%.1f s in all\n", o.out.c_str(), o.shape->name, tern_type_traits_get(o.type)->name, params * 1e-9,
           n_vocab, o.vocab.c_str(), bytes / 1048576.0, t_fill, o.n_threads, now_s() - t0);
    return TERN_OK;
}

} // namespace

int main(int argc, char ** argv) {
    options o;
    if (!parse_args(argc, argv, &o)) {
        usage(stderr);
        return 1;
    }
    if (make_model(o) != TERN_OK) {
        fprintf(stderr, "tern-make-model: %s\n", tern_last_error());
        return 1;
    }
    return 0;
}
