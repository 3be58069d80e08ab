// The loaded model: its files (tables arena, parsed GGUF, tensor table),
// vocabulary, hyper-parameters and weights bound by name.
#pragma once
#include "tern.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "model/model_file.h"
#include "vocab/vocab.h"

namespace tern {

// A weight: a view of a tensor's bytes in the mapping / read buffer / blob.
struct model_weight {
    const void * data;     // NULL when the (optional) tensor is absent
    tern_type    type;
    int32_t      n_dims;
    int64_t      ne[4];
    bool         repacked; // rows in the kernel set's interleaved layout (model/repack.h)
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
};

struct model_weights {
    model_weight tok_embd;    // [n_embd, n_vocab]
    model_weight output_norm; // [n_embd]
    model_weight output;      // [n_embd, n_vocab]; token_embd when tied
    model_layer * layers;     // [n_layer], in the model arena
};

}  // namespace tern

// The public type (tern.h) is global; its members are Tern's own types.
using namespace tern;
struct tern_model {
    model_files         files;
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
};

namespace tern {

// Bytes bind_weights takes from the model arena.
size_t model_weights_size(uint32_t n_layer);
// Find every tensor the architecture needs and check its type and shape
// (TERN_ERR_FORMAT / TERN_ERR_SHAPE naming the tensor when missing or wrong).
tern_status model_bind_weights(tern_model * m);

}  // namespace tern
