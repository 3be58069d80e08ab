// The file side of tern_model_load_file / tern_model_load_blob: obtain the
// bytes (mmap, read() or the caller's blob), parse every split's GGUF header
// into ONE arena, and merge the tensors of all splits into one table whose
// `data` pointers are the weights.
//
// Sizing (one allocation for all model tables):
//   1. each split's header is measured (gguf_measure); split 0's keys are
//      shown to sizer->on_kv so the caller can size its own tables (vocab,
//      hparams, weight bindings) from the header alone;
//   2. one port_alloc of arena_buffer_size(sum of gguf index bytes + merged
//      tensor table + split table + load scratch + sizer->extra_bytes(user)),
//      or, with params->arena, the caller's memory: its first 64-byte
//      boundary, then (read path) each split's file bytes padded to 64, then
//      the table arena. model_files_size_* returns that total
//      (63 + files + tables) without keeping anything; a caller buffer below
//      it is refused at any alignment, as for contexts;
//   3. gguf_parse of each split into that arena. After open, exactly the
//      caller's extra_bytes are free for it in out->arena.
//
// Where the weights come from:
//   mmap  (TERN_WITH_MMAP && use_mmap): the whole file is mapped read-only
//         (prefetch: MAP_POPULATE + WILLNEED; use_mlock: mlock, warns if it
//         fails); weights point into the mapping (zero copy).
//   read  (use_mmap == 0 or no mmap support): one buffer per split of the
//         file's size; the header prefix is read first (grown while
//         gguf_measure asks for more), then tensor data one tensor at a time
//         in layer order ("blk.N." by N, other tensors first, then by name,
//         as llama.cpp orders its loads).
//   blob  the caller's memory; weights point into it; never written to.
//
// Split models: "<prefix>-00001-of-000NN.gguf" (or split.count > 1 in the
// file) loads parts "<prefix>-%05d-of-%05d.gguf" 1..N; split.no, split.count
// and split.tensors.count must agree. Split 0's keys are the model metadata.
//
// Progress: progress_callback gets values in [0, 1], monotonic, one per tensor
// loaded (and per tensor checked with check_tensors), ending with 1.0 on
// success; a 0 return cancels with TERN_ERR_CANCELLED and everything released.
// check_tensors: F32/F16/BF16 values and every block's scales (d, dmin/m/s)
// must be finite; tensors are checked in parallel on up to 8 port threads.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "gguf/gguf.h"
#include "port.h"
#include "tern.h"

namespace tern {

// Parts of a split model handled (llama-gguf-split files of huge models have
// well under this many).
#define MODEL_FILES_MAX_SPLITS 64

struct model_file_tensor {
    const char *    name;     // in the arena
    tern_type       type;
    int32_t         n_dims;
    int64_t         ne[4];    // unused dims are 1
    uint64_t        bytes;
    uint64_t        offset;   // in its split's data section
    int32_t         split;
    const uint8_t * data;     // the weights: mapping, read buffer or blob
};

// Where one split's bytes live, to release on close.
struct model_file_source {
    port_file_map map;        // mmap path
    void *        buffer;     // read path: the file's size, from port_alloc or the caller's memory
};

struct model_files {
    tern_arena          arena;         // THE model table arena (one allocation)
    void *              arena_buffer;  // port_alloc'd (NULL in caller memory)
    bool                caller_memory; // params->arena holds everything: nothing to port_free
    size_t              caller_used;   // bytes of it taken so far (read buffers, then the tables)
    int32_t             n_splits;
    gguf_file *         splits;        // parsed headers, [n_splits], in the arena
    model_file_source   sources[MODEL_FILES_MAX_SPLITS];
    int64_t             n_tensors;
    model_file_tensor * tensors;       // all splits merged, in file order, in the arena
    const char *        load_path;     // "mmap" | "read" | "blob"
    double              load_ms;
};

// extra_bytes: the caller (vocab + model tables) reserves room in the same
// arena, sized from the header it saw through on_kv and the tensor count (so a
// table indexed by a header value is bounded by what the file holds). Both may
// be NULL.
struct model_files_sizer {
    gguf_kv_visitor on_kv;
    gguf_tensor_visitor on_tensor;   // split 0's tensors, like on_kv
    size_t (*extra_bytes)(void * user, uint64_t n_tensors);
    void * user;
};

// Layer of a "blk.N." tensor name, -1 for other tensors (and N > INT32_MAX).
int64_t model_tensor_layer(const char * name);

tern_status model_files_open_path(const char * path, const tern_model_params * p, const model_files_sizer * s,
                                  model_files * out);
tern_status model_files_open_blob(const void * data, size_t size, const tern_model_params * p,
                                  const model_files_sizer * s, model_files * out);
// The exact bytes of caller memory (params->arena) the same open takes:
// headers are measured (the file mapped where mmap is compiled in, else read
// into a port_alloc'd prefix) and nothing is kept. 0 and tern_last_error on error.
size_t model_files_size_path(const char * path, const tern_model_params * p, const model_files_sizer * s);
size_t model_files_size_blob(const void * data, size_t size, const tern_model_params * p, const model_files_sizer * s);
// Frees everything (also safe on a half-opened or zeroed struct, and on the
// struct inside the arena it frees: the arena goes last).
void model_files_close(model_files * m);

}  // namespace tern
