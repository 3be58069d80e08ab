// Devices as the core holds them: the registry of device kinds (built in by
// TERN_DEVICES, or registered at run time with tern_hal_register) and an
// open instance ("sim0", "vulkan1") with its capabilities.
//
// Instance names are the kind's name and an index; a device spec is
// NAME[:PARAMS], PARAMS handed to the kind's open ("sim0:refuse=ATTN").
// "NAME" without an index means index 0.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "tern_hal.h"

namespace tern {
namespace hal {

struct hal_device {
    const tern_hal_device_desc * desc;
    void *                       dev;
    char                         name[32];   // "sim0"
    tern_hal_caps                caps;
};

// Open the instance a spec names (len bytes of spec; NUL-terminated not
// required). TERN_ERR_NOT_FOUND naming the kinds built in when no kind
// matches or the index is past what the kind has.
tern_status device_open(const char * spec, size_t len, hal_device * out);
void        device_close(hal_device * d);
// The kinds that offer themselves for -ngl without a device list (desc->implicit),
// every instance of them but software ones (caps.software: lavapipe), opened
// into out[0..n_max). Returns how many (0: none present).
int32_t     device_open_implicit(hal_device * out, int32_t n_max);
// Names of the kinds built in and registered ("sim vulkan"), for messages.
const char * device_kinds(void);

}  // namespace hal
}  // namespace tern
