// Hostile models and API misuse (issue 8): one regression case per defect
// class, each on the mmap, read and blob paths where the path matters.
//
// Models are rewritten from the shared ones with the GGUF writer: every key
// and tensor copied, then one thing changed (a key's value or type, the
// alignment, a tensor's data, a layer dropped). Each case states the status
// and the words its error must carry: the error names the real cause and the
// key or tensor, never a symptom ("arena exhausted", "wrong type").
#include <sys/resource.h>

#include <atomic>
#include <functional>
#include <thread>

#include "gguf/writer.h"
#include "gguf_test_util.h"
#include "tensor/types.h"
#include "tern.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

namespace {

std::string g_models;

// ---- rewriting a model ------------------------------------------------------------

struct edit {
    std::vector<std::string> drop_keys;
    std::function<void(gguf_writer *)> set;                          // keys set after the copy
    std::function<void(const char *, tern_type, std::vector<uint8_t> &)> data;  // tensor bytes
    int64_t drop_layer = -1;                                          // tensors blk.N.* left out
    std::string reshape;                                              // this tensor's ne[0] halved (its first half kept)
    uint32_t alignment = 0;                                           // 0: the file's
};

// The rewritten file's bytes (empty when writing failed).
std::vector<uint8_t> rewrite(const std::string & model, const edit & e, const temp_dir & tmp) {
    std::vector<uint8_t> src = read_bytes(g_models + "/" + model);
    CHECK_MSG(!src.empty(), "%s: cannot read", model.c_str());
    if (src.empty()) return {};
    tern_model_params mp = load_params(0);
    model_files mf;
    if (model_files_open_blob(src.data(), src.size(), &mp, NULL, &mf) != TERN_OK) {
        CHECK_MSG(false, "%s: %s", model.c_str(), tern_last_error());
        return {};
    }
    const gguf_file & f = mf.splits[0];
    heap_arena mem(1 << 22);
    gguf_writer w;
    gguf_writer_init(&w, &mem.arena, (uint32_t) f.n_kv + 8, (uint32_t) f.n_tensors);
    for (uint64_t i = 0; i < f.n_kv; i++) {
        std::string key(f.kv[i].key.data, f.kv[i].key.len);
        if (std::find(e.drop_keys.begin(), e.drop_keys.end(), key) != e.drop_keys.end()) continue;
        gguf_writer_copy_kv(&w, &f.kv[i]);
    }
    if (e.alignment) gguf_writer_set_u32(&w, "general.alignment", e.alignment);
    if (e.set) e.set(&w);
    std::vector<std::vector<uint8_t>> copies(mf.n_tensors);
    for (int64_t i = 0; i < mf.n_tensors; i++) {
        const model_file_tensor & t = mf.tensors[i];
        if (e.drop_layer >= 0 && model_tensor_layer(t.name) == e.drop_layer) continue;
        const void * data = t.data;
        if (e.data) {
            copies[i].assign(t.data, t.data + t.bytes);
            e.data(t.name, t.type, copies[i]);
            data = copies[i].data();
        }
        int64_t ne[4] = {t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
        if (e.reshape == t.name) ne[0] /= 2;
        gguf_writer_add_tensor(&w, t.name, t.type, (uint32_t) t.n_dims, ne, data);
    }
    const std::string path = tmp.file("edited.gguf");
    tern_status st = gguf_writer_write(&w, path.c_str());
    model_files_close(&mf);
    CHECK_MSG(st == TERN_OK, "write: %s", tern_last_error());
    return st == TERN_OK ? read_bytes(path) : std::vector<uint8_t>();
}

// Loads the bytes on every path; each must give `want` with `words` in the error.
void expect_refused(const char * what, const std::vector<uint8_t> & bytes, tern_status want, const char * words,
                    const temp_dir & tmp) {
    if (bytes.empty()) return;
    const std::string path = tmp.file("case.gguf");
    write_bytes(path, bytes);
    for (int mode = 0; mode < 3; mode++) {
        tern_model_params mp = tern_model_default_params();
        mp.use_mmap = mode == 0;
        tern_model * m = NULL;
        tern_status st = mode < 2 ? tern_model_load_file(path.c_str(), &mp, &m)
                                  : tern_model_load_blob(bytes.data(), bytes.size(), &mp, &m);
        CHECK_MSG(st == want && m == NULL && strstr(tern_last_error(), words), "%s (%s): got %s: %s", what,
                  mode == 0 ? "mmap" : mode == 1 ? "read" : "blob", tern_status_str(st), tern_last_error());
        if (m) tern_model_free(m);
    }
}

tern_model * load_bytes(const std::vector<uint8_t> & bytes, const temp_dir & tmp, int check_tensors = 0) {
    const std::string path = tmp.file("ok.gguf");
    write_bytes(path, bytes);
    tern_model_params mp = tern_model_default_params();
    mp.check_tensors = check_tensors;
    tern_model * m = NULL;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    if (st != TERN_OK) return NULL;
    return m;
}

void put_f32(std::vector<uint8_t> & d, size_t i, float v) { memcpy(d.data() + 4 * i, &v, 4); }

// ---- class 1: misaligned weights ------------------------------------------------------

void test_alignment(const temp_dir & tmp) {
    // general.alignment 1: the data section starts right after the header, so
    // the F32 tensors land at offsets that are not multiples of 4.
    edit e;
    e.alignment = 1;
    std::vector<uint8_t> b = rewrite("stories260K.gguf", e, tmp);
    // The header's length decides whether the data section is misaligned; pad a
    // key until it is.
    for (int pad = 1; pad < 4 && !b.empty(); pad++) {
        edit e2 = e;
        std::string filler(pad, 'x');
        e2.set = [filler](gguf_writer * w) { gguf_writer_set_str(w, "tern.test.filler", filler.c_str()); };
        std::vector<uint8_t> b2 = rewrite("stories260K.gguf", e2, tmp);
        tern_model * m = load_bytes(b2, tmp);
        if (m) { tern_model_free(m); continue; }  // happened to be aligned
        expect_refused("alignment 1", b2, TERN_ERR_FORMAT, "not aligned", tmp);
        break;
    }
    // A valid file handed over at an odd address.
    std::vector<uint8_t> good = read_bytes(g_models + "/stories260K.gguf");
    std::vector<uint8_t> shifted(good.size() + 8);
    memcpy(shifted.data() + 1, good.data(), good.size());
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    tern_status st = tern_model_load_blob(shifted.data() + 1, good.size(), &mp, &m);
    CHECK_MSG(st == TERN_ERR_INVALID_ARG && strstr(tern_last_error(), "misaligned"), "odd blob: %s: %s",
              tern_status_str(st), tern_last_error());
    if (m) tern_model_free(m);
}

// ---- classes 7, 8, 11: counts against the tensors, ranges, names --------------------------

size_t max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t) ru.ru_maxrss;
}

