// GGUF reader: one walk over the header serves both gguf_measure and gguf_parse.
//
// walk() reads the header through a bounds-checked cursor and validates every
// field. In measure mode (no index memory) it only counts what the index will
// hold; in parse mode it fills the preallocated tables. gguf_parse walks twice
// (count, then fill) so every table is one exactly-sized arena allocation.
// Checks that need memory (duplicate keys and tensor names, overlapping
// tensor data) sort an index in the arena's temp region after the fill walk;
// gguf_measure includes that scratch in the bytes it reports.
//
// The host is assumed little-endian (x86, ARM, RISC-V as deployed), like the
// file format; values are read with memcpy because they are unaligned.
#include "gguf/gguf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <algorithm>

#include "core/status.h"
#include "core/sort.h"
#include "tensor/types.h"

namespace tern {

namespace {

// Smallest encodings, used to reject counts the file cannot possibly hold
// before any table is sized: a key/value is a key length (8), a type (4) and
// at least one value byte; a tensor info is a name length (8), n_dims (4),
// one dimension (8), a type (4) and an offset (8).
const uint64_t kMinKvBytes = 8 + 4 + 1;
const uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
const uint64_t kHeaderBytes = 4 + 4 + 8 + 8;

// Bounds-checked reads over the span. pos never exceeds span->avail.
struct cursor {
    const gguf_span * span;
    const char *      what;
    uint64_t          pos;
    uint64_t          need;  // set when a read ran past a prefix but not past the file
};

tern_status want(cursor * c, uint64_t n, const char * field) {
    if (n <= c->span->avail - c->pos) return TERN_OK;
    if (n <= c->span->file_size - c->pos) {
        uint64_t more = std::max(c->pos + n, c->span->avail * 2);
        c->need = std::min(more, c->span->file_size);
        return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: header continues past the %llu bytes read",
                         c->what, (unsigned long long) c->pos, field, (unsigned long long) c->span->avail);
    }
    return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: needs %llu bytes, only %llu left in the file",
                     c->what, (unsigned long long) c->pos, field, (unsigned long long) n,
                     (unsigned long long) (c->span->file_size - c->pos));
}

template <typename T>
tern_status read_val(cursor * c, T * out, const char * field) {
    TERN_TRY(want(c, sizeof(T), field));
    memcpy(out, c->span->data + c->pos, sizeof(T));
    c->pos += sizeof(T);
    return TERN_OK;
}

tern_status read_str(cursor * c, gguf_str * out, const char * field) {
    uint64_t len = 0;
    TERN_TRY(read_val(c, &len, field));
    TERN_TRY(want(c, len, field));
    out->data = (const char *) c->span->data + c->pos;
    out->len = len;
    c->pos += len;
    return TERN_OK;
}

// What the index holds; the same numbers size the arena tables.
struct index_counts {
    uint64_t n_kv;
    uint64_t n_tensors;
    uint64_t n_strs;       // string values + string array elements
    uint64_t names_bytes;  // tensor names with their NULs
};

struct index_sizes {
    size_t kv, strs, tensors, names, scratch;
    size_t total() const { return kv + strs + tensors + names + scratch; }
};

index_sizes sizes_of(const index_counts & n) {
    index_sizes s;
    s.kv = arena_padded((size_t) n.n_kv * sizeof(gguf_kv));
    s.strs = arena_padded((size_t) n.n_strs * sizeof(gguf_str));
    s.tensors = arena_padded((size_t) n.n_tensors * sizeof(gguf_tensor_info));
    s.names = arena_padded((size_t) n.names_bytes);
    s.scratch = arena_padded((size_t) std::max(n.n_kv, n.n_tensors) * sizeof(uint32_t));
    return s;
}

// Parse mode: the tables to fill (all NULL in measure mode).
struct index_tables {
    gguf_kv *          kv;
    gguf_str *         strs;
    gguf_tensor_info * tensors;
    char *             names;
};

