// Compute graph: tensors, ops, builder, topological order, memory plan.
//
// A tensor is type + ne[4] + nb[4] + data, as in ggml: ne[0] is the innermost
// (contiguous) dimension, nb[i] the byte stride of dimension i. Views, reshapes
// and permutes only make a new tensor header over the same bytes.
//
// Building: model code calls the tg_* constructors on a tern_graph_builder,
// whose tensor headers come from an arena. tern_graph_build() orders the
// nodes reachable from the given outputs by a depth-first walk (sources
// before users, like ggml_build_forward_expand). Side-effect nodes
// (SET_ROWS into the KV cache) are passed as outputs too, before the nodes
// that read the cache, so they run first.
//
// Storage: every tensor that owns bytes names them as buffer + offset
// (graph/buffer.h); `data` is the host address of those bytes, set only where
// the host can address them (host memory, host-visible device memory), NULL
// for bytes in a device's own memory. Leaves are weights (TERN_TENSOR_WEIGHT,
// storage given), KV cache layers (TERN_TENSOR_KV, storage given) or inputs
// (TERN_TENSOR_INPUT, planned). Every other non-view tensor is an
// intermediate; the planner gives it a fixed offset in its region's buffer
// from liveness (first node that writes it, last node that reads it, views
// counted as reads of their source). Outputs (TERN_TENSOR_OUTPUT) live to the
// end. See planner.h for the algorithm.
//
// Names and layers: model code names every node and weight (tg_set_name) and
// tags it with its layer (`layer`: -1 the input part, 0..n_layer-1, n_layer
// the output part), as llama.cpp's cb(cur, name, il): placement and tensor
// overrides match them, and error messages and printouts show them.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "core/arena.h"
#include "graph/buffer.h"