void test_counts(const temp_dir & tmp) {
    auto set_u32 = [](const char * key, uint32_t v) {
        edit e;
        e.set = [key, v](gguf_writer * w) { gguf_writer_set_u32(w, key, v); };
        return e;
    };
    // block_count near 1e6 in a small file: refused before any large table exists.
    const size_t rss0 = max_rss_kb();
    expect_refused("block_count 1e6", rewrite("stories260K.gguf", set_u32("llama.block_count", 999999), tmp),
                   TERN_ERR_FORMAT, "block_count", tmp);
    CHECK_MSG(max_rss_kb() < rss0 + 64 * 1024, "block_count 1e6 grew the peak RSS by %zu KB", max_rss_kb() - rss0);
    expect_refused("block_count 2^32-1", rewrite("stories260K.gguf", set_u32("llama.block_count", 0xFFFFFFFFu), tmp),
                   TERN_ERR_FORMAT, "llama.block_count", tmp);
    // Fewer layers declared than present, and a layer missing from the tensors.
    expect_refused("block_count 4 of 5", rewrite("stories260K.gguf", set_u32("llama.block_count", 4), tmp),
                   TERN_ERR_FORMAT, "block_count", tmp);
    edit drop;
    drop.drop_layer = 4;
    expect_refused("layer 4 dropped", rewrite("stories260K.gguf", drop, tmp), TERN_ERR_FORMAT, "block_count", tmp);
    // context_length: 0, and >= 2^31 (would come back negative through the int32 API).
    expect_refused("context_length 0", rewrite("stories260K.gguf", set_u32("llama.context_length", 0), tmp),
                   TERN_ERR_FORMAT, "llama.context_length", tmp);
    expect_refused("context_length 2^31",
                   rewrite("stories260K.gguf", set_u32("llama.context_length", 0x80000000u), tmp), TERN_ERR_FORMAT,
                   "llama.context_length", tmp);
    // An out-of-range integer is reported as out of range, with its value.
    edit neg;
    neg.set = [](gguf_writer * w) {
        int64_t v = -5;
        gguf_writer_set_val(w, "llama.embedding_length", GGUF_TYPE_INT64, &v);
    };
    expect_refused("embedding_length -5", rewrite("stories260K.gguf", neg, tmp), TERN_ERR_FORMAT,
                   "'llama.embedding_length': -5 is out of range", tmp);
    expect_refused("head_count_kv > head_count",
                   rewrite("stories260K.gguf", set_u32("llama.attention.head_count_kv", 1000), tmp), TERN_ERR_FORMAT,
                   "llama.attention.head_count_kv", tmp);
    // "llama\0junk" is not "llama".
    edit nul;
    nul.set = [](gguf_writer * w) { gguf_writer_set_str(w, "general.architecture", "llama#junk"); };
    std::vector<uint8_t> b = rewrite("stories260K.gguf", nul, tmp);
    for (size_t i = 0; i + 10 <= b.size(); i++) {
        if (memcmp(b.data() + i, "llama#junk", 10) == 0) { b[i + 5] = 0; break; }
    }
    expect_refused("architecture with NUL", b, TERN_ERR_FORMAT, "general.architecture", tmp);
}