tern_status walk_header(cursor * c, gguf_file * f) {
    char magic[4];
    TERN_TRY(want(c, 4, "magic"));
    memcpy(magic, c->span->data, 4);
    c->pos = 4;
    if (memcmp(magic, "GGUF", 4) != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: offset 0: bad magic (not a GGUF file)", c->what);
    }
    TERN_TRY(read_val(c, &f->version, "version"));
    uint32_t swapped = __builtin_bswap32(f->version);
    if ((f->version & 0xffffu) == 0 && swapped >= 1 && swapped <= 3) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "%s: offset 4: big-endian GGUF files are not supported", c->what);
    }
    if (f->version != 2 && f->version != 3) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "%s: offset 4: GGUF version %" PRIu32 " is not supported (2 and 3 are)",
                         c->what, f->version);
    }
    TERN_TRY(read_val(c, &f->n_tensors, "tensor count"));
    TERN_TRY(read_val(c, &f->n_kv, "key/value count"));
    // Sanity against the file size before anything is sized from the counts.
    uint64_t room = c->span->file_size - kHeaderBytes;
    if (f->n_kv > INT32_MAX || f->n_kv > room / kMinKvBytes) {
        return tern_fail(TERN_ERR_FORMAT, "%s: offset 16: %llu key/value pairs cannot fit in a %llu-byte file",
                         c->what, (unsigned long long) f->n_kv, (unsigned long long) c->span->file_size);
    }
    if (f->n_tensors > INT32_MAX || f->n_tensors > (room - f->n_kv * kMinKvBytes) / kMinTensorInfoBytes) {
        return tern_fail(TERN_ERR_FORMAT, "%s: offset 8: %llu tensors cannot fit in a %llu-byte file",
                         c->what, (unsigned long long) f->n_tensors, (unsigned long long) c->span->file_size);
    }
    return TERN_OK;
}

// Reads one value (scalar or array) of a key whose type is already read.
tern_status walk_value(cursor * c, gguf_kv * kv, index_counts * n, index_tables * t) {
    char field[96];
    snprintf(field, sizeof(field), "key '%.*s'", (int) std::min<uint64_t>(kv->key.len, 64), kv->key.data);
    kv->arr_type = kv->type;
    kv->arr_n = 1;
    if (kv->type == GGUF_TYPE_ARRAY) {
        uint32_t arr_type = 0;
        TERN_TRY(read_val(c, &arr_type, field));
        if (arr_type == GGUF_TYPE_ARRAY) {
            return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: nested arrays are not supported",
                             c->what, (unsigned long long) c->pos, field);
        }
        if (arr_type >= GGUF_TYPE_COUNT) {
            return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: unknown array element type %" PRIu32,
                             c->what, (unsigned long long) c->pos, field, arr_type);
        }
        kv->arr_type = (gguf_value_type) arr_type;
        TERN_TRY(read_val(c, &kv->arr_n, field));
    }
    kv->data = c->span->data + c->pos;
    if (kv->arr_type != GGUF_TYPE_STRING) {
        size_t size = gguf_value_size(kv->arr_type);
        if (kv->arr_n > (c->span->file_size - c->pos) / size) {
            return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: %llu elements run past the end of the file",
                             c->what, (unsigned long long) c->pos, field, (unsigned long long) kv->arr_n);
        }
        TERN_TRY(want(c, kv->arr_n * size, field));
        c->pos += kv->arr_n * size;
        return TERN_OK;
    }
    if (kv->arr_n > (c->span->file_size - c->pos) / 8) {
        return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: %s: %llu strings run past the end of the file",
                         c->what, (unsigned long long) c->pos, field, (unsigned long long) kv->arr_n);
    }
    gguf_str * strs = t ? t->strs + n->n_strs : NULL;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        gguf_str s;
        TERN_TRY(read_str(c, &s, field));
        if (strs) strs[i] = s;
    }
    kv->strs = strs;
    n->n_strs += kv->arr_n;
    return TERN_OK;
}

