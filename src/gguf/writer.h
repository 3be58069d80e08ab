// GGUF v3 writer: key/values of every type (string arrays included), tensor
// infos, alignment padding and data, in a file llama.cpp reads.
//
// The writer only describes the file until gguf_writer_write():
//   - its kv and tensor tables (max_kv, max_tensors entries) come from an arena;
//   - values given to the gguf_writer_set_* functions are copied into the
//     arena, so callers may pass temporaries;
//   - gguf_writer_copy_kv() and tensor data are views: the parsed file and
//     the tensor bytes must outlive the write.
// Setting a key that already exists replaces its value in place (file order
// is kept). general.alignment (u32, a power of two) sets the data padding.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "gguf/gguf.h"
#include "tern.h"

namespace tern {

struct gguf_writer_tensor {
    const char * name;
    tern_type    type;
    uint32_t     n_dims;
    int64_t      ne[GGUF_MAX_DIMS];  // unused dims are 1
    const void * data;               // `bytes` bytes, a view
    uint64_t     bytes;
};

struct gguf_writer {
    tern_arena *         arena;
    uint32_t             alignment;
    uint32_t             n_kv, max_kv;
    gguf_kv *            kv;
    uint32_t             n_tensors, max_tensors;
    gguf_writer_tensor * tensors;
};

tern_status gguf_writer_init(gguf_writer * w, tern_arena * arena, uint32_t max_kv, uint32_t max_tensors);

// Scalar of a fixed-size type (value: its little-endian bytes, e.g. &u32).
tern_status gguf_writer_set_val(gguf_writer * w, const char * key, gguf_value_type type, const void * value);
tern_status gguf_writer_set_str(gguf_writer * w, const char * key, const char * value);
// Array of n fixed-size elements.
tern_status gguf_writer_set_arr(gguf_writer * w, const char * key, gguf_value_type elem_type, const void * data,
                                uint64_t n);
tern_status gguf_writer_set_arr_str(gguf_writer * w, const char * key, const char * const * strs, uint64_t n);
// A key/value of a parsed gguf_file, by view.
tern_status gguf_writer_copy_kv(gguf_writer * w, const gguf_kv * kv);

static inline tern_status gguf_writer_set_u32(gguf_writer * w, const char * key, uint32_t v) {
    return gguf_writer_set_val(w, key, GGUF_TYPE_UINT32, &v);
}
static inline tern_status gguf_writer_set_i32(gguf_writer * w, const char * key, int32_t v) {
    return gguf_writer_set_val(w, key, GGUF_TYPE_INT32, &v);
}
static inline tern_status gguf_writer_set_u16(gguf_writer * w, const char * key, uint16_t v) {
    return gguf_writer_set_val(w, key, GGUF_TYPE_UINT16, &v);
}
static inline tern_status gguf_writer_set_f32(gguf_writer * w, const char * key, float v) {
    return gguf_writer_set_val(w, key, GGUF_TYPE_FLOAT32, &v);
}
static inline tern_status gguf_writer_set_bool(gguf_writer * w, const char * key, bool v) {
    uint8_t b = v ? 1 : 0;
    return gguf_writer_set_val(w, key, GGUF_TYPE_BOOL, &b);
}

// A tensor of n_dims (1..4) dimensions ne; data is a view of its bytes.
tern_status gguf_writer_add_tensor(gguf_writer * w, const char * name, tern_type type, uint32_t n_dims,
                                   const int64_t * ne, const void * data);

// Write the whole file (port_file_*: create, buffered writes, finish; a failed file is removed). TERN_ERR_IO names the path on failure.
tern_status gguf_writer_write(const gguf_writer * w, const char * path);

}  // namespace tern