// ---- a tensor of the wrong shape: the expected shape printed as it is ------------------

void test_shapes(const temp_dir & tmp) {
    edit vec;
    vec.reshape = "blk.0.attn_norm.weight";  // [64] -> [32]
    expect_refused("a 1-D tensor of half the length", rewrite("stories260K.gguf", vec, tmp), TERN_ERR_SHAPE,
                   "'blk.0.attn_norm.weight' has shape [32, 1, 1, 1], expected [64]", tmp);
    edit mat;
    mat.reshape = "blk.0.ffn_down.weight";  // [172, 64] -> [86, 64]
    expect_refused("a 2-D tensor of half the width", rewrite("stories260K.gguf", mat, tmp), TERN_ERR_SHAPE,
                   "'blk.0.ffn_down.weight' has shape [86, 64, 1, 1], expected [172, 64]", tmp);
}

// ---- values llama.cpp accepts (issue 23, item 8) -----------------------------------------

void test_llama_accepts(const temp_dir & tmp) {
    // rope.scaling.factor 0: no scaling (the same logits as without the key).
    edit zero;
    zero.set = [](gguf_writer * w) {
        gguf_writer_set_str(w, "llama.rope.scaling.type", "linear");
        gguf_writer_set_f32(w, "llama.rope.scaling.factor", 0.0f);
    };
    auto last_logits = [](tern_model * model) {
        std::vector<float> out;
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 32;
        cp.n_threads = 1;
        tern_context * ctx = NULL;
        if (!model || tern_context_create(model, &cp, &ctx) != TERN_OK) return out;
        tern_token t[12];
        for (int i = 0; i < 12; i++) t[i] = 1 + 37 * i;
        if (tern_decode(ctx, tern_batch_get_one(t, 12)) == TERN_OK) {
            const float * l = tern_get_logits_ith(ctx, -1);
            out.assign(l, l + tern_model_n_vocab(model));
        }
        tern_context_free(ctx);
        return out;
    };
    tern_model * m = load_bytes(rewrite("stories260K.gguf", zero, tmp), tmp);
    CHECK_MSG(m != NULL, "rope.scaling.factor 0 refused: %s", tern_last_error());
    const std::vector<float> a = last_logits(m);
    tern_model_free(m);  // before load_bytes writes its file again
    tern_model * plain = load_bytes(read_bytes(g_models + "/stories260K.gguf"), tmp);
    const std::vector<float> b = last_logits(plain);
    CHECK_MSG(!a.empty() && a == b, "rope.scaling.factor 0 is not 'no scaling'");
    tern_model_free(plain);
    edit negative;
    negative.set = [](gguf_writer * w) { gguf_writer_set_f32(w, "llama.rope.scaling.factor", -2.0f); };
    expect_refused("rope.scaling.factor -2", rewrite("stories260K.gguf", negative, tmp), TERN_ERR_FORMAT,
                   "'llama.rope.scaling.factor': -2 is out of range [0, 1e6]", tmp);
    // A special token id of -1 stored as INT32: no such token, the default kept.
    edit none;
    none.set = [](gguf_writer * w) { gguf_writer_set_i32(w, "tokenizer.ggml.eos_token_id", -1); };
    m = load_bytes(rewrite("stories260K.gguf", none, tmp), tmp);
    CHECK_MSG(m != NULL, "eos_token_id -1 (INT32) refused: %s", tern_last_error());
    if (m) CHECK(tern_token_eos(m) == 2);
    tern_model_free(m);
}