tern_status walk_kv(cursor * c, gguf_file * f, gguf_kv_visitor on_kv, void * user, index_counts * n,
                    index_tables * t) {
    for (uint64_t i = 0; i < f->n_kv; i++) {
        gguf_kv kv;
        memset(&kv, 0, sizeof(kv));
        uint64_t at = c->pos;
        TERN_TRY(read_str(c, &kv.key, "key name"));
        uint32_t type = 0;
        TERN_TRY(read_val(c, &type, "key type"));
        if (type >= GGUF_TYPE_COUNT) {
            return tern_fail(TERN_ERR_FORMAT, "%s: offset %llu: key '%.*s': unknown value type %" PRIu32, c->what,
                             (unsigned long long) at, (int) std::min<uint64_t>(kv.key.len, 64), kv.key.data, type);
        }
        kv.type = (gguf_value_type) type;
        TERN_TRY(walk_value(c, &kv, n, t));
        if (gguf_str_eq(kv.key, "general.alignment")) {
            if (kv.type != GGUF_TYPE_UINT32) {
                return tern_fail(TERN_ERR_FORMAT, "%s: key 'general.alignment': type %s, expected u32", c->what,
                                 gguf_type_name(kv.type));
            }
            memcpy(&f->alignment, kv.data, 4);
            if (f->alignment == 0 || (f->alignment & (f->alignment - 1)) != 0) {
                return tern_fail(TERN_ERR_FORMAT, "%s: key 'general.alignment': %" PRIu32 " is not a power of two", c->what,
                                 f->alignment);
            }
        }
        if (t) t->kv[i] = kv;
        if (on_kv) on_kv(user, &kv);
    }
    n->n_kv = f->n_kv;
    return TERN_OK;
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t * out) { return __builtin_mul_overflow(a, b, out); }

tern_status walk_tensor_info(cursor * c, gguf_tensor_info * ti, const char * name, uint32_t alignment) {
    uint32_t n_dims = 0;
    TERN_TRY(read_val(c, &n_dims, "tensor dimension count"));
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': %" PRIu32 " dimensions (1..%d supported)", c->what, name, n_dims,
                         GGUF_MAX_DIMS);
    }
    ti->n_dims = n_dims;
    uint64_t n_elements = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        uint64_t ne = 1;
        if ((uint32_t) d < n_dims) TERN_TRY(read_val(c, &ne, "tensor dimension"));
        if (ne > (uint64_t) INT64_MAX || mul_overflows(n_elements, ne, &n_elements) ||
            n_elements > (uint64_t) INT64_MAX) {
            return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': dimensions overflow the element count", c->what, name);
        }
        ti->ne[d] = (int64_t) ne;
    }
    uint32_t type = 0;
    TERN_TRY(read_val(c, &type, "tensor type"));
    const tern_type_traits * tr = tern_type_supported(type) ? tern_type_traits_get((tern_type) type) : NULL;
    if (!tr) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "%s: tensor '%s': type id %" PRIu32 " is unknown or not compiled in (TERN_TYPES)",
                         c->what, name, type);
    }
    ti->type = (tern_type) type;
    if (ti->ne[0] % tr->blck_size != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': row of %lld values is not a multiple of the %s block (%lld)",
                         c->what, name, (long long) ti->ne[0], tr->name, (long long) tr->blck_size);
    }
    uint64_t rows = ti->ne[0] ? n_elements / (uint64_t) ti->ne[0] : 0;
    uint64_t row_bytes = (uint64_t) (ti->ne[0] / tr->blck_size) * tr->type_size;
    if (mul_overflows(rows, row_bytes, &ti->bytes)) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': byte size overflows", c->what, name);
    }
    TERN_TRY(read_val(c, &ti->offset, "tensor offset"));
    if (ti->offset % alignment != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': data offset %llu is not a multiple of the alignment %" PRIu32,
                         c->what, name, (unsigned long long) ti->offset, alignment);
    }
    return TERN_OK;
}

