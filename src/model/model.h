// The loaded model: its files (tables arena, parsed GGUF, tensor table),
// vocabulary, hyper-parameters and weights bound by name.
#pragma once
#include "tern.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "graph/buffer.h"
#include "model/model_file.h"
#include "vocab/vocab.h"

namespace tern {

struct model_devices;  // model/placement.h (builds with devices)

// A weight: a tensor of the file, or rows of one (phi3's fused matrices).
// `data` views the file's bytes (mapping / read buffer / blob); `st` is where
// the weight is run from: the file's own host buffer, or the weights buffer
// of the device it is placed on (hal/, which holds a copy in the file's
// layout). `layout` belongs to whoever runs it (graph.h: TERN_LAYOUT_FILE,
// or the CPU's interleaved layout when the CPU repacked it, model/repack.h).
struct model_weight {
    const void *  data;        // the file's bytes; NULL when the (optional) tensor is absent
    tern_storage  st;          // where it runs from
    const char *  name;        // the GGUF tensor's name ("blk.3.attn_q.weight")
    int32_t       file_tensor; // index in model_files.tensors
    size_t        file_offset; // byte offset of these rows in that tensor (row views)
    tern_type     type;
    int32_t       n_dims;
    int64_t       ne[4];
    uint8_t       layout;
};

struct model_layer {
    model_weight attn_norm;   // [n_embd]
    model_weight wq;          // [n_embd, n_embd_head_k * n_head]
    model_weight wk;          // [n_embd, n_embd_k_gqa]
    model_weight wv;          // [n_embd, n_embd_v_gqa]
    model_weight wo;          // [n_embd_head_v * n_head, n_embd]
    model_weight bq, bk, bv;  // qwen2 biases [rows of wq/wk/wv]
    model_weight q_norm;      // qwen3 [n_embd_head_k]
    model_weight k_norm;      // qwen3 [n_embd_head_k]
    model_weight ffn_norm;    // [n_embd]
    model_weight ffn_gate;    // [n_embd, n_ff]
    model_weight ffn_up;      // [n_embd, n_ff]
    model_weight ffn_down;    // [n_ff, n_embd]
    model_weight attn_post_norm;  // gemma2 [n_embd]: on the attention's output, before the residual add
    model_weight ffn_post_norm;   // gemma2 [n_embd]: on the FFN's output, before the residual add
};

struct model_weights {
    model_weight tok_embd;    // [n_embd, n_vocab]
    model_weight output_norm; // [n_embd]
    model_weight output;      // [n_embd, n_vocab]; token_embd when tied
    // RoPE frequency factors [n_rot/2] (F32): each dimension pair's angle is
    // divided by its factor. llama's rope_freqs (Llama 3.1/3.2), or phi3's
    // LongRoPE pair: the long factors when a sequence's context (n_ctx /
    // n_seq_max) passes rope.scaling.original_context_length, else the short ones.
    model_weight rope_freqs;
    model_weight rope_long;
    model_weight rope_short;
    model_layer * layers;     // [n_layer], in the model arena
};

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_model {
    model_files         files;
    tern_buffer         file_buffers[MODEL_FILES_MAX_SPLITS];  // each split's bytes (host weights' storage)
    tern_vocab          vocab;
    model_hparams       hp;
    const model_arch *  arch;        // NULL for vocab-only loads of other architectures
    model_weights       w;
    char                arch_name[64];
    bool                vocab_only;
    // tern_context_mem_size plans a context here (context_sizing_scratch_size
    // bytes, reserved at load; NULL for vocab-only models); sizing_busy (0/1,
    // atomic builtins) lets one sizing run at a time.
    uint8_t *           sizing_scratch;
    size_t              sizing_scratch_size;
    int                 sizing_busy;
    model_devices *     devices;     // where layers and weights run (model/placement.h); NULL: the CPU alone
    // The fingerprint saved states carry (model/fingerprint.h): computed at
    // load before a repack, else at the first state call; known and claim
    // are 0/1 flags (atomic builtins).
    uint64_t            fingerprint;
    int                 fingerprint_known;
    int                 fingerprint_claim;
    // Load time past the file (files.load_ms): the repack and the device upload.
    double              load_repack_ms;
    double              load_upload_ms;
};

namespace tern {

// Bytes bind_weights takes from the model arena.
size_t model_weights_size(uint32_t n_layer);
// Find every tensor the architecture needs and check its type and shape
// (TERN_ERR_FORMAT / TERN_ERR_SHAPE naming the tensor when missing or wrong).
tern_status model_bind_weights(tern_model * m);

}  // namespace tern