// ---- class 5: non-finite numbers ---------------------------------------------------------

void test_non_finite(const temp_dir & tmp) {
    const float bad[] = {NAN, 0.0f, -1.0f, INFINITY};
    const char * keys[] = {"llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"};
    for (const char * key : keys) {
        for (float v : bad) {
            edit e;
            e.set = [key, v](gguf_writer * w) { gguf_writer_set_f32(w, key, v); };
            char what[128];
            snprintf(what, sizeof(what), "%s = %g", key, (double) v);
            expect_refused(what, rewrite("stories260K.gguf", e, tmp), TERN_ERR_FORMAT, key, tmp);
        }
    }
    for (float v : {NAN, -2.0f, INFINITY}) {  // 0 is "no scaling" (test_llama_accepts)
        edit e;
        e.set = [v](gguf_writer * w) {
            gguf_writer_set_str(w, "llama.rope.scaling.type", "linear");
            gguf_writer_set_f32(w, "llama.rope.scaling.factor", v);
        };
        expect_refused("rope.scaling.factor", rewrite("stories260K.gguf", e, tmp), TERN_ERR_FORMAT,
                       "llama.rope.scaling.factor", tmp);
    }
    // An f64 key beyond float's range is +inf after conversion, then refused (no UB on the way).
    edit big;
    big.set = [](gguf_writer * w) {
        double v = 1e300;
        gguf_writer_set_val(w, "llama.rope.freq_base", GGUF_TYPE_FLOAT64, &v);
    };
    expect_refused("rope.freq_base 1e300 (f64)", rewrite("stories260K.gguf", big, tmp), TERN_ERR_FORMAT,
                   "llama.rope.freq_base", tmp);

    // NaN weights: check_tensors refuses them at load; without it, decode reports
    // non-finite logits instead of returning garbage. In a quantized model the
    // NaN reaches the int8 activation quantizer first (no UB there either).
    for (const char * model : {"stories260K.gguf", "ktest-qwen2-s08-Q8_0.gguf"}) {
        edit e;
        e.data = [](const char * name, tern_type type, std::vector<uint8_t> & d) {
            if (strcmp(name, "blk.0.attn_norm.weight") == 0 && type == TERN_TYPE_F32) put_f32(d, 3, NAN);
        };
        std::vector<uint8_t> b = rewrite(model, e, tmp);
        tern_model * m = load_bytes(b, tmp, 1);
        CHECK_MSG(m == NULL && strstr(tern_last_error(), "blk.0.attn_norm.weight"), "%s: check_tensors: %s", model,
                  tern_last_error());
        if (m) tern_model_free(m);
        m = load_bytes(b, tmp, 0);
        CHECK_MSG(m != NULL, "%s: %s", model, tern_last_error());
        if (!m) continue;
        tern_context_params cp = tern_context_default_params();
        cp.n_ctx = 32;
        cp.n_threads = 2;
        tern_context * ctx = NULL;
        CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
        if (ctx) {
            tern_token toks[3] = {1, 2, 3};
            tern_status st = tern_decode(ctx, tern_batch_get_one(toks, 3));
            CHECK_MSG(st == TERN_ERR_NUMERIC && strstr(tern_last_error(), "non-finite"), "%s: decode gave %s: %s",
                      model, tern_status_str(st), tern_last_error());
            CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == -1);  // nothing of the failed batch kept
            tern_context_free(ctx);
        }
        tern_model_free(m);
    }
}