tern_status walk_tensors(cursor * c, gguf_file * f, gguf_tensor_visitor on_tensor, void * user, index_counts * n,
                         index_tables * t) {
    uint64_t max_end = 0;
    gguf_str max_end_name = {"", 0};
    char name_buf[80];
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        gguf_str name;
        TERN_TRY(read_str(c, &name, "tensor name"));
        // Error messages need a terminated name; the index gets the full copy.
        snprintf(name_buf, sizeof(name_buf), "%.*s", (int) std::min<uint64_t>(name.len, 64), name.data);
        if (memchr(name.data, 0, name.len) != NULL) {
            return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': name contains a NUL byte", c->what, name_buf);
        }
        gguf_tensor_info ti;
        memset(&ti, 0, sizeof(ti));
        TERN_TRY(walk_tensor_info(c, &ti, name_buf, f->alignment));
        if (ti.bytes > (uint64_t) -1 - ti.offset) {
            return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': data offset overflows", c->what, name_buf);
        }
        if (ti.offset + ti.bytes > max_end) {
            max_end = ti.offset + ti.bytes;
            max_end_name = name;
        }
        if (on_tensor) on_tensor(user, &ti);
        if (t) {
            char * copy = t->names + n->names_bytes;
            memcpy(copy, name.data, name.len);
            copy[name.len] = 0;
            ti.name = copy;
            t->tensors[i] = ti;
        }
        n->names_bytes += name.len + 1;
    }
    n->n_tensors = f->n_tensors;
    uint64_t pad = (f->alignment - c->pos % f->alignment) % f->alignment;
    f->data_offset = c->pos + pad;
    if (f->n_tensors == 0) {
        f->data_offset = std::min(f->data_offset, f->size);  // nothing lives there: padding may be cut off
    } else if (f->data_offset > f->size || max_end > f->size - f->data_offset) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%.*s': data ends at %llu + %llu, past the end of the file (%llu bytes)",
                         c->what, (int) std::min<uint64_t>(max_end_name.len, 64), max_end_name.data,
                         (unsigned long long) f->data_offset, (unsigned long long) max_end, (unsigned long long) f->size);
    }
    return TERN_OK;
}

// The whole header: counts in measure mode (t == NULL), fills in parse mode.
tern_status walk(const gguf_span * span, const char * what, gguf_kv_visitor on_kv, gguf_tensor_visitor on_tensor,
                 void * user, index_counts * n, index_tables * t, gguf_file * f, uint64_t * out_need) {
    memset(n, 0, sizeof(*n));
    memset(f, 0, sizeof(*f));
    if (out_need) *out_need = 0;
    if (!span || !span->data || span->avail > span->file_size) {
        return tern_fail(TERN_ERR_INVALID_ARG, "%s: bad span", what ? what : "gguf");
    }
    cursor c = {span, what ? what : "gguf", 0, 0};
    f->base = span->data;
    f->size = span->file_size;
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    if (span->file_size < kHeaderBytes) {
        return tern_fail(TERN_ERR_FORMAT, "%s: %llu bytes is too short for a GGUF header", c.what,
                         (unsigned long long) span->file_size);
    }
    tern_status s = walk_header(&c, f);
    if (s == TERN_OK) s = walk_kv(&c, f, on_kv, user, n, t);
    if (s == TERN_OK) s = walk_tensors(&c, f, on_tensor, user, n, t);
    if (s != TERN_OK && out_need) *out_need = c.need;
    return s;
}

// Sorting indices in the temp region: duplicate keys, duplicate names, overlapping data.
tern_status check_unique_keys(const gguf_file * f, uint32_t * idx, const char * what) {
    for (uint32_t i = 0; i < f->n_kv; i++) idx[i] = i;
    const gguf_kv * kv = f->kv;
    auto less = [kv](uint32_t a, uint32_t b) {
        const gguf_str & x = kv[a].key;
        const gguf_str & y = kv[b].key;
        int c = memcmp(x.data, y.data, std::min(x.len, y.len));
        return c != 0 ? c < 0 : x.len < y.len;
    };
    tern_heap_sort(idx, (size_t) f->n_kv, less);
    for (uint64_t i = 1; i < f->n_kv; i++) {
        const gguf_str & k = kv[idx[i]].key;
        if (!less(idx[i - 1], idx[i])) {
            return tern_fail(TERN_ERR_FORMAT, "%s: key '%.*s': duplicated", what, (int) std::min<uint64_t>(k.len, 64),
                             k.data);
        }
    }
    return TERN_OK;
}

