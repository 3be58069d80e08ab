// The forward pass of a decoder-only transformer as a compute graph (every
// architecture of model/arch.h; the entry and the hyper-parameters switch the
// parts on; phi3's fused matrices are row views).
//
//   x = token embeddings [n_embd, n_tokens]   (* embedding_scale: granite; sqrt(n_embd): gemma2/3)
//   rope cache (cos, sin) [n_rot, n_tokens] of the positions, once, with the
//     RoPE frequency factors (Llama 3's rope_freqs, phi3's LongRoPE) if any;
//     gemma3: a second one for the windowed layers (their own base, no scaling)
// per layer, for n_tokens tokens over the cache's cells:
//   rms_norm -> q,k,v = W x (+ b)
//   q [hd, n_head, n_tokens], k [hd, n_head_kv, n_tokens] -> (q/k norm) -> rope
//     (none on smollm3's every 4th layer)
//   (q * attn_scale: phi3, gemma2)
//   k, v rows -> SET_ROWS into the layer's cache at the batch's cells
//   attn(q, K cache [hd, n_head_kv, n_cells], V cache, mask, bounds; gemma2/3's
//        windowed layers have a mask and bounds of their own; gemma2: scores soft-capped)
//   (-> post-norm: gemma2/3)
//   -> Wo (* residual_scale: granite) -> + x
//   -> rms_norm -> down(act(gate x) * up x), act = silu, gelu (gemma2/3)
//   (-> post-norm: gemma2/3) (* residual_scale) -> + residual
// The last layer keeps only the rows whose logits are wanted (out_ids), as
// llama.cpp does, then output_norm and the output matrix give
// logits [n_vocab, n_outputs] (/ logit_scale: granite; soft-capped: gemma2).
//
// The attention always spans every cell of the cache (K/V views of n_cells
// rows, mask [n_cells, n_tokens]); each token's bound (one past its last
// visible cell) is an input, so the graph's shape depends on the batch only:
// one decode graph (and one captured device graph) serves the whole context.
//
// Every node and weight is named and tagged with its layer (tg_cb, as
// llama.cpp's cb(cur, name, il)): -1 for the input part (token embedding,
// rope cache), n_layer for the output part (output norm, output matrix).
#pragma once
#include "graph/graph.h"
#include "kv/kv_cache.h"
#include "model/model.h"

namespace tern {

struct forward_shape {
    uint32_t n_tokens;
    uint32_t n_outputs;
};

// The graph's inputs (filled before each compute) and its output.
struct forward_io {
    tern_tensor * tokens;   // I32 [n_tokens]
    tern_tensor * pos;      // I32 [n_tokens]
    tern_tensor * slots;    // I32 [n_tokens]  KV cells the batch writes
    tern_tensor * mask;     // F32 [n_cells, n_tokens] (with the window when every layer windows: phi3)
    tern_tensor * bounds;   // I32 [n_tokens] one past each token's last visible cell
    tern_tensor * mask_swa;   // gemma2 (some layers window): the windowed layers' mask, else NULL
    tern_tensor * bounds_swa; // and their bounds
    tern_tensor * out_ids;  // I32 [n_outputs] rows of the batch whose logits are kept
    tern_tensor * logits;   // F32 [n_vocab, n_outputs]
};

// A bound on the tensor headers a forward graph of a model with n_layer
// layers may take: only the sizing pass builds with it (the model reserves
// that much scratch from the header alone); contexts hold the exact count
// that pass measures. A graph over the bound fails with TERN_ERR_NO_MEMORY
// naming the pool ("tensor pool full"), never overruns.
int32_t forward_tensor_bound(uint32_t n_layer);

// Build the graph for one shape. The builder is reset first; the same model
// and shape kind always give the same tensor ids (the planner relies on it).
tern_status forward_build(const tern_model * m, const kv_cache * kv, forward_shape shape,
                          tern_graph_builder * gb, tern_graph * g, forward_io * io);

// The model's RoPE parameters (hyper-parameters and architecture); swa_layers:
// those of the windowed layers where they differ (gemma3, hparams_layer_rope_swa).
tern_rope_params forward_rope_params(const tern_model * m, bool swa_layers);
// The RoPE frequency factors this cache's contexts use (llama's rope_freqs, or
// phi3's long / short LongRoPE factors by a sequence's context length against
// rope.scaling.original_context_length), NULL: none.
const model_weight * forward_rope_factors(const tern_model * m, const kv_cache * kv);

}  // namespace tern
