// Placement: which device runs each layer and holds each weight, decided once
// when a model loads (before the CPU repacks the weights it keeps), from the
// model parameters llama.cpp users know:
//
//   n_gpu_layers  the last N layers run on the devices (N < 0 or N >= n_layer:
//                 all of them); the output part (output norm and matrix, index
//                 n_layer) follows the last layer; the input part (the token
//                 embedding) stays on the host, as in llama.cpp.
//   tensor_split  proportions of the offloaded layers per device (llama.cpp's
//                 layer split): device d takes the contiguous run of layers whose
//                 share of the run, counted from its first layer, falls in d's
//                 cumulative range; NULL: even.
//   overrides     "REGEX=DEVICE;..." (-ot): a weight whose GGUF name matches
//                 (first pattern wins; DEVICE an instance name or CPU) goes there
//                 whatever its layer.
//
// Device indices are into the model's device table; -1 is the host (CPU).
#pragma once
#include <stdint.h>
#include "tern.h"
#include "hal/device.h"
#include "hal/regex.h"

namespace tern {
namespace hal {

#define HAL_HOST (-1)
#define HAL_MAX_OVERRIDES 16

struct hal_override {
    re_prog pattern;
    int8_t  device;   // HAL_HOST or a device index
};

// layer_device[0..n_layer]: the device of each layer and, at n_layer, of the output part.
tern_status place_layers(int32_t n_layer, int32_t n_gpu_layers, const float * split, int32_t n_devices, int8_t * layer_device);

// Parse "REGEX=DEVICE;..." against the model's devices (names[i], n devices).
tern_status overrides_parse(const char * text, const hal_device * devices, int32_t n_devices, hal_override * out,
                            int32_t * n_out);
// The device of the weight `name`: the first matching override's, else `dflt`.
// TERN_ERR_INVALID_ARG when a pattern's match runs out of steps.
tern_status override_device(const hal_override * ov, int32_t n, const char * name, int8_t dflt, int8_t * out);

}  // namespace hal
}  // namespace tern