tern_status check_tensor_table(const gguf_file * f, uint32_t * idx, const char * what) {
    const gguf_tensor_info * ti = f->tensors;
    uint32_t n = (uint32_t) f->n_tensors;
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    tern_heap_sort(idx, (size_t) n, [ti](uint32_t a, uint32_t b) { return strcmp(ti[a].name, ti[b].name) < 0; });
    for (uint32_t i = 1; i < n; i++) {
        if (strcmp(ti[idx[i - 1]].name, ti[idx[i]].name) == 0) {
            return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': duplicated", what, ti[idx[i]].name);
        }
    }
    tern_heap_sort(idx, (size_t) n, [ti](uint32_t a, uint32_t b) {
        return ti[a].offset != ti[b].offset ? ti[a].offset < ti[b].offset : ti[a].bytes < ti[b].bytes;
    });
    for (uint32_t i = 1; i < n; i++) {
        const gguf_tensor_info & prev = ti[idx[i - 1]];
        const gguf_tensor_info & cur = ti[idx[i]];
        if (prev.offset + prev.bytes > cur.offset) {
            return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': data [%llu, +%llu) overlaps tensor '%s'", what,
                             cur.name, (unsigned long long) cur.offset, (unsigned long long) cur.bytes, prev.name);
        }
    }
    return TERN_OK;
}

const gguf_kv * find_kv(const gguf_file * f, const char * key) {
    int64_t i = gguf_find_key(f, key);
    return i < 0 ? NULL : &f->kv[i];
}

// double -> float without undefined behaviour: out of float's range becomes
// +-inf (then refused by whoever needs a finite value), NaN stays NaN.
float f64_to_f32(double d) {
    if (d != d) return NAN;
    if (d > FLT_MAX) return INFINITY;
    if (d < -FLT_MAX) return -INFINITY;
    return (float) d;
}

bool is_integer(gguf_value_type t) {
    return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_INT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_INT16 ||
           t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_UINT64 || t == GGUF_TYPE_INT64;
}

// Integer element p of type t; false when a u64 does not fit an int64.
bool int_value(gguf_value_type t, const uint8_t * p, int64_t * out) {
    switch (t) {
        case GGUF_TYPE_UINT8: { uint8_t v; memcpy(&v, p, 1); *out = v; return true; }
        case GGUF_TYPE_INT8: { int8_t v; memcpy(&v, p, 1); *out = v; return true; }
        case GGUF_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); *out = v; return true; }
        case GGUF_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); *out = v; return true; }
        case GGUF_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); *out = v; return true; }
        case GGUF_TYPE_INT32: { int32_t v; memcpy(&v, p, 4); *out = v; return true; }
        case GGUF_TYPE_INT64: { int64_t v; memcpy(&v, p, 8); *out = v; return true; }
        case GGUF_TYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); *out = (int64_t) v; return v <= (uint64_t) INT64_MAX; }
        default: return false;
    }
}

bool get_int(const gguf_file * f, const char * key, int64_t lo, int64_t hi, int64_t * out) {
    const gguf_kv * kv = find_kv(f, key);
    if (!kv) return false;
    if (!is_integer(kv->type)) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': type %s, expected an integer", key, gguf_type_name(kv->type));
        return false;
    }
    if (!int_value(kv->type, kv->data, out)) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': %s value does not fit an int64", key, gguf_type_name(kv->type));
        return false;
    }
    if (*out < lo || *out > hi) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': %lld is out of range [%lld, %lld]", key, (long long) *out,
                  (long long) lo, (long long) hi);
        return false;
    }
    return true;
}

// snprintf-like appender: keeps counting past the end of the buffer.
struct text_out {
    char *  buf;
    size_t  size;
    int64_t len;
    void put(const char * s, size_t n) {
        for (size_t i = 0; i < n; i++, len++) {
            if ((size_t) len + 1 < size) buf[len] = s[i];
        }
    }
    void fmt(const char * f, ...) __attribute__((format(printf, 2, 3))) {
        char tmp[64];
        va_list ap;
        va_start(ap, f);
        int n = vsnprintf(tmp, sizeof(tmp), f, ap);
        va_end(ap);
        put(tmp, n < 0 ? 0 : std::min<size_t>((size_t) n, sizeof(tmp) - 1));
    }
};

