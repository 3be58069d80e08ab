// GGUF v3 writer: see writer.h. Layout written:
//   "GGUF" u32 version=3, u64 n_tensors, u64 n_kv,
//   kv: (u64 len, key bytes, u32 type, value) ...   value of an array: u32 elem type, u64 n, elements
//   tensor infos: (u64 len, name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset) ...
//   zero padding to the alignment, then each tensor's data padded to the alignment.
#include "gguf/writer.h"

#include <inttypes.h>
#include <string.h>

#include "core/status.h"
#include "port.h"
#include "tensor/types.h"

namespace tern {

namespace {

gguf_str copy_str(tern_arena * a, const char * s, size_t len) {
    char * copy = (char *) arena_alloc(a, len + 1, TERN_MEM_OTHER);
    gguf_str out = {copy, copy ? len : 0};
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = 0;
    }
    return out;
}

// The entry for `key`: the existing one (replaced in place) or a new one.
tern_status kv_slot(gguf_writer * w, const char * key, size_t key_len, gguf_kv ** out) {
    for (uint32_t i = 0; i < w->n_kv; i++) {
        if (w->kv[i].key.len == key_len && memcmp(w->kv[i].key.data, key, key_len) == 0) {
            *out = &w->kv[i];
            return TERN_OK;
        }
    }
    if (w->n_kv == w->max_kv) {
        return tern_fail(TERN_ERR_NO_MEMORY, "gguf writer: key '%.*s': more than %" PRIu32 " keys", (int) key_len, key, w->max_kv);
    }
    gguf_kv * kv = &w->kv[w->n_kv];
    kv->key = copy_str(w->arena, key, key_len);
    if (!kv->key.data) return TERN_ERR_NO_MEMORY;
    w->n_kv++;
    *out = kv;
    return TERN_OK;
}

tern_status set_fixed(gguf_writer * w, const char * key, gguf_value_type type, gguf_value_type elem_type,
                      const void * data, uint64_t n) {
    size_t size = gguf_value_size(elem_type);
    if (size == 0) return tern_fail(TERN_ERR_INVALID_ARG, "gguf writer: key '%s': type %s is not fixed-size", key,
                                    gguf_type_name(elem_type));
    void * copy = arena_alloc(w->arena, (size_t) n * size, TERN_MEM_OTHER);
    if (!copy && n > 0) return TERN_ERR_NO_MEMORY;
    if (n > 0) memcpy(copy, data, (size_t) n * size);
    gguf_kv * kv = NULL;
    TERN_TRY(kv_slot(w, key, strlen(key), &kv));
    kv->type = type;
    kv->arr_type = elem_type;
    kv->arr_n = n;
    kv->data = (const uint8_t *) copy;
    kv->strs = NULL;
    return TERN_OK;
}

tern_status set_strs(gguf_writer * w, const char * key, gguf_value_type type, const char * const * strs, uint64_t n) {
    gguf_str * copies = (gguf_str *) arena_alloc(w->arena, (size_t) n * sizeof(gguf_str), TERN_MEM_OTHER);
    if (!copies && n > 0) return TERN_ERR_NO_MEMORY;
    for (uint64_t i = 0; i < n; i++) {
        copies[i] = copy_str(w->arena, strs[i], strlen(strs[i]));
        if (!copies[i].data) return TERN_ERR_NO_MEMORY;
    }
    gguf_kv * kv = NULL;
    TERN_TRY(kv_slot(w, key, strlen(key), &kv));
    kv->type = type;
    kv->arr_type = GGUF_TYPE_STRING;
    kv->arr_n = n;
    kv->data = NULL;
    kv->strs = copies;
    return TERN_OK;
}

uint64_t align_up(uint64_t x, uint32_t a) { return (x + a - 1) / a * a; }

// Buffered little-endian output through the port's file writer; remembers
// the first failure and counts the bytes written (the header's length).
struct out_file {
    port_file_writer * w;
    bool               failed;
    uint64_t           pos;
    size_t             n;
    uint8_t            buf[4096];
    void flush() {
        if (!failed && n > 0 && port_file_write(w, buf, n) != TERN_OK) failed = true;
        n = 0;
    }
    void bytes(const void * p, size_t len) {
        if (failed || len == 0) return;
        pos += len;
        const uint8_t * src = (const uint8_t *) p;
        if (len >= sizeof(buf)) {
            flush();
            if (!failed && port_file_write(w, src, len) != TERN_OK) failed = true;
            return;
        }
        if (n + len > sizeof(buf)) flush();
        memcpy(buf + n, src, len);
        n += len;
    }
    void u32(uint32_t v) { bytes(&v, 4); }
    void u64(uint64_t v) { bytes(&v, 8); }
    void str(gguf_str s) { u64(s.len); bytes(s.data, (size_t) s.len); }
    void zeros(uint64_t n) {
        static const uint8_t zero[64] = {0};
        while (n > 0) {
            size_t k = n < sizeof(zero) ? (size_t) n : sizeof(zero);
            bytes(zero, k);
            n -= k;
        }
    }
};

void write_kv(out_file * o, const gguf_kv & kv) {
    o->str(kv.key);
    o->u32((uint32_t) kv.type);
    if (kv.type == GGUF_TYPE_ARRAY) {
        o->u32((uint32_t) kv.arr_type);
        o->u64(kv.arr_n);
    }
    if (kv.arr_type == GGUF_TYPE_STRING) {
        for (uint64_t i = 0; i < kv.arr_n; i++) o->str(kv.strs[i]);
    } else {
        o->bytes(kv.data, (size_t) (kv.arr_n * gguf_value_size(kv.arr_type)));
    }
}

}  // namespace

