// Graph builder: tensor headers from a fixed pool, op constructors with shape
// checks, and the depth-first node ordering (see graph.h).
#include "graph/graph.h"
#include "core/status.h"
#include "tensor/types.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

namespace tern {

// ---- element layout --------------------------------------------------------

// Values per block and bytes per block of a type (I32 is a graph-only type).
static bool type_layout(tern_type type, int64_t * blck, size_t * size) {
    if (type == TERN_TYPE_I32) { *blck = 1; *size = 4; return true; }
    const tern_type_traits * tr = tern_type_traits_get(type);
    if (!tr) return false;
    *blck = tr->blck_size;
    *size = tr->type_size;
    return true;
}

int64_t tern_tensor_nelements(const tern_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

// Bytes spanned from the first to one past the last element (ggml_nbytes):
// a row of whole blocks plus the strides of the outer dimensions.
size_t tern_tensor_nbytes(const tern_tensor * t) {
    int64_t blck = 1;
    size_t size = 0;
    if (!type_layout(t->type, &blck, &size)) return 0;
    for (int i = 0; i < 4; i++) if (t->ne[i] <= 0) return 0;
    // One element (or a row of blocks) plus the strides to the last one in every dim.
    size_t bytes = blck == 1 ? size + (size_t) (t->ne[0] - 1) * t->nb[0] : (size_t) (t->ne[0] / blck) * t->nb[0];
    for (int i = 1; i < 4; i++) bytes += (size_t) (t->ne[i] - 1) * t->nb[i];
    return bytes;
}

bool tern_tensor_is_contiguous(const tern_tensor * t) {
    int64_t blck = 1;
    size_t size = 0;
    if (!type_layout(t->type, &blck, &size) || t->nb[0] != size) return false;
    size_t expected = size * (size_t) (t->ne[0] / blck);
    for (int i = 1; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != expected) return false;
        expected *= (size_t) t->ne[i];
    }
    return true;
}

// ---- builder ---------------------------------------------------------------

size_t tern_graph_builder_size(int32_t capacity) {
    return arena_padded((size_t) capacity * sizeof(tern_tensor));
}

bool tern_graph_builder_init(tern_graph_builder * gb, tern_arena * arena, int32_t capacity, tern_mem_category cat) {
    memset(gb, 0, sizeof(*gb));
    if (capacity <= 0) return false;
    gb->tensors = (tern_tensor *) arena_alloc(arena, (size_t) capacity * sizeof(tern_tensor), cat);
    if (!gb->tensors) return false;
    gb->capacity = capacity;
    gb->layer = -1;
    return true;
}

void tern_graph_builder_reset(tern_graph_builder * gb) {
    gb->n_tensors = 0;
    gb->layer = -1;
    gb->status = TERN_OK;
}

static tern_tensor * builder_error(tern_graph_builder * gb, tern_status st, const char * op, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static tern_tensor * builder_error(tern_graph_builder * gb, tern_status st, const char * op, const char * fmt, ...) {
    char detail[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    if (gb->status == TERN_OK) {
        gb->status = st;
        tern_fail(st, "graph: %s: %s", op, detail);
    }
    return NULL;
}

// A new header with contiguous strides. n_dims in [1, 4]; ne0 a whole number of blocks.
static tern_tensor * new_tensor(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, const char * op) {
    int64_t blck = 1;
    size_t size = 0;
    if (!type_layout(type, &blck, &size)) return builder_error(gb, TERN_ERR_UNSUPPORTED, op, "type %d not compiled in", (int) type);
    if (n_dims < 1 || n_dims > 4) return builder_error(gb, TERN_ERR_SHAPE, op, "n_dims %d not in [1, 4]", n_dims);
    for (int i = 0; i < n_dims; i++) {
        if (ne[i] < 0) return builder_error(gb, TERN_ERR_SHAPE, op, "ne[%d] = %lld", i, (long long) ne[i]);
    }
    if (ne[0] % blck != 0) {
        return builder_error(gb, TERN_ERR_SHAPE, op, "row of %lld values is not a whole number of %lld-value blocks",
                             (long long) ne[0], (long long) blck);
    }
    if (gb->n_tensors >= gb->capacity) {
        return builder_error(gb, TERN_ERR_NO_MEMORY, op, "tensor pool full (%" PRId32 " tensors)", gb->capacity);
    }
    tern_tensor * t = &gb->tensors[gb->n_tensors];
    memset(t, 0, sizeof(*t));
    t->id = gb->n_tensors++;
    t->node_index = -1;
    t->layer = gb->layer;
    t->written_at = -1;
    t->type = type;
    t->n_dims = n_dims;
    for (int i = 0; i < 4; i++) t->ne[i] = i < n_dims ? ne[i] : 1;
    t->nb[0] = size;
    t->nb[1] = size * (size_t) (t->ne[0] / blck);
    for (int i = 2; i < 4; i++) t->nb[i] = t->nb[i - 1] * (size_t) t->ne[i - 1];
    return t;
}

static void set_name(tern_tensor * t, const char * name);

// New op node: contiguous result of `type` and shape ne, sources a..d.
// Its name is the op's until model code names it (tg_cb).
static tern_tensor * new_op(tern_graph_builder * gb, tern_op op, const char * name, tern_type type, int n_dims,
                            const int64_t * ne, tern_tensor * a, tern_tensor * b = NULL, tern_tensor * c = NULL,
                            tern_tensor * d = NULL, tern_tensor * e = NULL) {
    tern_tensor * t = new_tensor(gb, type, n_dims, ne, name);
    if (!t) return NULL;
    t->op = op;
    t->src[0] = a;
    t->src[1] = b;
    t->src[2] = c;
    t->src[3] = d;
    t->src[4] = e;
    set_name(t, name);
    return t;
}

static void set_name(tern_tensor * t, const char * name) {
    size_t n = strlen(name);
    if (n >= sizeof(t->name)) n = sizeof(t->name) - 1;
    memcpy(t->name, name, n);
    t->name[n] = 0;
}

static void set_param_f32(tern_tensor * t, int i, float v) { memcpy(&t->op_params[i], &v, sizeof(v)); }

float tg_param_f32(const tern_tensor * t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof(v));
    return v;
}

static_assert(sizeof(tern_rope_params) <= sizeof(((tern_tensor *) 0)->op_params), "rope params fit op_params");

tern_rope_params tg_rope_params(const tern_tensor * t) {
    tern_rope_params p;
    memcpy(&p, t->op_params, sizeof(p));
    return p;
}

static bool same_shape(const tern_tensor * a, const tern_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

static int64_t n_rows(const tern_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

#define SHAPE_FMT "[%lld, %lld, %lld, %lld]"
#define SHAPE_ARGS(t) (long long) (t)->ne[0], (long long) (t)->ne[1], (long long) (t)->ne[2], (long long) (t)->ne[3]

// ---- leaves and views --------------------------------------------------------

tern_tensor * tg_new(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne) {
    return new_tensor(gb, type, n_dims, ne, "new");
}

tern_tensor * tg_external(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, void * data) {
    if (!data) return builder_error(gb, TERN_ERR_INVALID_ARG, "external", "NULL data");
    tern_tensor * t = new_tensor(gb, type, n_dims, ne, "external");
    if (!t) return NULL;
    t->flags |= TERN_TENSOR_WEIGHT;
    t->data = data;
    return t;
}

static tern_tensor * given_leaf(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, tern_storage st,
                                uint32_t flag, const char * what) {
    if (!st.buffer) return builder_error(gb, TERN_ERR_INVALID_ARG, what, "no storage");
    tern_tensor * t = new_tensor(gb, type, n_dims, ne, what);
    if (!t) return NULL;
    t->flags |= flag;
    t->buffer = st.buffer;
    t->offset = st.offset;
    t->data = tern_storage_host(st);
    if (st.offset + tern_tensor_nbytes(t) > st.buffer->size) {
        gb->n_tensors--;
        return builder_error(gb, TERN_ERR_SHAPE, what, SHAPE_FMT " at offset %zu passes the end of a %zu-byte buffer",
                             SHAPE_ARGS(t), st.offset, st.buffer->size);
    }
    return t;
}

tern_tensor * tg_weight(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, tern_storage st, uint8_t layout) {
    tern_tensor * t = given_leaf(gb, type, n_dims, ne, st, TERN_TENSOR_WEIGHT, "weight");
    if (t) t->layout = layout;
    return t;
}

tern_tensor * tg_kv(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, tern_storage st) {
    return given_leaf(gb, type, n_dims, ne, st, TERN_TENSOR_KV, "kv");
}

// A header over src's bytes: the owner is resolved so that views of views (and
// of SET_ROWS results) point at the tensor that really holds the data, while
// src[0] keeps the immediate source for ordering.
static tern_tensor * view_of(tern_graph_builder * gb, tern_op op, const char * name, tern_tensor * src, int n_dims,
                             const int64_t * ne, size_t offset) {
    tern_tensor * t = new_tensor(gb, src->type, n_dims, ne, name);
    if (!t) return NULL;
    t->op = op;
    t->src[0] = src;
    t->view_src = (tern_tensor *) tern_tensor_owner(src);
    t->view_offs = src->view_offs + offset;
    tern_tensor_follow_owner(t);
    return t;
}

tern_tensor * tg_view(tern_graph_builder * gb, tern_tensor * src, int n_dims, const int64_t * ne, const size_t * nb, size_t offset) {
    if (!src) return NULL;
    tern_tensor * t = view_of(gb, TERN_OP_VIEW, "view", src, n_dims, ne, offset);
    if (!t) return NULL;
    for (int i = 0; i < n_dims; i++) t->nb[i] = nb[i];
    for (int i = n_dims; i < 4; i++) t->nb[i] = t->nb[i - 1] * (size_t) t->ne[i - 1];
    size_t owner_bytes = tern_tensor_nbytes(t->view_src);
    if (tern_tensor_nelements(t) > 0 && t->view_offs + tern_tensor_nbytes(t) > owner_bytes) {
        gb->n_tensors--;
        return builder_error(gb, TERN_ERR_SHAPE, "view", "view " SHAPE_FMT " at offset %zu spans %zu bytes past a %zu-byte source",
                             SHAPE_ARGS(t), t->view_offs, tern_tensor_nbytes(t), owner_bytes);
    }
    return t;
}

tern_tensor * tg_reshape(tern_graph_builder * gb, tern_tensor * src, int n_dims, const int64_t * ne) {
    if (!src) return NULL;
    int64_t n = 1;
    for (int i = 0; i < n_dims && i < 4; i++) n *= ne[i];
    if (!tern_tensor_is_contiguous(src) || n != tern_tensor_nelements(src)) {
        return builder_error(gb, TERN_ERR_SHAPE, "reshape", "source " SHAPE_FMT " (%s) cannot become %lld elements",
                             SHAPE_ARGS(src), tern_tensor_is_contiguous(src) ? "contiguous" : "strided", (long long) n);
    }
    return view_of(gb, TERN_OP_VIEW, "reshape", src, n_dims, ne, 0);
}

// ---- ops ---------------------------------------------------------------------

void tern_tensor_follow_owner(tern_tensor * t) {
    const tern_tensor * o = t->view_src;
    t->buffer = o->buffer;
    t->offset = o->offset + t->view_offs;
    t->data = o->data ? (uint8_t *) o->data + t->view_offs : NULL;
    t->layout = o->layout;
}

tern_tensor * tg_get_rows(tern_graph_builder * gb, tern_tensor * table, tern_tensor * ids) {
    if (!table || !ids) return NULL;
    if (ids->type != TERN_TYPE_I32 || ids->ne[1] * ids->ne[2] * ids->ne[3] != 1 || table->ne[2] * table->ne[3] != 1) {
        return builder_error(gb, TERN_ERR_SHAPE, "get_rows", "table " SHAPE_FMT ", ids " SHAPE_FMT " (need 2-D table, 1-D I32 ids)",
                             SHAPE_ARGS(table), SHAPE_ARGS(ids));
    }
    if (table->type == TERN_TYPE_I32 || (table->type != TERN_TYPE_F32 && !tern_type_traits_get(table->type)->to_float)) {
        return builder_error(gb, TERN_ERR_UNSUPPORTED, "get_rows", "table type %d cannot be converted to F32", (int) table->type);
    }
    int64_t ne[2] = { table->ne[0], ids->ne[0] };
    return new_op(gb, TERN_OP_GET_ROWS, "get_rows", TERN_TYPE_F32, 2, ne, table, ids);
}

// F32 source whose rows are contiguous (nb[0] == 4); outer strides may be anything.
static bool f32_rows(const tern_tensor * t) { return t->type == TERN_TYPE_F32 && t->nb[0] == sizeof(float); }

tern_tensor * tg_rms_norm(tern_graph_builder * gb, tern_tensor * x, tern_tensor * weight, float eps) {
    if (!x) return NULL;
    if (!f32_rows(x) || (weight && (!tern_tensor_is_contiguous(weight) || weight->type != TERN_TYPE_F32 ||
                                    tern_tensor_nelements(weight) != x->ne[0]))) {
        return builder_error(gb, TERN_ERR_SHAPE, "rms_norm", "x " SHAPE_FMT ", weight " SHAPE_FMT " (need F32, weight [ne0])",
                             SHAPE_ARGS(x), SHAPE_ARGS(weight ? weight : x));
    }
    tern_tensor * t = new_op(gb, TERN_OP_RMS_NORM, "rms_norm", TERN_TYPE_F32, x->n_dims, x->ne, x, weight);
    if (t) set_param_f32(t, 0, eps);
    return t;
}

static tern_tensor * binary(tern_graph_builder * gb, tern_op op, const char * name, tern_tensor * a, tern_tensor * b) {
    if (!a || !b) return NULL;
    bool ok = f32_rows(a) && f32_rows(b);
    for (int i = 0; i < 4 && ok; i++) ok = b->ne[i] > 0 && a->ne[i] % b->ne[i] == 0;
    if (!ok) {
        return builder_error(gb, TERN_ERR_SHAPE, name, "a " SHAPE_FMT ", b " SHAPE_FMT " (need F32 rows, b repeating into a)",
                             SHAPE_ARGS(a), SHAPE_ARGS(b));
    }
    return new_op(gb, op, name, TERN_TYPE_F32, a->n_dims, a->ne, a, b);
}

tern_tensor * tg_add(tern_graph_builder * gb, tern_tensor * a, tern_tensor * b) { return binary(gb, TERN_OP_ADD, "add", a, b); }
tern_tensor * tg_mul(tern_graph_builder * gb, tern_tensor * a, tern_tensor * b) { return binary(gb, TERN_OP_MUL, "mul", a, b); }

tern_tensor * tg_scale(tern_graph_builder * gb, tern_tensor * a, float s) {
    if (!a) return NULL;
    if (!f32_rows(a)) return builder_error(gb, TERN_ERR_SHAPE, "scale", "a " SHAPE_FMT " is not F32 rows", SHAPE_ARGS(a));
    tern_tensor * t = new_op(gb, TERN_OP_SCALE, "scale", TERN_TYPE_F32, a->n_dims, a->ne, a);
    if (t) set_param_f32(t, 0, s);
    return t;
}

tern_tensor * tg_mul_mat(tern_graph_builder * gb, tern_tensor * w, tern_tensor * x) {
    if (!w || !x) return NULL;
    const tern_type_traits * tr = w->type == TERN_TYPE_I32 ? NULL : tern_type_traits_get(w->type);
    if (!tr || !tr->vec_dot) {
        return builder_error(gb, TERN_ERR_UNSUPPORTED, "mul_mat", "weight type %d has no dot product", (int) w->type);
    }
    if (w->ne[0] != x->ne[0] || w->ne[2] * w->ne[3] != 1 || !f32_rows(x) || !tern_tensor_is_contiguous(w)) {
        return builder_error(gb, TERN_ERR_SHAPE, "mul_mat", "w " SHAPE_FMT ", x " SHAPE_FMT " (need 2-D contiguous w, F32 x, same K)",
                             SHAPE_ARGS(w), SHAPE_ARGS(x));
    }
    const tern_type_traits * vt = tern_type_traits_get(tr->vec_dot_type);
    if (!vt || x->ne[0] % vt->blck_size != 0) {
        return builder_error(gb, TERN_ERR_SHAPE, "mul_mat", "K = %lld is not a whole number of the activation blocks",
                             (long long) x->ne[0]);
    }
    int64_t ne[4] = { w->ne[1], x->ne[1], x->ne[2], x->ne[3] };
    return new_op(gb, TERN_OP_MUL_MAT, "mul_mat", TERN_TYPE_F32, x->n_dims < 2 ? 2 : x->n_dims, ne, w, x);
}

tern_tensor * tg_mul_mat_bias(tern_graph_builder * gb, tern_tensor * w, tern_tensor * x, tern_tensor * b) {
    tern_tensor * t = tg_mul_mat(gb, w, x);
    if (!t || !b) return NULL;
    if (!f32_rows(b) || !tern_tensor_is_contiguous(b) || tern_tensor_nelements(b) != w->ne[1]) {
        return builder_error(gb, TERN_ERR_SHAPE, "mul_mat", "bias " SHAPE_FMT " (need F32 [%lld])", SHAPE_ARGS(b), (long long) w->ne[1]);
    }
    t->src[2] = b;
    return t;
}

tern_tensor * tg_rope_cache(tern_graph_builder * gb, tern_tensor * pos, const tern_rope_params * p, tern_tensor * factors) {
    if (!pos) return NULL;
    if (pos->type != TERN_TYPE_I32 || n_rows(pos) != 1 || p->n_rot <= 0 || p->n_rot % 2 != 0 ||
        (p->mode != TERN_ROPE_NORMAL && p->mode != TERN_ROPE_NEOX) ||
        (factors && (factors->type != TERN_TYPE_F32 || tern_tensor_nelements(factors) != p->n_rot / 2 || !tern_tensor_is_contiguous(factors)))) {
        return builder_error(gb, TERN_ERR_SHAPE, "rope_cache", "pos " SHAPE_FMT ", n_rot %" PRId32 ", mode %" PRId32 " (need 1-D I32, even n_rot, "
                             "F32 factors [n_rot/2])", SHAPE_ARGS(pos), p->n_rot, p->mode);
    }
    int64_t ne[2] = { p->n_rot, pos->ne[0] };
    tern_tensor * t = new_op(gb, TERN_OP_ROPE_CACHE, "rope_cache", TERN_TYPE_F32, 2, ne, pos, factors);
    if (t) memcpy(t->op_params, p, sizeof(*p));
    return t;
}

tern_tensor * tg_rope(tern_graph_builder * gb, tern_tensor * x, tern_tensor * cache) {
    if (!x || !cache) return NULL;
    if (cache->op != TERN_OP_ROPE_CACHE || !f32_rows(x) || x->ne[3] != 1 || x->ne[2] != cache->ne[1] ||
        x->ne[0] < cache->ne[0]) {
        return builder_error(gb, TERN_ERR_SHAPE, "rope", "x " SHAPE_FMT ", cache " SHAPE_FMT " (need [head_dim >= n_rot, n_head, n_tokens])",
                             SHAPE_ARGS(x), SHAPE_ARGS(cache));
    }
    tern_tensor * t = new_op(gb, TERN_OP_ROPE, "rope", TERN_TYPE_F32, 3, x->ne, x, cache);
    if (t) memcpy(t->op_params, cache->op_params, sizeof(tern_rope_params));
    return t;
}

tern_tensor * tg_set_rows(tern_graph_builder * gb, tern_tensor * dst, tern_tensor * rows, tern_tensor * idx) {
    if (!dst || !rows || !idx) return NULL;
    const tern_type_traits * tr = dst->type == TERN_TYPE_I32 ? NULL : tern_type_traits_get(dst->type);
    const bool raw = rows->type == dst->type && tern_tensor_is_contiguous(rows);  // rows of the cache's own type
    if (!tr || !tr->from_float || !tern_tensor_is_contiguous(dst) || n_rows(dst) != dst->ne[1] || !(raw || f32_rows(rows)) ||
        rows->ne[0] != dst->ne[0] || n_rows(rows) != rows->ne[1] || idx->type != TERN_TYPE_I32 ||
        tern_tensor_nelements(idx) != rows->ne[1]) {
        return builder_error(gb, TERN_ERR_SHAPE, "set_rows", "dst " SHAPE_FMT " type %d, rows " SHAPE_FMT ", idx " SHAPE_FMT,
                             SHAPE_ARGS(dst), (int) dst->type, SHAPE_ARGS(rows), SHAPE_ARGS(idx));
    }
    // The result is the destination itself (view-like): readers of it run after the write.
    tern_tensor * t = view_of(gb, TERN_OP_SET_ROWS, "set_rows", dst, dst->n_dims, dst->ne, 0);
    if (!t) return NULL;
    memcpy(t->nb, dst->nb, sizeof(t->nb));
    t->src[1] = rows;
    t->src[2] = idx;
    return t;
}

tern_tensor * tg_attn(tern_graph_builder * gb, tern_tensor * q, tern_tensor * k, tern_tensor * v, tern_tensor * mask,
                      tern_tensor * bounds, float scale, float softcap) {
    if (!q || !k || !v) return NULL;
    // K and V: F16/F32 views [hd, n_head_kv, n_kv], or a quantized (Q8_0/Q4_0)
    // cache as 2-D [n_embd_gqa, n_kv] (head slices need not be whole blocks).
    auto quantized = [](const tern_tensor * t) { return t->type == TERN_TYPE_Q8_0 || t->type == TERN_TYPE_Q4_0; };
    auto float_view = [](const tern_tensor * t) {
        return (t->type == TERN_TYPE_F16 || t->type == TERN_TYPE_F32) && t->nb[0] == tern_type_traits_get(t->type)->type_size;
    };
    const int64_t hd = q->ne[0];
    bool ok = f32_rows(q) && q->ne[3] == 1 && hd > 0;
    int64_t n_head_kv = 0, n_kv = 0, hd_v = 0;
    if (ok && quantized(k)) {
        ok = k->n_dims == 2 && k->ne[0] % hd == 0;
        n_head_kv = ok ? k->ne[0] / hd : 0;
        n_kv = k->ne[1];
    } else if (ok && float_view(k)) {
        ok = k->ne[3] == 1 && k->ne[0] == hd;
        n_head_kv = k->ne[1];
        n_kv = k->ne[2];
    } else {
        ok = false;
    }
    if (ok && quantized(v)) {
        ok = v->n_dims == 2 && n_head_kv > 0 && v->ne[0] % n_head_kv == 0 && v->ne[1] == n_kv;
        hd_v = ok ? v->ne[0] / n_head_kv : 0;
    } else if (ok && float_view(v)) {
        ok = v->ne[3] == 1 && v->ne[1] == n_head_kv && v->ne[2] == n_kv;
        hd_v = v->ne[0];
    } else {
        ok = false;
    }
    ok = ok && n_head_kv > 0 && q->ne[1] % n_head_kv == 0;
    if (ok && mask) ok = f32_rows(mask) && mask->ne[0] >= n_kv && mask->ne[1] >= q->ne[2];
    if (ok && bounds) ok = mask && bounds->type == TERN_TYPE_I32 && n_rows(bounds) == 1 && bounds->ne[0] >= q->ne[2];
    if (!ok) {
        return builder_error(gb, TERN_ERR_SHAPE, "attn", "q " SHAPE_FMT ", k " SHAPE_FMT " (type %d), v " SHAPE_FMT " (type %d), mask " SHAPE_FMT,
                             SHAPE_ARGS(q), SHAPE_ARGS(k), (int) k->type, SHAPE_ARGS(v), (int) v->type, SHAPE_ARGS(mask ? mask : q));
    }
    int64_t ne[2] = { hd_v * q->ne[1], q->ne[2] };
    tern_tensor * t = new_op(gb, TERN_OP_ATTN, "attn", TERN_TYPE_F32, 2, ne, q, k, v, mask, bounds);
    if (t) {
        set_param_f32(t, 0, scale);
        set_param_f32(t, 1, softcap > 0.0f ? softcap : 0.0f);
    }
    return t;
}

tern_tensor * tg_copy_rows(tern_graph_builder * gb, tern_tensor * table, tern_tensor * ids) {
    if (!table || !ids) return NULL;
    if (ids->type != TERN_TYPE_I32 || n_rows(ids) != 1 || table->ne[2] * table->ne[3] != 1 || table->type == TERN_TYPE_I32 ||
        !tern_tensor_is_contiguous(table)) {
        return builder_error(gb, TERN_ERR_SHAPE, "copy_rows", "table " SHAPE_FMT ", ids " SHAPE_FMT " (need contiguous 2-D table, 1-D I32 ids)",
                             SHAPE_ARGS(table), SHAPE_ARGS(ids));
    }
    int64_t ne[2] = { table->ne[0], ids->ne[0] };
    return new_op(gb, TERN_OP_COPY_ROWS, "copy_rows", table->type, 2, ne, table, ids);
}

tern_tensor * tg_swiglu(tern_graph_builder * gb, tern_tensor * gate, tern_tensor * up) {
    if (!gate || !up) return NULL;
    if (!f32_rows(gate) || !f32_rows(up) || !same_shape(gate, up)) {
        return builder_error(gb, TERN_ERR_SHAPE, "swiglu", "gate " SHAPE_FMT ", up " SHAPE_FMT " (need same-shape F32)",
                             SHAPE_ARGS(gate), SHAPE_ARGS(up));
    }
    return new_op(gb, TERN_OP_SWIGLU, "swiglu", TERN_TYPE_F32, gate->n_dims, gate->ne, gate, up);
}

tern_tensor * tg_geglu(tern_graph_builder * gb, tern_tensor * gate, tern_tensor * up) {
    if (!gate || !up) return NULL;
    if (!f32_rows(gate) || !f32_rows(up) || !same_shape(gate, up)) {
        return builder_error(gb, TERN_ERR_SHAPE, "geglu", "gate " SHAPE_FMT ", up " SHAPE_FMT " (need same-shape F32)",
                             SHAPE_ARGS(gate), SHAPE_ARGS(up));
    }
    return new_op(gb, TERN_OP_GEGLU, "geglu", TERN_TYPE_F32, gate->n_dims, gate->ne, gate, up);
}

tern_tensor * tg_softcap(tern_graph_builder * gb, tern_tensor * x, float cap) {
    if (!x) return NULL;
    if (!f32_rows(x) || !(cap > 0.0f)) {
        return builder_error(gb, TERN_ERR_SHAPE, "softcap", "x " SHAPE_FMT ", cap %g (need F32 rows, cap > 0)", SHAPE_ARGS(x), (double) cap);
    }
    tern_tensor * t = new_op(gb, TERN_OP_SOFTCAP, "softcap", TERN_TYPE_F32, x->n_dims, x->ne, x);
    if (t) set_param_f32(t, 0, cap);
    return t;
}

tern_tensor * tg_argmax(tern_graph_builder * gb, tern_tensor * x) {
    if (!x) return NULL;
    if (!f32_rows(x) || x->ne[0] <= 0) return builder_error(gb, TERN_ERR_SHAPE, "argmax", "x " SHAPE_FMT " is not F32 rows", SHAPE_ARGS(x));
    int64_t ne[1] = { n_rows(x) };
    return new_op(gb, TERN_OP_ARGMAX, "argmax", TERN_TYPE_I32, 1, ne, x);
}

void tg_set_name(tern_tensor * t, const char * fmt, ...) {
    if (!t) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof(t->name), fmt, ap);
    va_end(ap);
}

tern_tensor * tg_cb(tern_tensor * t, const char * name, int32_t il) {
    if (!t) return NULL;
    if (il >= 0) tg_set_name(t, "%s-%d", name, (int) il);
    else set_name(t, name);
    t->layer = il;
    return t;
}

// ---- graph -------------------------------------------------------------------

size_t tern_graph_size(int32_t capacity) { return arena_padded((size_t) capacity * sizeof(tern_tensor *)); }

bool tern_graph_init(tern_graph * g, tern_arena * arena, int32_t capacity, tern_mem_category cat) {
    memset(g, 0, sizeof(*g));
    if (capacity <= 0) return false;
    g->nodes = (tern_tensor **) arena_alloc(arena, (size_t) capacity * sizeof(tern_tensor *), cat);
    if (!g->nodes) return false;
    g->capacity = capacity;
    return true;
}

static bool in_graph(const tern_graph * g, const tern_tensor * t) {
    return t->node_index >= 0 && t->node_index < g->n_nodes && g->nodes[t->node_index] == t;
}

// A source still to be placed: an op (leaves are not nodes) not yet in the graph.
static tern_tensor * next_pending_src(const tern_graph * g, const tern_tensor * t) {
    for (int i = 0; i < TERN_MAX_SRC; i++) {
        tern_tensor * s = t->src[i];
        if (s && s->op != TERN_OP_NONE && !in_graph(g, s)) return s;
    }
    return NULL;
}

// Iterative depth-first post-order walk. The stack of tensors whose sources
// are being placed lives in the unused tail of g->nodes (growing down from
// capacity - 1): every stacked tensor is a distinct node not yet placed, so
// placed + stacked never exceeds the node count the graph will hold.
tern_status tern_graph_expand(tern_graph * g, tern_tensor * out) {
    if (!out) return tern_fail(TERN_ERR_INVALID_ARG, "graph: expand: NULL output (a constructor failed: see its error)");
    if (out->op == TERN_OP_NONE || in_graph(g, out)) return TERN_OK;
    int32_t depth = 0;
    if (g->n_nodes >= g->capacity) return tern_fail(TERN_ERR_NO_MEMORY, "graph: more than %" PRId32 " nodes", g->capacity);
    g->nodes[g->capacity - 1] = out;
    depth = 1;
    while (depth > 0) {
        tern_tensor * top = g->nodes[g->capacity - depth];
        tern_tensor * s = next_pending_src(g, top);
        if (s) {
            if (g->n_nodes + depth + 1 > g->capacity) return tern_fail(TERN_ERR_NO_MEMORY, "graph: more than %" PRId32 " nodes", g->capacity);
            depth++;
            g->nodes[g->capacity - depth] = s;
            continue;
        }
        depth--;
        top->node_index = g->n_nodes;
        g->nodes[g->n_nodes++] = top;
    }
    return TERN_OK;
}

}  // namespace tern