// Scalar rendering as llama.cpp's gguf_kv_to_str: floats with %f, strings in arrays quoted.
void render_scalar(text_out * o, gguf_value_type t, const uint8_t * p, const gguf_str * s, bool quoted) {
    int64_t i = 0;
    if (t == GGUF_TYPE_STRING) {
        if (!s) return;  // inside gguf_measure's visitor strings are not indexed yet
        if (!quoted) { o->put(s->data, s->len); return; }
        // Array elements are quoted with C-style escapes, so one value stays one line.
        o->put("\"", 1);
        for (uint64_t k = 0; k < s->len; k++) {
            const unsigned char c = (unsigned char) s->data[k];
            if (c == '"' || c == '\\') { o->put("\\", 1); o->put(s->data + k, 1); }
            else if (c == '\n') o->put("\\n", 2);
            else if (c == '\t') o->put("\\t", 2);
            else if (c == '\r') o->put("\\r", 2);
            else if (c < 0x20 || c == 0x7f) o->fmt("\\x%02x", c);
            else o->put(s->data + k, 1);
        }
        o->put("\"", 1);
    } else if (t == GGUF_TYPE_FLOAT32) {
        float v; memcpy(&v, p, 4); o->fmt("%f", (double) v);
    } else if (t == GGUF_TYPE_FLOAT64) {
        double v; memcpy(&v, p, 8); o->fmt("%f", v);
    } else if (t == GGUF_TYPE_BOOL) {
        o->fmt("%s", *p ? "true" : "false");
    } else if (t == GGUF_TYPE_UINT64) {
        uint64_t v; memcpy(&v, p, 8); o->fmt("%llu", (unsigned long long) v);
    } else if (int_value(t, p, &i)) {
        o->fmt("%lld", (long long) i);
    }
}

}  // namespace

tern_status gguf_measure(const gguf_span * span, const char * what, gguf_kv_visitor on_kv,
                         gguf_tensor_visitor on_tensor, void * user, size_t * out_bytes, uint64_t * out_need_bytes) {
    index_counts n;
    gguf_file f;
    *out_bytes = 0;
    TERN_TRY(walk(span, what, on_kv, on_tensor, user, &n, NULL, &f, out_need_bytes));
    *out_bytes = sizes_of(n).total();
    return TERN_OK;
}

tern_status gguf_parse(const gguf_span * span, const char * what, tern_arena * arena, gguf_file * out) {
    index_counts n;
    TERN_TRY(walk(span, what, NULL, NULL, NULL, &n, NULL, out, NULL));
    index_sizes s = sizes_of(n);
    index_tables t;
    t.kv = (gguf_kv *) arena_alloc(arena, s.kv, TERN_MEM_MODEL_TABLES);
    t.strs = (gguf_str *) arena_alloc(arena, s.strs, TERN_MEM_MODEL_TABLES);
    t.tensors = (gguf_tensor_info *) arena_alloc(arena, s.tensors, TERN_MEM_MODEL_TABLES);
    t.names = (char *) arena_alloc(arena, s.names, TERN_MEM_MODEL_TABLES);
    if (!t.kv || !t.strs || !t.tensors || !t.names) {
        tern_error_prefix("%s: index: ", what);
        return TERN_ERR_NO_MEMORY;
    }
    TERN_TRY(walk(span, what, NULL, NULL, NULL, &n, &t, out, NULL));
    out->kv = t.kv;
    out->tensors = t.tensors;
    size_t mark = arena_temp_mark(arena);
    uint32_t * idx = (uint32_t *) arena_alloc_temp(arena, s.scratch);
    if (!idx) {
        tern_error_prefix("%s: index: ", what);
        return TERN_ERR_NO_MEMORY;
    }
    tern_status st = check_unique_keys(out, idx, what);
    if (st == TERN_OK) st = check_tensor_table(out, idx, what);
    arena_temp_release(arena, mark);
    return st;
}

int64_t gguf_find_key(const gguf_file * f, const char * key) {
    for (uint64_t i = 0; i < f->n_kv; i++) {
        if (gguf_str_eq(f->kv[i].key, key)) return (int64_t) i;
    }
    return -1;
}

int64_t gguf_find_tensor(const gguf_file * f, const char * name) {
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        if (strcmp(f->tensors[i].name, name) == 0) return (int64_t) i;
    }
    return -1;
}

bool gguf_str_eq(gguf_str s, const char * z) {
    size_t n = strlen(z);
    return s.len == n && memcmp(s.data, z, n) == 0;
}

bool gguf_get_u32(const gguf_file * f, const char * key, uint32_t * out) {
    int64_t v = 0;
    if (!get_int(f, key, 0, UINT32_MAX, &v)) return false;
    *out = (uint32_t) v;
    return true;
}