// ---- class 4: empty optional arrays -------------------------------------------------------

void test_empty_arrays(const temp_dir & tmp) {
    edit e;
    e.set = [](gguf_writer * w) { gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", NULL, 0); };
    std::vector<uint8_t> b = rewrite("ktest-qwen2-s08-Q8_0.gguf", e, tmp);
    tern_model * m = load_bytes(b, tmp);
    CHECK_MSG(m != NULL, "empty merges: %s", tern_last_error());
    if (!m) return;
    tern_token toks[64];
    const char * text = "hello world";
    int32_t n = tern_tokenize(m, text, (int32_t) strlen(text), toks, 64, 0, 0);
    CHECK_MSG(n > 0, "empty merges: tokenize gave %d: %s", n, tern_last_error());  // byte-level pieces, no merges
    tern_model_free(m);
}

// ---- classes 2 and 3: the API used wrongly ----------------------------------------------------

tern_model * load_shared(const char * name) {
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    if (tern_model_load_file((g_models + "/" + name).c_str(), &mp, &m) != TERN_OK) {
        CHECK_MSG(false, "%s: %s", name, tern_last_error());
        return NULL;
    }
    return m;
}

struct batch_builder {
    std::vector<tern_token> tok;
    std::vector<tern_pos> pos;
    std::vector<int32_t> n_seq;
    std::vector<std::vector<tern_seq_id>> ids;
    std::vector<tern_seq_id *> id_ptrs;
    void add(tern_token t, tern_pos p, std::initializer_list<tern_seq_id> s) {
        tok.push_back(t);
        pos.push_back(p);
        n_seq.push_back((int32_t) s.size());
        ids.push_back(s);
    }
    tern_batch get() {
        id_ptrs.clear();
        for (auto & v : ids) id_ptrs.push_back(v.data());
        tern_batch b;
        memset(&b, 0, sizeof(b));
        b.n_tokens = (int32_t) tok.size();
        b.token = tok.data();
        b.pos = pos.data();
        b.n_seq_id = n_seq.data();
        b.seq_id = id_ptrs.data();
        return b;
    }
};

void expect_decode(tern_context * ctx, batch_builder bb, tern_status want, const char * words, const char * what) {
    tern_status st = tern_decode(ctx, bb.get());
    CHECK_MSG(st == want && (!words || strstr(tern_last_error(), words)), "%s: got %s: %s", what,
              tern_status_str(st), st == TERN_OK ? "" : tern_last_error());
}

void test_positions(void) {
    tern_model * m = load_shared("stories260K.gguf");
    if (!m) return;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.n_seq_max = 4;
    cp.n_threads = 1;
    tern_context * ctx = NULL;
    CHECK(tern_context_create(m, &cp, &ctx) == TERN_OK);
    if (!ctx) { tern_model_free(m); return; }
    batch_builder b1;
    b1.add(1, INT32_MAX, {0});
    expect_decode(ctx, b1, TERN_ERR_INVALID_ARG, "position", "position INT32_MAX");
    // The largest position is accepted, then a batch without positions cannot continue past it.
    batch_builder b2;
    b2.add(1, INT32_MAX - 1, {0});
    expect_decode(ctx, b2, TERN_OK, NULL, "position INT32_MAX - 1");
    tern_token t = 5;
    CHECK(tern_decode(ctx, tern_batch_get_one(&t, 1)) == TERN_ERR_INVALID_ARG);
    CHECK(tern_kv_cache_seq_pos_max(ctx, 0) == INT32_MAX - 1);
    tern_kv_cache_clear(ctx);
    // A position repeated in one sequence within a batch, and one the cache already holds.
    batch_builder b3;
    b3.add(1, 0, {1});
    b3.add(2, 0, {1});
    expect_decode(ctx, b3, TERN_ERR_INVALID_ARG, "sequence 1", "repeated position");
    batch_builder b4;
    b4.add(1, 0, {1});
    b4.add(2, 1, {1});
    expect_decode(ctx, b4, TERN_OK, NULL, "positions 0, 1");
    batch_builder b5;
    b5.add(3, 1, {1});
    expect_decode(ctx, b5, TERN_ERR_INVALID_ARG, "seq_rm", "re-decoding position 1");
    CHECK(tern_kv_cache_seq_pos_max(ctx, 1) == 1);
    // After removing it, the position may be decoded again; other sequences are independent.
    CHECK(tern_kv_cache_seq_rm(ctx, 1, 1, -1) == 1);
    expect_decode(ctx, b5, TERN_OK, NULL, "position 1 after seq_rm");
    batch_builder b6;
    b6.add(3, 0, {2, 2});
    expect_decode(ctx, b6, TERN_ERR_INVALID_ARG, "twice", "sequence id given twice");
    batch_builder b7;
    b7.add(3, 0, {0, 2});
    expect_decode(ctx, b7, TERN_OK, NULL, "shared token of sequences 0 and 2");
    tern_context_free(ctx);
    tern_model_free(m);
}

// The abort callback parks a decode until released, so a second call is
// guaranteed to arrive while the first is inside.
struct parked {
    std::atomic<int> inside{0};
    std::atomic<int> release{0};
};

int park(void * user) {
    parked * p = (parked *) user;
    p->inside.store(1);
    while (!p->release.load()) std::this_thread::yield();
    return 0;
}

void test_busy(void) {
    tern_model * m = load_shared("stories260K.gguf");
    if (!m) return;
    tern_threadpool * pool = NULL;
    tern_threadpool_params tp = tern_threadpool_default_params(2);
    CHECK(tern_threadpool_create(&tp, &pool) == TERN_OK);
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.pool = pool;
    parked gate;
    cp.abort_callback = park;
    cp.abort_callback_data = &gate;
    tern_context * a = NULL, * b = NULL;
    CHECK(tern_context_create(m, &cp, &a) == TERN_OK);
    cp.abort_callback = NULL;
    CHECK(tern_context_create(m, &cp, &b) == TERN_OK);
    if (!a || !b || !pool) return;
    tern_token toks[4] = {1, 2, 3, 4};
    tern_status first = TERN_ERR_INTERNAL;
    std::thread worker([&] { first = tern_decode(a, tern_batch_get_one(toks, 4)); });
    while (!gate.inside.load()) std::this_thread::yield();
    // Same context from another thread, and another context on the same pool.
    tern_status same_ctx = tern_decode(a, tern_batch_get_one(toks, 4));
    std::string e1 = tern_last_error();
    tern_status same_pool = tern_decode(b, tern_batch_get_one(toks, 4));
    std::string e2 = tern_last_error();
    int rm = tern_kv_cache_seq_rm(a, 0, 0, -1);
    gate.release.store(1);
    worker.join();
    CHECK_MSG(same_ctx == TERN_ERR_BUSY && e1.find("context") != std::string::npos, "same context: %s: %s",
              tern_status_str(same_ctx), e1.c_str());
    CHECK_MSG(same_pool == TERN_ERR_BUSY && e2.find("threadpool") != std::string::npos, "same pool: %s: %s",
              tern_status_str(same_pool), e2.c_str());
    CHECK(rm == 0);
    CHECK_MSG(first == TERN_OK, "the parked decode: %s", tern_status_str(first));
    CHECK(tern_kv_cache_seq_pos_max(a, 0) == 3);  // the refused calls changed nothing
    // Taking turns works, and gives the same logits on both contexts.
    CHECK(tern_decode(b, tern_batch_get_one(toks, 4)) == TERN_OK);
    const float * la = tern_get_logits_ith(a, -1), * lb = tern_get_logits_ith(b, -1);
    CHECK(la && lb && memcmp(la, lb, sizeof(float) * (size_t) tern_model_n_vocab(m)) == 0);
    tern_context_free(a);
    tern_context_free(b);
    tern_threadpool_free(pool);
    tern_model_free(m);
}

}  // namespace

int main(void) {
    g_models = std::string(tern_test_shared_dir()) + "/models";
    temp_dir tmp;
    test_alignment(tmp);
    test_counts(tmp);
    test_shapes(tmp);
    test_llama_accepts(tmp);
    test_non_finite(tmp);
    test_empty_arrays(tmp);
    test_positions();
    test_busy();
    return tern_test_summary();
}