namespace tern {

#define TERN_MAX_SRC 5
#define TERN_MAX_OP_PARAMS 16   // int32 slots (floats stored by bit pattern)

enum tern_op {
    TERN_OP_NONE = 0,    // leaf
    TERN_OP_VIEW,        // view/reshape/permute of src[0]: no compute
    TERN_OP_GET_ROWS,    // src0 [ne0, n_rows] any type, src1 I32 [n] -> F32 [ne0, n]
    TERN_OP_RMS_NORM,    // src0 F32 [ne0, ...], src1 F32 [ne0] weight or NULL; f eps -> x / rms(x) * w
    TERN_OP_ADD,         // src0 F32 + src1 F32; src1 broadcast by repetition along each dim (bias [ne0])
    TERN_OP_MUL,         // src0 F32 * src1 F32, broadcast as ADD
    TERN_OP_SCALE,       // src0 F32 * f scale
    TERN_OP_MUL_MAT,     // src0 weights [K, N] any type, src1 F32 [K, M] -> F32 [N, M]
                         //   src1 rows quantized once to src0's vec_dot_type (work buffer)
    TERN_OP_ROPE_CACHE,  // src0 I32 positions [n_tokens] -> F32 [n_rot, n_tokens]: (cos, sin) pairs,
                         //   computed once per graph, shared by every layer's ROPE; src1 F32 [n_rot/2]
                         //   frequency factors or NULL: pair i's angle divided by src1[i]
    TERN_OP_ROPE,        // src0 F32 [head_dim, n_head, n_tokens] (may be a strided view), src1 ROPE_CACHE
                         //   -> F32 contiguous, same shape; mode normal (adjacent pairs) or neox (halves)
    TERN_OP_SET_ROWS,    // src0: destination buffer [row_len, n_rows] (any type with from_float), src1 F32
                         //   [row_len, n] or of src0's type, src2 I32 row indices [n]: dst row idx[i] =
                         //   convert(src1 row i) (a row of src0's type is copied byte for byte). Result = src0.
    TERN_OP_ATTN,        // q F32 [hd, n_head, n_tokens], k [hd_k, n_head_kv, n_kv] (F16/F32 view),
                         //   v [hd_v, n_head_kv, n_kv] (F16/F32 view), mask F32 [>= n_kv, n_tokens] (0 or -INF),
                         //   bounds I32 [n_tokens] or NULL: token t reads cells [0, bounds[t]) only (one
                         //   past its last visible cell; the mask is read no further), so a graph made
                         //   for every cell of the cache serves any fill. f scale -> F32 [hd_v * n_head, n_tokens].
                         //   f softcap (param 1; 0: none): each q.k becomes tanh(q.k * (1/c)) * c before
                         //   the scale and the mask (gemma2)
    TERN_OP_SWIGLU,      // silu(src0) * src1, F32 same shape
    TERN_OP_ARGMAX,      // src0 F32 [ne0, n] -> I32 [n]
    TERN_OP_COPY_ROWS,   // src0 [ne0, n_rows] any type, src1 I32 [n] -> [ne0, n] of src0's type: rows
                         //   copied byte for byte (KV defragmentation gathers rows with it)
    TERN_OP_GEGLU,       // gelu(src0) * src1, F32 same shape: GELU's tanh form as llama.cpp's F16 table
                         //   gives it (kernels/vec.h)
    TERN_OP_SOFTCAP,     // src0 F32 -> tanh(src0 * (1/c)) * c, f c (gemma2's final logits)
    TERN_OP_COUNT
};

enum {
    TERN_TENSOR_INPUT  = 1 << 0,  // filled by the caller before compute; planned
    TERN_TENSOR_OUTPUT = 1 << 1,  // read after compute; planned, alive to the end
    TERN_TENSOR_WEIGHT = 1 << 2,  // leaf: a model weight (storage given, never written)
    TERN_TENSOR_KV     = 1 << 3,  // leaf: a KV cache layer (storage given, written by SET_ROWS)
    TERN_TENSOR_COPY   = 1 << 4,  // a split input the scheduler fills (hal/): planned, live from written_at
};
// A leaf whose bytes are given (weights, KV cache), not planned.
#define TERN_TENSOR_EXTERNAL (TERN_TENSOR_WEIGHT | TERN_TENSOR_KV)

// Weight layouts (tern_tensor.layout): 0 is the file's block layout, which
// every backend reads; other values belong to the backend that runs the
// weight, which alone writes and reads them (cpu/: CPU_LAYOUT_INTERLEAVED).
enum { TERN_LAYOUT_FILE = 0 };

// ROPE / ROPE_CACHE parameters (op_params layout is private to the graph code).
struct tern_rope_params {
    int32_t n_rot;          // rotated dims per head (== head_dim for llama/qwen2)
    int32_t mode;           // TERN_ROPE_NORMAL or TERN_ROPE_NEOX
    int32_t n_ctx_orig;     // YaRN: training context
    float   freq_base;
    float   freq_scale;
    float   ext_factor;     // YaRN extrapolation mix (0: off)
    float   attn_factor;
    float   beta_fast;
    float   beta_slow;
};
enum { TERN_ROPE_NORMAL = 0, TERN_ROPE_NEOX = 2 };

struct tern_tensor {
    tern_type     type;
    int32_t       n_dims;
    int64_t       ne[4];
    size_t        nb[4];
    tern_op       op;
    uint32_t      flags;
    int32_t       op_params[TERN_MAX_OP_PARAMS];
    tern_tensor * src[TERN_MAX_SRC];
    tern_tensor * view_src;   // for views: the tensor that owns the bytes
    size_t        view_offs;  // byte offset into view_src
    tern_buffer * buffer;     // where the bytes live (NULL: host memory outside any buffer: tests)
    size_t        offset;     // byte offset of the bytes in buffer
    void *        data;       // host address of the bytes, or NULL when only the device can address them
    int32_t       id;         // index in the builder
    int32_t       node_index; // position in the graph being expanded (valid when nodes[node_index] == this)
    int32_t       layer;      // -1 input part, 0..n_layer-1, n_layer output part (see above)
    int32_t       written_at; // TERN_TENSOR_COPY: node index before which it is filled, else -1
    uint8_t       layout;     // weights: TERN_LAYOUT_FILE or the running backend's layout
    char          name[48];
};

// Tensor headers come from the builder's fixed pool (in an arena).
struct tern_graph_builder {
    tern_tensor * tensors;
    int32_t       n_tensors;
    int32_t       capacity;
    int32_t       layer;      // layer tag of the tensors made next (model code sets it per layer)
    tern_status   status;     // first error of a constructor (TERN_OK while all succeeded)
};

// Sizing: bytes for a builder of `capacity` tensors / a graph of `capacity` nodes.
size_t tern_graph_builder_size(int32_t capacity);
bool   tern_graph_builder_init(tern_graph_builder * gb, tern_arena * arena, int32_t capacity, tern_mem_category cat);
void   tern_graph_builder_reset(tern_graph_builder * gb);   // forget all tensors, keep the pool

// Constructors. Each returns NULL when the pool is full (the builder then
// records TERN_ERR_NO_MEMORY in gb->status) or when the shapes/types do not fit
// the op (TERN_ERR_SHAPE, tern_last_error() names the op and shapes); a NULL
// source gives NULL, so a chain of constructors needs one check at the end.
tern_tensor * tg_new(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne);   // input/intermediate
// Leaves whose bytes are given as storage (buffer + offset; data follows for host buffers):
tern_tensor * tg_weight(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, tern_storage st, uint8_t layout);
tern_tensor * tg_kv(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, tern_storage st);
// A weight in plain host memory (tests, tools): no buffer.
tern_tensor * tg_external(tern_graph_builder * gb, tern_type type, int n_dims, const int64_t * ne, void * data);
tern_tensor * tg_view(tern_graph_builder * gb, tern_tensor * src, int n_dims, const int64_t * ne, const size_t * nb, size_t offset);
tern_tensor * tg_reshape(tern_graph_builder * gb, tern_tensor * src, int n_dims, const int64_t * ne);  // src contiguous
tern_tensor * tg_get_rows(tern_graph_builder * gb, tern_tensor * table, tern_tensor * ids);
tern_tensor * tg_rms_norm(tern_graph_builder * gb, tern_tensor * x, tern_tensor * weight, float eps);
tern_tensor * tg_add(tern_graph_builder * gb, tern_tensor * a, tern_tensor * b);
tern_tensor * tg_mul(tern_graph_builder * gb, tern_tensor * a, tern_tensor * b);
tern_tensor * tg_scale(tern_graph_builder * gb, tern_tensor * a, float s);
tern_tensor * tg_mul_mat(tern_graph_builder * gb, tern_tensor * w, tern_tensor * x);
// W x + b in one node (b: F32 [w->ne[1]], added to each output row as the chunk is
// written; the same floats as tg_add of the product, one node and barrier less).
tern_tensor * tg_mul_mat_bias(tern_graph_builder * gb, tern_tensor * w, tern_tensor * x, tern_tensor * b);
// factors: F32 [n_rot/2] (RoPE frequency factors) or NULL.
tern_tensor * tg_rope_cache(tern_graph_builder * gb, tern_tensor * pos, const tern_rope_params * p, tern_tensor * factors = NULL);
tern_tensor * tg_rope(tern_graph_builder * gb, tern_tensor * x, tern_tensor * cache);
tern_tensor * tg_set_rows(tern_graph_builder * gb, tern_tensor * dst, tern_tensor * rows, tern_tensor * idx);
// bounds: I32 [n_tokens] or NULL (every cell of k, up to the mask's last visible one).
tern_tensor * tg_attn(tern_graph_builder * gb, tern_tensor * q, tern_tensor * k, tern_tensor * v, tern_tensor * mask,
                      tern_tensor * bounds, float scale, float softcap = 0.0f);
// Raw rows of any type (no conversion): dst row i = table row ids[i], byte for byte.
tern_tensor * tg_copy_rows(tern_graph_builder * gb, tern_tensor * table, tern_tensor * ids);
tern_tensor * tg_swiglu(tern_graph_builder * gb, tern_tensor * gate, tern_tensor * up);
tern_tensor * tg_geglu(tern_graph_builder * gb, tern_tensor * gate, tern_tensor * up);
tern_tensor * tg_softcap(tern_graph_builder * gb, tern_tensor * x, float cap);
tern_tensor * tg_argmax(tern_graph_builder * gb, tern_tensor * x);
void tg_set_name(tern_tensor * t, const char * fmt, ...);
// Name "name-il" (il >= 0) or "name" and tag the layer, as llama.cpp's cb(cur, name, il). Returns t.
tern_tensor * tg_cb(tern_tensor * t, const char * name, int32_t il);

// Op parameters as the kernels read them.
float            tg_param_f32(const tern_tensor * t, int i);   // eps (RMS_NORM), scale (SCALE, ATTN), cap (SOFTCAP)
tern_rope_params tg_rope_params(const tern_tensor * t);        // ROPE_CACHE, ROPE
// A view's storage from its owner's (after the owner got its bytes).
void tern_tensor_follow_owner(tern_tensor * t);
// The tensor that owns t's bytes (t itself unless t is a view or a SET_ROWS result).
static inline const tern_tensor * tern_tensor_owner(const tern_tensor * t) { return t->view_src ? t->view_src : t; }

bool    tern_tensor_is_contiguous(const tern_tensor * t);
int64_t tern_tensor_nelements(const tern_tensor * t);
size_t  tern_tensor_nbytes(const tern_tensor * t);

// Nodes in execution order.
struct tern_graph {
    tern_tensor ** nodes;
    int32_t        n_nodes;
    int32_t        capacity;
};
size_t tern_graph_size(int32_t capacity);
bool   tern_graph_init(tern_graph * g, tern_arena * arena, int32_t capacity, tern_mem_category cat);
// Append, depth-first, every not-yet-visited node reachable from `out` (ggml_build_forward_expand).
tern_status tern_graph_expand(tern_graph * g, tern_tensor * out);

}  // namespace tern