bool gguf_get_i32(const gguf_file * f, const char * key, int32_t * out) {
    int64_t v = 0;
    if (!get_int(f, key, INT32_MIN, INT32_MAX, &v)) return false;
    *out = (int32_t) v;
    return true;
}

bool gguf_get_f32(const gguf_file * f, const char * key, float * out) {
    const gguf_kv * kv = find_kv(f, key);
    if (!kv) return false;
    if (kv->type == GGUF_TYPE_FLOAT32) {
        memcpy(out, kv->data, 4);
    } else if (kv->type == GGUF_TYPE_FLOAT64) {
        double d; memcpy(&d, kv->data, 8); *out = f64_to_f32(d);
    } else {
        tern_fail(TERN_ERR_FORMAT, "key '%s': type %s, expected f32", key, gguf_type_name(kv->type));
        return false;
    }
    return true;
}

bool gguf_get_bool(const gguf_file * f, const char * key, bool * out) {
    const gguf_kv * kv = find_kv(f, key);
    if (!kv) return false;
    if (kv->type != GGUF_TYPE_BOOL) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': type %s, expected bool", key, gguf_type_name(kv->type));
        return false;
    }
    *out = kv->data[0] != 0;
    return true;
}

bool gguf_get_str(const gguf_file * f, const char * key, gguf_str * out) {
    const gguf_kv * kv = find_kv(f, key);
    if (!kv) return false;
    if (kv->type != GGUF_TYPE_STRING) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': type %s, expected str", key, gguf_type_name(kv->type));
        return false;
    }
    *out = kv->strs[0];
    return true;
}

const gguf_kv * gguf_get_arr(const gguf_file * f, const char * key, gguf_value_type elem_type) {
    const gguf_kv * kv = find_kv(f, key);
    if (!kv) return NULL;
    if (kv->type != GGUF_TYPE_ARRAY || kv->arr_type != elem_type) {
        tern_fail(TERN_ERR_FORMAT, "key '%s': type %s[%s], expected arr[%s]", key, gguf_type_name(kv->type),
                  gguf_type_name(kv->arr_type), gguf_type_name(elem_type));
        return NULL;
    }
    return kv;
}

float gguf_arr_f32(const gguf_kv * kv, uint64_t i) {
    if (kv->arr_type == GGUF_TYPE_FLOAT64) {
        double d; memcpy(&d, kv->data + i * 8, 8); return f64_to_f32(d);
    }
    float v = 0.0f;
    if (kv->arr_type == GGUF_TYPE_FLOAT32) memcpy(&v, kv->data + i * 4, 4);
    return v;
}

bool gguf_kv_int(const gguf_kv * kv, int64_t * out) {
    return kv->type != GGUF_TYPE_ARRAY && int_value(kv->type, kv->data, out);
}

int32_t gguf_arr_i32(const gguf_kv * kv, uint64_t i) {
    int64_t v = 0;
    if (!int_value(kv->arr_type, kv->data + i * gguf_value_size(kv->arr_type), &v)) return 0;
    return (int32_t) v;
}

int32_t gguf_value_to_text(const gguf_kv * kv, char * buf, size_t buf_size) {
    text_out o = {buf, buf_size, 0};
    if (kv->type != GGUF_TYPE_ARRAY) {
        render_scalar(&o, kv->type, kv->data, kv->strs, false);
    } else {
        size_t size = gguf_value_size(kv->arr_type);
        o.put("[", 1);
        for (uint64_t i = 0; i < kv->arr_n; i++) {
            if (i) o.put(", ", 2);
            render_scalar(&o, kv->arr_type, kv->data + i * size, kv->strs ? kv->strs + i : NULL, true);
        }
        o.put("]", 1);
    }
    if (buf_size > 0) buf[std::min<size_t>((size_t) o.len, buf_size - 1)] = 0;
    return (int32_t) std::min<int64_t>(o.len, INT32_MAX);
}

const char * gguf_type_name(gguf_value_type t) {
    static const char * const names[GGUF_TYPE_COUNT] = {"u8",  "i8",  "u16", "i16", "u32", "i32", "f32",
                                                        "bool", "str", "arr", "u64", "i64", "f64"};
    return (unsigned) t < GGUF_TYPE_COUNT ? names[t] : "?";
}

size_t gguf_value_size(gguf_value_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;  // string, array: variable
    }
}

}  // namespace tern
