// Are a buffer's numbers finite? F32/F16/BF16: every value; block formats:
// every block's scales (d, and m / dmin / s where the format has one), the
// only floats they hold. Used by check_tensors (model weights) and by state
// loading (K/V rows, logits). Scalar, no SIMD: a check, not a hot path.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"

namespace tern {

// bytes: whole values / blocks of `type` (a trailing partial block is not read).
bool tern_data_finite(tern_type type, const uint8_t * p, size_t bytes);

}  // namespace tern
