// tern run's management of a long generation, llama-cli's way:
//   context shift  when the KV cache is full, keep the first n_keep tokens,
//                  drop half of the rest (seq_rm) and move the remainder back
//                  (seq_add): the keys are rotated by the K-shift, nothing
//                  is recomputed;
//   Self-Extend    grouped attention (ga_n, ga_w): positions beyond each
//                  window are divided by ga_n with seq_add / seq_div, exactly
//                  as llama.cpp's main example loops;
//   prompt cache   the KV state after the prompt saved to a file; a later run
//                  reuses the longest common token prefix and evaluates only
//                  the rest (nothing when the whole prompt matches: the saved
//                  state carries its last logits).
#pragma once
#include <stdint.h>
#include <vector>
#include "tern.h"

// Make room for one more token in sequence 0 by a context shift. *n_past is
// the next position; n_keep tokens from the start stay. Returns the tokens
// discarded (0: nothing could be discarded).
int32_t run_context_shift(tern_context * ctx, int32_t n_keep, int32_t * n_past);

// Self-Extend state and step: call before decoding at *n_past.
struct run_self_extend {
    int32_t n;  // group factor (1: off)
    int32_t w;  // window
    int32_t i;  // start of the next window to group
};
void run_self_extend_step(tern_context * ctx, run_self_extend * ga, int32_t * n_past);

// The positions run_self_extend_step leaves, computed without a context: the
// same loop applied to an array of positions (pos[k] = position of the k-th
// token), for the unit test.
void run_self_extend_positions(std::vector<int32_t> & pos, run_self_extend * ga, int32_t * n_past);

// Prompt cache: restore `path` (when it exists) and keep the longest prefix it
// shares with `prompt`; returns the tokens reused (0: nothing usable), and
// *logits_ready when the whole prompt matched and the saved logits are those
// of its last token. Problems are one note on stderr and a cold start.
int32_t run_prompt_cache_load(tern_context * ctx, const char * path, const std::vector<tern_token> & prompt,
                              bool * logits_ready);
bool run_prompt_cache_save(tern_context * ctx, const char * path, const std::vector<tern_token> & prompt);
// Before anything runs: the prompt cache path must be absent or a Tern state
// file (one that begins with the state magic). The model itself, any other
// file, a directory, FIFO or device is refused with one line on stderr
// (false): the cache is never written over something that is not a cache.
// tern_state_save_file checks the whole header again when it saves.
bool run_prompt_cache_check(const char * path, const char * model_path);