tern_status gguf_writer_init(gguf_writer * w, tern_arena * arena, uint32_t max_kv, uint32_t max_tensors) {
    memset(w, 0, sizeof(*w));
    w->arena = arena;
    w->alignment = GGUF_DEFAULT_ALIGNMENT;
    w->max_kv = max_kv;
    w->max_tensors = max_tensors;
    w->kv = (gguf_kv *) arena_calloc(arena, sizeof(gguf_kv) * max_kv, TERN_MEM_OTHER);
    w->tensors = (gguf_writer_tensor *) arena_calloc(arena, sizeof(gguf_writer_tensor) * max_tensors, TERN_MEM_OTHER);
    if ((!w->kv && max_kv) || (!w->tensors && max_tensors)) return TERN_ERR_NO_MEMORY;
    return TERN_OK;
}

tern_status gguf_writer_set_val(gguf_writer * w, const char * key, gguf_value_type type, const void * value) {
    if (strcmp(key, "general.alignment") == 0) {
        uint32_t a = 0;
        if (type == GGUF_TYPE_UINT32) memcpy(&a, value, 4);
        if (a == 0 || (a & (a - 1)) != 0) {
            return tern_fail(TERN_ERR_INVALID_ARG, "gguf writer: key 'general.alignment' must be a u32 power of two");
        }
        w->alignment = a;
    }
    return set_fixed(w, key, type, type, value, 1);
}

tern_status gguf_writer_set_str(gguf_writer * w, const char * key, const char * value) {
    return set_strs(w, key, GGUF_TYPE_STRING, &value, 1);
}

tern_status gguf_writer_set_arr(gguf_writer * w, const char * key, gguf_value_type elem_type, const void * data,
                                uint64_t n) {
    return set_fixed(w, key, GGUF_TYPE_ARRAY, elem_type, data, n);
}

tern_status gguf_writer_set_arr_str(gguf_writer * w, const char * key, const char * const * strs, uint64_t n) {
    return set_strs(w, key, GGUF_TYPE_ARRAY, strs, n);
}

tern_status gguf_writer_copy_kv(gguf_writer * w, const gguf_kv * kv) {
    if (gguf_str_eq(kv->key, "general.alignment") && kv->type == GGUF_TYPE_UINT32) {
        return gguf_writer_set_val(w, "general.alignment", GGUF_TYPE_UINT32, kv->data);
    }
    gguf_kv * slot = NULL;
    TERN_TRY(kv_slot(w, kv->key.data, (size_t) kv->key.len, &slot));
    gguf_str key = slot->key;
    *slot = *kv;
    slot->key = key;
    return TERN_OK;
}

tern_status gguf_writer_add_tensor(gguf_writer * w, const char * name, tern_type type, uint32_t n_dims,
                                   const int64_t * ne, const void * data) {
    const tern_type_traits * tr = tern_type_traits_get(type);
    if (!tr) return tern_fail(TERN_ERR_UNSUPPORTED, "gguf writer: tensor '%s': type %d not compiled in", name, (int) type);
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS || ne[0] % tr->blck_size != 0) {
        return tern_fail(TERN_ERR_INVALID_ARG, "gguf writer: tensor '%s': bad shape for %s", name, tr->name);
    }
    if (w->n_tensors == w->max_tensors) {
        return tern_fail(TERN_ERR_NO_MEMORY, "gguf writer: tensor '%s': more than %" PRIu32 " tensors", name, w->max_tensors);
    }
    gguf_writer_tensor & t = w->tensors[w->n_tensors];
    t.name = copy_str(w->arena, name, strlen(name)).data;
    if (!t.name) return TERN_ERR_NO_MEMORY;
    t.type = type;
    t.n_dims = n_dims;
    uint64_t rows = 1;
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t.ne[d] = d < n_dims ? ne[d] : 1;
        if (d > 0) rows *= (uint64_t) t.ne[d];
    }
    t.bytes = rows * tern_row_size(type, t.ne[0]);
    t.data = data;
    w->n_tensors++;
    return TERN_OK;
}

tern_status gguf_writer_write(const gguf_writer * w, const char * path) {
    port_file_writer fw;
    TERN_TRY(port_file_create(path, &fw));
    out_file o;
    o.w = &fw;
    o.failed = false;
    o.pos = 0;
    o.n = 0;
    o.bytes("GGUF", 4);
    o.u32(3);
    o.u64(w->n_tensors);
    o.u64(w->n_kv);
    for (uint32_t i = 0; i < w->n_kv; i++) write_kv(&o, w->kv[i]);
    uint64_t offset = 0;
    for (uint32_t i = 0; i < w->n_tensors; i++) {
        const gguf_writer_tensor & t = w->tensors[i];
        o.str(gguf_str{t.name, strlen(t.name)});
        o.u32(t.n_dims);
        for (uint32_t d = 0; d < t.n_dims; d++) o.u64((uint64_t) t.ne[d]);
        o.u32((uint32_t) t.type);
        o.u64(offset);
        offset = align_up(offset + t.bytes, w->alignment);
    }
    o.zeros(align_up(o.pos, w->alignment) - o.pos);
    for (uint32_t i = 0; i < w->n_tensors; i++) {
        const gguf_writer_tensor & t = w->tensors[i];
        o.bytes(t.data, (size_t) t.bytes);
        o.zeros(align_up(t.bytes, w->alignment) - t.bytes);
    }
    o.flush();
    if (o.failed) {
        port_file_abandon(&fw);
        return TERN_ERR_IO;   // port_file_write named the path and the reason
    }
    return port_file_finish(&fw);
}

}  // namespace tern
