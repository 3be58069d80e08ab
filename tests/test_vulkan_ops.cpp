// Every op of the graph on the Vulkan device against Tern's CPU kernels, as
// llama.cpp's test-backend-ops: op x type x shape family, driven through the
// HAL vtable directly. Each case computes the node on the CPU
// (tern_node_compute) and on vulkan0 from the same bytes and compares the
// destinations: NMSE <= 1e-7 (5e-4 for MUL_MAT and ATTN on quantized data),
// NaN and Inf at the same places, I32 results equal. Shape families: head
// sizes 64, 128 and odd ones (8, 80, 72), n_kv not a multiple of 32, more
// cells than the shader keeps in shared memory, sliding-window masks and
// per-token bounds, GQA and MQA, strided views, tables and weights wider than
// one binding and products whose output is (a second instance opened with
// max_binding=65536, so every split path runs on lavapipe's 128 MiB bindings
// too).
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <string>
#include <vector>
#include "check.h"
#include "vulkan_test_util.h"
#include "core/fp16.h"
#include "cpu/compute.h"
#include "graph/graph.h"
#include "hal/device.h"
#include "port.h"
#include "tensor/types.h"

using namespace tern;
using tern::port_time_us;

namespace {

struct spec {
    int32_t  type = TERN_HAL_TYPE_NONE;
    int64_t  ne[4] = {1, 1, 1, 1};
    uint64_t nb[4] = {0, 0, 0, 0};
    int      blob = -1;     // which byte blob holds it
    uint64_t off = 0;       // byte offset in the blob
};

struct op_case {
    std::string name;
    int32_t op = 0;
    int32_t params[TERN_MAX_OP_PARAMS] = {0};
    spec dst;
    spec src[TERN_HAL_MAX_SRC];
    std::vector<std::vector<uint8_t>> blobs;
    double tol = 1e-7;
};

uint32_t g_rng = 12345;
float frand(void) {  // uniform [-1, 1)
    g_rng = g_rng * 1664525u + 1013904223u;
    return (float) ((g_rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

// A contiguous tensor in a new blob (bytes for every element), returns the spec.
spec make(op_case & c, int32_t type, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1) {
    spec s;
    s.type = type;
    s.ne[0] = ne0; s.ne[1] = ne1; s.ne[2] = ne2; s.ne[3] = ne3;
    s.nb[0] = type == TERN_TYPE_I32 ? 4 : tern_type_traits_get((tern_type) type)->type_size;
    s.nb[1] = type == TERN_TYPE_I32 ? 4 * (uint64_t) ne0 : tern_row_size((tern_type) type, ne0);
    s.nb[2] = s.nb[1] * (uint64_t) ne1;
    s.nb[3] = s.nb[2] * (uint64_t) ne2;
    s.blob = (int) c.blobs.size();
    c.blobs.push_back(std::vector<uint8_t>(s.nb[3] * (uint64_t) ne3 + 64, 0));
    return s;
}

uint8_t * at(op_case & c, const spec & s) { return c.blobs[(size_t) s.blob].data() + s.off; }

// Fill a contiguous tensor with random values of scale `amp` (quantized from floats).
void fill(op_case & c, const spec & s, float amp = 1.0f) {
    const int64_t rows = s.ne[1] * s.ne[2] * s.ne[3];
    std::vector<float> row((size_t) s.ne[0]);
    for (int64_t r = 0; r < rows; r++) {
        for (auto & v : row) v = amp * frand();
        uint8_t * p = at(c, s) + (uint64_t) r * s.nb[1];
        if (s.type == TERN_TYPE_F32) memcpy(p, row.data(), row.size() * 4);
        else tern_type_traits_get((tern_type) s.type)->from_float(row.data(), p, s.ne[0]);
    }
}

void fill_i32(op_case & c, const spec & s, const std::vector<int32_t> & v) { memcpy(at(c, s), v.data(), v.size() * 4); }

void to_tensor(op_case & c, std::vector<std::vector<uint8_t>> & blobs, const spec & s, tern_tensor * t) {
    memset(t, 0, sizeof(*t));
    t->type = (tern_type) s.type;
    t->n_dims = 4;
    for (int i = 0; i < 4; i++) {
        t->ne[i] = s.ne[i];
        t->nb[i] = (size_t) s.nb[i];
    }
    t->data = blobs[(size_t) s.blob].data() + s.off;
    t->id = -1;
    t->node_index = -1;
    (void) c;
}

// The values of a tensor (through its strides), as floats (I32 as values).
std::vector<float> values(const spec & s, const uint8_t * base) {
    std::vector<float> out;
    std::vector<float> row((size_t) s.ne[0] + 256);
    for (int64_t i3 = 0; i3 < s.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < s.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < s.ne[1]; i1++) {
                const uint8_t * p = base + s.off + i1 * s.nb[1] + i2 * s.nb[2] + i3 * s.nb[3];
                if (s.type == TERN_TYPE_I32) {
                    for (int64_t i = 0; i < s.ne[0]; i++) {
                        int32_t v;
                        memcpy(&v, p + 4 * i, 4);
                        out.push_back((float) v);
                    }
                    continue;
                }
                tern_type_traits_get((tern_type) s.type)->to_float(p, row.data(), s.ne[0]);
                out.insert(out.end(), row.begin(), row.begin() + s.ne[0]);
            }
    return out;
}

std::string g_log;
void keep_log(tern_log_level, const char * text, void *) { g_log += text; }

struct runner {
    hal::hal_device dev;
    tern_hal_buffer * buf = NULL;
    uint64_t size = 0;
    int n_cases = 0, n_failed = 0;

    bool open(const char * spec_text) {
        tern_status st = hal::device_open(spec_text, strlen(spec_text), &dev);
        CHECK_MSG(st == TERN_OK, "open %s: %s", spec_text, tern_last_error());
        if (st != TERN_OK) return false;
        size = 96ull << 20;
        st = dev.desc->buffer_alloc(dev.dev, size, TERN_HAL_USAGE_ACTIVATIONS, &buf);
        CHECK_MSG(st == TERN_OK, "buffer: %s", tern_last_error());
        return st == TERN_OK;
    }
    void close() {
        if (buf) dev.desc->buffer_free(dev.dev, buf);
        hal::device_close(&dev);
    }

    void run(op_case & c) {
        n_cases++;
        // CPU: on copies of the blobs (SET_ROWS writes into src0's blob).
        std::vector<std::vector<uint8_t>> cpu = c.blobs;
        tern_tensor src[TERN_HAL_MAX_SRC], dst;
        to_tensor(c, cpu, c.dst, &dst);
        dst.op = (tern_op) c.op;
        memcpy(dst.op_params, c.params, sizeof(dst.op_params));
        for (int i = 0; i < TERN_HAL_MAX_SRC; i++) {
            if (c.src[i].type == TERN_HAL_TYPE_NONE) continue;
            to_tensor(c, cpu, c.src[i], &src[i]);
            dst.src[i] = &src[i];
        }
        const size_t work_size = tern_node_work_size(&dst, 1) + 64;
        std::vector<uint8_t> work(work_size + 64);
        void * w = (void *) (((uintptr_t) work.data() + 63) & ~(uintptr_t) 63);
        tern_node_compute(&dst, w, work_size);

        // Device: every blob at an aligned offset of one buffer.
        std::vector<uint64_t> where(c.blobs.size());
        uint64_t o = 0;
        for (size_t b = 0; b < c.blobs.size(); b++) {
            o = (o + 255) / 256 * 256;
            where[b] = o;
            o += c.blobs[b].size();
        }
        CHECK_MSG(o <= size, "%s: %llu bytes of tensors", c.name.c_str(), (unsigned long long) o);
        if (o > size) return;
        for (size_t b = 0; b < c.blobs.size(); b++) {
            tern_status st = dev.desc->copy_h2d(dev.dev, buf, where[b], c.blobs[b].data(), c.blobs[b].size());
            CHECK(st == TERN_OK);
        }
        tern_hal_op_desc d;
        memset(&d, 0, sizeof(d));
        d.op = c.op;
        memcpy(d.params, c.params, sizeof(d.params));
        auto hal_tensor = [&](const spec & s, tern_hal_tensor * h) {
            memset(h, 0, sizeof(*h));
            h->type = s.type;
            if (s.type == TERN_HAL_TYPE_NONE) return;
            for (int i = 0; i < 4; i++) {
                h->ne[i] = s.ne[i];
                h->nb[i] = s.nb[i];
            }
            h->buffer = buf;
            h->offset = where[(size_t) s.blob] + s.off;
        };
        hal_tensor(c.dst, &d.dst);
        for (int i = 0; i < TERN_HAL_MAX_SRC; i++) hal_tensor(c.src[i], &d.src[i]);
        d.name = c.name.c_str();
        // supports_op sees no buffers (plan time)
        tern_hal_op_desc plan = d;
        plan.dst.buffer = NULL;
        for (auto & s : plan.src) s.buffer = NULL;
        const int ok = dev.desc->supports_op(dev.dev, &plan);
        CHECK_MSG(ok, "%s: supports_op refuses it", c.name.c_str());
        if (!ok) {
            n_failed++;
            return;
        }
        tern_status st = dev.desc->prepare(dev.dev, &d);
        if (st == TERN_OK) st = dev.desc->synchronize(dev.dev);   // the uploads, before the clock starts
        const int64_t t0 = port_time_us();
        if (st == TERN_OK) st = dev.desc->launch(dev.dev, &d);
        if (st == TERN_OK) st = dev.desc->synchronize(dev.dev);
        const int64_t t1 = port_time_us();
        CHECK_MSG(st == TERN_OK, "%s: %s", c.name.c_str(), tern_last_error());
        std::vector<uint8_t> got(c.blobs[(size_t) c.dst.blob].size());
        st = dev.desc->copy_d2h(dev.dev, got.data(), buf, where[(size_t) c.dst.blob], got.size());
        if (st == TERN_OK) st = dev.desc->synchronize(dev.dev);
        CHECK(st == TERN_OK);

        const std::vector<float> ref = values(c.dst, cpu[(size_t) c.dst.blob].data());
        const std::vector<float> dev_v = values(c.dst, got.data());
        double err = 0, norm = 0;
        int bad_special = 0;
        for (size_t i = 0; i < ref.size(); i++) {
            const float a = dev_v[i], r = ref[i];
            if (std::isnan(r) || std::isinf(r) || std::isnan(a) || std::isinf(a)) {
                const bool same = (std::isnan(r) && std::isnan(a)) || (std::isinf(r) && std::isinf(a) && (r > 0) == (a > 0));
                if (!same) bad_special++;
                continue;
            }
            err += ((double) a - r) * ((double) a - r);
            norm += (double) r * r;
        }
        const double nmse = norm > 0 ? err / norm : err;
        const bool pass = nmse <= c.tol && bad_special == 0;
        if (!pass) n_failed++;
        CHECK_MSG(pass, "%s: NMSE %.3g (tol %.0e), %d NaN/Inf disagreements", c.name.c_str(), nmse, c.tol, bad_special);
        printf("  %-58s NMSE %.2e %8.3f ms%s\n", c.name.c_str(), nmse, (double) (t1 - t0) / 1000.0, pass ? "" : "  FAIL");
    }
};

const int32_t kTypes[] = { TERN_TYPE_F32, TERN_TYPE_F16, TERN_TYPE_BF16, TERN_TYPE_Q4_0, TERN_TYPE_Q4_1, TERN_TYPE_Q5_0,
                           TERN_TYPE_Q5_1, TERN_TYPE_Q8_0, TERN_TYPE_Q2_K, TERN_TYPE_Q3_K, TERN_TYPE_Q4_K, TERN_TYPE_Q5_K,
                           TERN_TYPE_Q6_K, TERN_TYPE_IQ4_NL };
const char * tname(int32_t t) { return t == TERN_TYPE_I32 ? "I32" : tern_type_traits_get((tern_type) t)->name; }
bool quantized(int32_t t) { return t != TERN_TYPE_F32 && t != TERN_TYPE_F16 && t != TERN_TYPE_BF16; }
int64_t qk(int32_t t) { return tern_type_traits_get((tern_type) t)->blck_size; }

void set_f(int32_t * params, int i, float v) { memcpy(&params[i], &v, 4); }

// ---- the cases -------------------------------------------------------------------

void get_rows(runner & r, int32_t type, int64_t ne0, int64_t n_rows, int64_t n, const char * tag) {
    op_case c;
    c.name = std::string("GET_ROWS ") + tname(type) + " " + tag;
    c.op = TERN_OP_GET_ROWS;
    c.src[0] = make(c, type, ne0, n_rows);
    fill(c, c.src[0]);
    c.src[1] = make(c, TERN_TYPE_I32, n);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < n; i++) ids.push_back((int32_t) ((i * 7919) % n_rows));
    ids[0] = (int32_t) n_rows - 1;
    if (n > 3) { ids[1] = -1; ids[2] = (int32_t) n_rows; }  // out of range: zero rows
    fill_i32(c, c.src[1], ids);
    c.dst = make(c, TERN_TYPE_F32, ne0, n);
    r.run(c);
}

void mul_mat(runner & r, int32_t type, int64_t K, int64_t N, int64_t M, bool bias, const char * tag, bool nan = false) {
    op_case c;
    c.name = std::string("MUL_MAT ") + tname(type) + " " + tag;
    c.op = TERN_OP_MUL_MAT;
    c.tol = quantized(type) ? 5e-4 : 1e-7;
    c.src[0] = make(c, type, K, N);
    fill(c, c.src[0], 0.5f);
    c.src[1] = make(c, TERN_TYPE_F32, K, M);
    fill(c, c.src[1]);
    if (nan) {
        float * x = (float *) at(c, c.src[1]);
        x[K + 3] = NAN;       // row 1: NaN everywhere in its outputs
        if (M > 2) x[2 * K] = INFINITY;
    }
    if (bias) {
        c.src[2] = make(c, TERN_TYPE_F32, N);
        fill(c, c.src[2]);
    }
    c.dst = make(c, TERN_TYPE_F32, N, M);
    r.run(c);
}

void rms_norm(runner & r, int64_t ne0, int64_t rows, bool weight, bool strided) {
    op_case c;
    c.name = "RMS_NORM " + std::to_string(ne0) + "x" + std::to_string(rows) + (weight ? " w" : "") + (strided ? " strided" : "");
    c.op = TERN_OP_RMS_NORM;
    set_f(c.params, 0, 1e-5f);
    spec x = make(c, TERN_TYPE_F32, ne0 + (strided ? 16 : 0), rows);
    fill(c, x, 3.0f);
    if (strided) x.ne[0] = ne0;   // rows of ne0 values at the wider stride
    c.src[0] = x;
    if (weight) {
        c.src[1] = make(c, TERN_TYPE_F32, ne0);
        fill(c, c.src[1]);
    }
    c.dst = make(c, TERN_TYPE_F32, ne0, rows);
    r.run(c);
}

void eltwise(runner & r, int32_t op, const int64_t * a_ne, const int64_t * b_ne, const char * tag) {
    op_case c;
    c.name = std::string(op == TERN_OP_ADD ? "ADD " : op == TERN_OP_MUL ? "MUL " : op == TERN_OP_SCALE ? "SCALE " : "SWIGLU ") + tag;
    c.op = op;
    set_f(c.params, 0, 0.125f);
    c.src[0] = make(c, TERN_TYPE_F32, a_ne[0], a_ne[1], a_ne[2], a_ne[3]);
    fill(c, c.src[0], 4.0f);
    if (op != TERN_OP_SCALE) {
        c.src[1] = make(c, TERN_TYPE_F32, b_ne[0], b_ne[1], b_ne[2], b_ne[3]);
        fill(c, c.src[1], 2.0f);
    }
    c.dst = make(c, TERN_TYPE_F32, a_ne[0], a_ne[1], a_ne[2], a_ne[3]);
    r.run(c);
}

void argmax(runner & r, int64_t ne0, int64_t rows) {
    op_case c;
    c.name = "ARGMAX " + std::to_string(ne0) + "x" + std::to_string(rows);
    c.op = TERN_OP_ARGMAX;
    c.src[0] = make(c, TERN_TYPE_F32, ne0, rows);
    fill(c, c.src[0]);
    float * x = (float *) at(c, c.src[0]);
    if (rows > 1) { x[ne0 + 5] = 7.0f; x[ne0 + ne0 - 1] = 7.0f; }   // a tie: the first wins
    if (rows > 2) x[2 * ne0] = NAN;                                   // NaN first: 0
    c.dst = make(c, TERN_TYPE_I32, rows);
    r.run(c);
}

void rope_params(int32_t * params, int n_rot, int mode, float freq_scale, float ext) {
    tern_rope_params p = { n_rot, mode, 4096, 10000.0f, freq_scale, ext, 1.0f, 32.0f, 1.0f };
    memcpy(params, &p, sizeof(p));
}

void rope_cache(runner & r, int n_rot, float freq_scale, float ext, const char * tag) {
    op_case c;
    c.name = std::string("ROPE_CACHE ") + tag;
    c.op = TERN_OP_ROPE_CACHE;
    rope_params(c.params, n_rot, 0, freq_scale, ext);
    const int64_t n = 37;
    c.src[0] = make(c, TERN_TYPE_I32, n);
    std::vector<int32_t> pos;
    for (int64_t i = 0; i < n; i++) pos.push_back((int32_t) (i * 97));   // up to 3492
    fill_i32(c, c.src[0], pos);
    c.dst = make(c, TERN_TYPE_F32, n_rot, n);
    r.run(c);
}

void rope(runner & r, int64_t hd, int n_rot, int mode, int64_t n_head, int64_t n_tok, bool strided) {
    op_case c;
    c.name = std::string("ROPE ") + (mode == 2 ? "neox" : "normal") + " hd " + std::to_string(hd) + " n_rot " +
             std::to_string(n_rot) + (strided ? " view" : "");
    c.op = TERN_OP_ROPE;
    rope_params(c.params, n_rot, mode, 1.0f, 0.0f);
    // x: a view of heads inside wider rows (a fused qkv tensor) when strided
    spec x = make(c, TERN_TYPE_F32, hd * n_head + (strided ? 3 * hd : 0), n_tok);
    fill(c, x);
    x.ne[0] = hd; x.ne[1] = n_head; x.ne[2] = n_tok;
    x.nb[1] = (uint64_t) hd * 4; x.nb[2] = (uint64_t) (hd * n_head + (strided ? 3 * hd : 0)) * 4; x.nb[3] = x.nb[2] * (uint64_t) n_tok;
    if (strided) x.off = (uint64_t) hd * 4;
    c.src[0] = x;
    c.src[1] = make(c, TERN_TYPE_F32, n_rot, n_tok);
    fill(c, c.src[1]);
    c.dst = make(c, TERN_TYPE_F32, hd, n_head, n_tok);
    r.run(c);
}

void set_rows(runner & r, int32_t type, int64_t row_len, int64_t n_slots, int64_t n, bool raw) {
    op_case c;
    c.name = std::string("SET_ROWS ") + (raw ? "raw " : "F32 -> ") + tname(type) + " " + std::to_string(row_len);
    c.op = TERN_OP_SET_ROWS;
    c.src[0] = make(c, type, row_len, n_slots);
    fill(c, c.src[0]);
    c.src[1] = make(c, raw ? type : TERN_TYPE_F32, row_len, n);
    fill(c, c.src[1], 2.0f);
    if (!raw && n > 1) ((float *) at(c, c.src[1]))[row_len + 1] = NAN;   // a NaN block: d NaN, levels 0
    c.src[2] = make(c, TERN_TYPE_I32, n);
    std::vector<int32_t> idx;
    for (int64_t i = 0; i < n; i++) idx.push_back((int32_t) ((i * 5 + 3) % n_slots));
    if (n > 2) idx[2] = (int32_t) n_slots;   // out of range: nothing written
    fill_i32(c, c.src[2], idx);
    c.dst = c.src[0];
    r.run(c);
}

void copy_rows(runner & r, int32_t type, int64_t ne0, int64_t n_rows, int64_t n) {
    op_case c;
    c.name = std::string("COPY_ROWS ") + tname(type) + " " + std::to_string(ne0);
    c.op = TERN_OP_COPY_ROWS;
    c.src[0] = make(c, type, ne0, n_rows);
    fill(c, c.src[0]);
    c.src[1] = make(c, TERN_TYPE_I32, n);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < n; i++) ids.push_back((int32_t) ((i * 3 + 1) % n_rows));
    if (n > 1) ids[1] = -5;
    fill_i32(c, c.src[1], ids);
    c.dst = make(c, type, ne0, n);
    r.run(c);
}

// ATTN over a cache of n_ctx cells of which n_kv are attended: tokens at
// positions n_kv - n_tok .. n_kv - 1, causal, optionally a window of n_swa.
void attn(runner & r, int64_t hd, int64_t n_head, int64_t n_head_kv, int64_t n_kv, int64_t n_tok, int32_t kt, int32_t vt,
          int64_t n_swa, bool bounds, bool nan = false) {
    op_case c;
    char name[160];
    snprintf(name, sizeof(name), "ATTN hd %lld heads %lld/%lld n_kv %lld tok %lld K %s V %s%s%s%s", (long long) hd,
             (long long) n_head, (long long) n_head_kv, (long long) n_kv, (long long) n_tok, tname(kt), tname(vt),
             n_swa ? " swa" : "", bounds ? " bounds" : "", nan ? " nan" : "");
    c.name = name;
    c.op = TERN_OP_ATTN;
    c.tol = (quantized(kt) || quantized(vt)) ? 5e-4 : 1e-7;
    set_f(c.params, 0, 1.0f / sqrtf((float) hd));
    const int64_t n_ctx = n_kv + 13, n_embd = hd * n_head_kv;
    spec q = make(c, TERN_TYPE_F32, hd, n_head, n_tok);
    fill(c, q, 2.0f);
    if (nan) ((float *) at(c, q))[hd * n_head + 1] = NAN;   // token 1, head 0
    c.src[0] = q;
    auto cache = [&](int32_t t) {
        spec s = make(c, t, n_embd, n_ctx);
        fill(c, s);
        if (!quantized(t)) {   // the [hd, n_head_kv, n_kv] view of the graph
            const uint64_t es = t == TERN_TYPE_F32 ? 4 : 2;
            s.ne[0] = hd; s.ne[1] = n_head_kv; s.ne[2] = n_kv;
            s.nb[1] = (uint64_t) hd * es; s.nb[2] = (uint64_t) n_embd * es; s.nb[3] = s.nb[2] * (uint64_t) n_kv;
        } else {
            s.ne[1] = n_kv;
        }
        return s;
    };
    c.src[1] = cache(kt);
    c.src[2] = cache(vt);
    const int64_t m_cols = n_ctx;
    c.src[3] = make(c, TERN_TYPE_F32, m_cols, n_tok);
    float * m = (float *) at(c, c.src[3]);
    std::vector<int32_t> b;
    for (int64_t t = 0; t < n_tok; t++) {
        const int64_t pos = n_kv - n_tok + t;
        for (int64_t j = 0; j < m_cols; j++) {
            const bool vis = j <= pos && (n_swa == 0 || pos - j < n_swa) && j < n_kv;
            m[t * m_cols + j] = vis ? 0.0f : -INFINITY;
        }
        b.push_back((int32_t) (pos + 1));
    }
    if (bounds) {
        c.src[4] = make(c, TERN_TYPE_I32, n_tok);
        fill_i32(c, c.src[4], b);
    }
    c.dst = make(c, TERN_TYPE_F32, hd * n_head, n_tok);
    r.run(c);
}

}  // namespace

int main(void) {
    vulkan_test_require_device();
    runner r;
    if (!r.open("vulkan0")) return tern_test_summary();
    printf("%s\n", r.dev.desc->describe(r.dev.dev));

    for (int32_t t : kTypes) {
        get_rows(r, t, 256, 40, 9, "256x40");
        if (!quantized(t)) get_rows(r, t, 172, 11, 5, "172x11 (row tail)");
        else if (qk(t) == 32) get_rows(r, t, 96, 7, 4, "96x7");
    }
    for (int32_t t : kTypes) {
        const int64_t K = quantized(t) ? 512 : 172;
        mul_mat(r, t, K, 33, 1, false, "decode M 1");
        // the vec path's K chunks (32 blocks, IQ4_NL 16, K-quants 4 super-blocks) with a partial
        // last one, and its 8-row workgroups with a partial last one
        mul_mat(r, t, quantized(t) ? 1280 : 1000, 37, 2, true, "decode M 2 K 1280 + bias");
        mul_mat(r, t, 256, 20, 2, false, "NaN decode M 2", true);
        mul_mat(r, t, K, 70, 3, true, "decode M 3 + bias");
        mul_mat(r, t, K, 65, 37, false, "prompt M 37");
        mul_mat(r, t, 256 * 3, 40, 70, true, "prompt M 70 K 768 + bias");
        mul_mat(r, t, 256, 20, 5, false, "NaN/Inf rows", true);
    }
    mul_mat(r, TERN_TYPE_Q8_0, 256 * 36, 8, 2, false, "K 9216 M 2 (vec, 9 chunks)");
    mul_mat(r, TERN_TYPE_Q8_0, 256 * 36, 8, 3, false, "K 9216 M 3 (tiled)");
    for (int64_t ne0 : {64, 256, 4096}) {
        rms_norm(r, ne0, 5, true, false);
        rms_norm(r, ne0, 3, false, true);
    }
    {
        const int64_t a[4] = {256, 7, 1, 1}, bias[4] = {256, 1, 1, 1}, same[4] = {256, 7, 1, 1};
        const int64_t a3[4] = {64, 4, 3, 2}, b3[4] = {64, 1, 3, 1};
        for (int32_t op : {TERN_OP_ADD, TERN_OP_MUL}) {
            eltwise(r, op, a, bias, "bias [256] over 256x7");
            eltwise(r, op, a, same, "residual 256x7");
            eltwise(r, op, a3, b3, "broadcast 64x4x3x2 by 64x1x3x1");
        }
        eltwise(r, TERN_OP_SCALE, a3, a3, "64x4x3x2");
        eltwise(r, TERN_OP_SWIGLU, a, same, "256x7");
    }
    argmax(r, 2048, 4);
    argmax(r, 100, 1);
    rope_cache(r, 64, 1.0f, 0.0f, "n_rot 64 linear");
    rope_cache(r, 128, 0.25f, 0.0f, "n_rot 128 linear scale 0.25");
    rope_cache(r, 64, 0.25f, 1.0f, "n_rot 64 YaRN");
    for (int mode : {0, 2}) {
        rope(r, 64, 64, mode, 8, 5, false);
        rope(r, 128, 128, mode, 4, 3, true);
        rope(r, 80, 64, mode, 3, 2, true);   // partial rotation: dims past n_rot copied
        rope(r, 8, 8, mode, 8, 4, false);
    }
    for (int32_t t : {TERN_TYPE_F32, TERN_TYPE_F16, TERN_TYPE_Q8_0, TERN_TYPE_Q4_0}) {
        set_rows(r, t, 256, 50, 7, false);
        set_rows(r, t, 64, 9, 1, false);
        set_rows(r, t, 96, 20, 4, true);
        copy_rows(r, t, 96, 20, 6);
    }
    const int32_t caches[4] = { TERN_TYPE_F16, TERN_TYPE_F32, TERN_TYPE_Q8_0, TERN_TYPE_Q4_0 };
    for (int32_t kt : caches) {
        for (int32_t vt : caches) attn(r, 64, 8, 4, 45, 1, kt, vt, 0, true);
    }
    attn(r, 128, 8, 2, 300, 7, TERN_TYPE_F16, TERN_TYPE_F16, 0, true);      // head size 128, prompt
    attn(r, 128, 4, 1, 77, 3, TERN_TYPE_Q8_0, TERN_TYPE_Q8_0, 0, false);     // MQA, mask only
    attn(r, 8, 8, 4, 33, 5, TERN_TYPE_F16, TERN_TYPE_F16, 0, true);          // stories260K's heads
    attn(r, 80, 5, 5, 61, 4, TERN_TYPE_F32, TERN_TYPE_F16, 0, true);         // odd head size, no GQA
    attn(r, 72, 8, 4, 50, 3, TERN_TYPE_Q4_0, TERN_TYPE_Q8_0, 0, true);       // quantized, head slices across blocks
    attn(r, 64, 4, 2, 90, 6, TERN_TYPE_F16, TERN_TYPE_F16, 12, true);        // sliding window
    attn(r, 64, 4, 4, 2600, 2, TERN_TYPE_F16, TERN_TYPE_F16, 0, true);       // past the shared-memory chunk
    attn(r, 64, 4, 2, 40, 3, TERN_TYPE_F16, TERN_TYPE_F16, 0, true, true);   // a NaN in q: a NaN row
    // prompts of more than one 16-token tile (attn_tile.comp), the last partial
    attn(r, 64, 8, 2, 100, 40, TERN_TYPE_F16, TERN_TYPE_F16, 0, true);       // GQA 4, three tiles
    attn(r, 96, 4, 4, 70, 33, TERN_TYPE_F16, TERN_TYPE_F16, 0, false);       // head size 96, mask only
    attn(r, 128, 4, 2, 64, 20, TERN_TYPE_F16, TERN_TYPE_F16, 16, true);      // window shorter than the prompt
    attn(r, 64, 4, 2, 37, 37, TERN_TYPE_F16, TERN_TYPE_F16, 0, true, true);  // the whole context a prompt, a NaN row

    // Bindings of 64 KiB: tables and weights split into windows of rows.
    runner s;
    if (s.open("vulkan0:max_binding=65536")) {
        get_rows(s, TERN_TYPE_Q8_0, 2048, 120, 5, "2048x120 in 64 KiB windows");
        get_rows(s, TERN_TYPE_F32, 1024, 70, 6, "1024x70 in 64 KiB windows");
        mul_mat(s, TERN_TYPE_Q8_0, 2048, 150, 1, true, "2048x150 decode, 64 KiB windows");
        mul_mat(s, TERN_TYPE_Q4_K, 2048, 200, 6, true, "2048x200 prompt, 64 KiB windows");
        mul_mat(s, TERN_TYPE_F16, 1024, 100, 2, false, "1024x100 decode, 64 KiB windows");
        mul_mat(s, TERN_TYPE_Q4_0, 256, 2000, 12, true, "256x2000 M 12: dst past a binding, chunks of rows");
        mul_mat(s, TERN_TYPE_Q6_K, 256, 9000, 2, false, "256x9000 M 2: dst past a binding, vec chunks");
        s.close();
    }
    // The tiled MUL_MAT without integer dot products (where the device has
    // them, the runs above took mul_mat_idot.comp).
    runner nd;
    if (nd.open("vulkan0:no_int_dot")) {
        for (int32_t t : kTypes) {
            if (!quantized(t)) continue;
            mul_mat(nd, t, 512, 65, 37, false, "prompt M 37, no_int_dot");
            mul_mat(nd, t, 256 * 3, 40, 70, true, "prompt M 70 K 768 + bias, no_int_dot");
            mul_mat(nd, t, 256, 20, 5, false, "NaN/Inf rows, no_int_dot", true);
        }
        nd.close();
    }
    // The profile parameter: GPU time per shader, logged when the device closes.
    runner pr;
    if (pr.open("vulkan0:profile")) {
        mul_mat(pr, TERN_TYPE_Q4_0, 256, 40, 1, false, "decode M 1, profiled");
        mul_mat(pr, TERN_TYPE_Q4_0, 256, 40, 9, false, "prompt M 9, profiled");
        g_log.clear();
        tern_log_set(keep_log, NULL);
        pr.close();
        tern_log_set(NULL, NULL);
        CHECK_MSG(g_log.find("vulkan profile: ") != std::string::npos && g_log.find("mul_mat_vec_Q4_0 ") != std::string::npos &&
                      (g_log.find("mul_mat_Q4_0 ") != std::string::npos || g_log.find("mul_mat_idot_Q4_0 ") != std::string::npos),
                  "profile log: %s", g_log.c_str());
    }
    printf("%d cases, %d failed\n", r.n_cases + s.n_cases + nd.n_cases + pr.n_cases,
           r.n_failed + s.n_failed + nd.n_failed + pr.n_failed);
    r.close();
    return tern_test_summary();
}
