// A model's fingerprint: what a saved state (context/state.cpp) carries to be
// refused by any other model, including one of the same architecture and
// sizes with other weights (a base model and its fine-tune).
//
// 64-bit FNV-1a over, in this order:
//   the architecture name;
//   every hyper-parameter (model_hparams, field by field: widths, heads,
//   rope base/scale/kind, eps, the sliding window, the training context);
//   every tensor of the file in file order: its name, type, shape, and data
//   bytes in the file's layout: all of them for a tensor of at most
//   FINGERPRINT_WHOLE bytes, else FINGERPRINT_RUNS runs of FINGERPRINT_RUN
//   bytes at evenly spaced offsets (the first at the start, the last ending
//   at the end).
//
// Why sampled: a state is saved and loaded often, and a multi-GB file must
// not be read for it. A real fine-tune changes every value of the tensors it
// trains, so 16 KiB spread over each large tensor tells it apart; two files
// that differ only in bytes between the samples of large tensors are not told
// apart (the header of tern.h says so). Cost: at most 16 KiB per tensor
// (3 MB hashed, ~12 000 pages touched for a 7B model's 291 tensors).
//
// When: the bytes must be the file's. A load that rewrites weights in place
// (the CPU repack) computes it first, from bytes it is about to read anyway;
// any other load defers it to the first state call (so `tern info`, which
// repacks nothing, touches no weight). A device upload copies weights and
// leaves the host's bytes as they were. The first computation is kept
// (atomic builtins: contexts of one model on several threads).
#pragma once
#include <stdint.h>
#include "model/model.h"

namespace tern {

#define FINGERPRINT_WHOLE ((uint64_t) 64 * 1024)
#define FINGERPRINT_RUNS  64
#define FINGERPRINT_RUN   256

// The fingerprint (computed now when not yet known).
uint64_t model_fingerprint(const tern_model * m);
// Compute and keep it now: before the load changes any weight's bytes.
void model_fingerprint_at_load(tern_model * m);

}  // namespace tern
