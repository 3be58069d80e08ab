// GGUF reader over a byte span (versions 2 and 3).
//
// The reader never copies strings or values: a gguf_str is a view into the
// file's bytes (mapping, read buffer or caller blob), which outlive the parsed
// tables. Only the index (key/value table, tensor table, views of string
// arrays) is built, in an arena.
//
// Parsing is two steps so the tables land in one exactly-sized arena:
//   1. gguf_measure(): validates the whole header and tensor table against the
//      file size and returns the bytes the index needs. It also reports every
//      key with its type and array length (on_kv), so later layers (vocab) can
//      size their own tables from the header alone.
//   2. gguf_parse(): fills the index in the arena (same validation).
//
// Validation before use: magic, version (2 or 3; a byte-swapped version is
// reported as a big-endian file), counts against the file size, string
// lengths, value types, dimension counts (1..4), element-count products
// without overflow, tensor types known and compiled in, general.alignment a
// power of two, data offsets aligned and inside the file, tensors not
// overlapping, duplicate keys and tensor names rejected.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"

namespace tern {

#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32

enum gguf_value_type {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT
};

// A string inside the file: not NUL-terminated.
struct gguf_str {
    const char * data;
    uint64_t     len;
};

struct gguf_kv {
    gguf_str        key;
    gguf_value_type type;      // GGUF_TYPE_ARRAY for arrays
    gguf_value_type arr_type;  // element type when type == GGUF_TYPE_ARRAY
    uint64_t        arr_n;     // element count (1 for scalars)
    const uint8_t * data;      // scalar value / first array element, in the file (may be unaligned)
    const gguf_str * strs;     // string value (1) or string array elements (arr_n), in the arena
};

struct gguf_tensor_info {
    const char *    name;      // NUL-terminated copy in the arena
    uint32_t        n_dims;
    int64_t         ne[GGUF_MAX_DIMS];  // unused dims are 1
    tern_type       type;
    uint64_t        offset;    // relative to the data section
    uint64_t        bytes;
};

struct gguf_file {
    uint32_t          version;
    uint64_t          n_kv;
    gguf_kv *         kv;
    uint64_t          n_tensors;
    gguf_tensor_info * tensors;
    uint32_t          alignment;
    uint64_t          data_offset;  // start of the data section in the file
    const uint8_t *   base;         // the span parsed
    uint64_t          size;         // file size
};

// The bytes given to the reader: `avail` bytes at `data` of a file of
// `file_size` bytes (avail < file_size when only a prefix has been read).
struct gguf_span {
    const uint8_t * data;
    uint64_t        avail;
    uint64_t        file_size;
};

// Called by gguf_measure for every key/value pair. Strings are not indexed
// yet: kv->strs is NULL (kv->arr_n and kv->data are valid).
typedef void (*gguf_kv_visitor)(void * user, const gguf_kv * kv);
// Called by gguf_measure for every tensor, after its info was validated
// (ti->name is NULL: names are not copied yet).
typedef void (*gguf_tensor_visitor)(void * user, const gguf_tensor_info * ti);

// Validate and size. On success *out_bytes is the arena bytes gguf_parse will
// take (sum of arena_padded() sizes, including the temp scratch it sorts in
// and gives back). Checks that need that scratch (duplicate keys and tensor
// names, overlapping tensor data) are done by gguf_parse only. When the span is a prefix that ends
// inside the header or tensor table, returns TERN_ERR_FORMAT and sets
// *out_need_bytes to a prefix length worth retrying with (0 otherwise).
// `what` names the file in error messages.
tern_status gguf_measure(const gguf_span * span, const char * what, gguf_kv_visitor on_kv,
                         gguf_tensor_visitor on_tensor, void * user, size_t * out_bytes, uint64_t * out_need_bytes);
tern_status gguf_parse(const gguf_span * span, const char * what, tern_arena * arena, gguf_file * out);

// Lookups (linear in n_kv / n_tensors; called at load time only).
int64_t gguf_find_key(const gguf_file * f, const char * key);       // -1 when absent
int64_t gguf_find_tensor(const gguf_file * f, const char * name);   // -1 when absent
bool    gguf_str_eq(gguf_str s, const char * z);

// Typed getters: false when the key is absent; TERN_ERR_FORMAT-worthy type
// mismatches also return false and set tern_last_error(). Integer getters
// accept any integer type whose value fits.
bool gguf_get_u32(const gguf_file * f, const char * key, uint32_t * out);
bool gguf_get_i32(const gguf_file * f, const char * key, int32_t * out);
bool gguf_get_f32(const gguf_file * f, const char * key, float * out);
bool gguf_get_bool(const gguf_file * f, const char * key, bool * out);
bool gguf_get_str(const gguf_file * f, const char * key, gguf_str * out);
// Array element access (kv->type == GGUF_TYPE_ARRAY).
const gguf_kv * gguf_get_arr(const gguf_file * f, const char * key, gguf_value_type elem_type);
float   gguf_arr_f32(const gguf_kv * kv, uint64_t i);
// Scalar integer value of any integer type; false for other types or a u64 above INT64_MAX.
bool    gguf_kv_int(const gguf_kv * kv, int64_t * out);
int32_t gguf_arr_i32(const gguf_kv * kv, uint64_t i);
// Render a value as text ("[1, 2, ...]" for arrays, cut to fit); returns the full length.
int32_t gguf_value_to_text(const gguf_kv * kv, char * buf, size_t buf_size);
const char * gguf_type_name(gguf_value_type t);
// Bytes of one value of a fixed-size type; 0 for strings and arrays.
size_t gguf_value_size(gguf_value_type t);

}  // namespace tern
