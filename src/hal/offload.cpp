// Placement of layers and weights on devices (see offload.h).
#include "hal/offload.h"
#include "core/status.h"

#include <stdio.h>
#include <string.h>

namespace tern {
namespace hal {

tern_status place_layers(int32_t n_layer, int32_t n_gpu_layers, const float * split, int32_t n_devices, int8_t * layer_device) {
    for (int32_t il = 0; il <= n_layer; il++) layer_device[il] = HAL_HOST;
    if (n_devices == 0 || n_gpu_layers == 0 || n_layer <= 0) return TERN_OK;
    const int32_t n_off = n_gpu_layers < 0 || n_gpu_layers >= n_layer ? n_layer : n_gpu_layers;
    // Cumulative shares of the devices.
    float cum[TERN_MAX_DEVICES + 1];
    cum[0] = 0.0f;
    float total = 0.0f;
    for (int32_t d = 0; d < n_devices; d++) {
        const float w = split ? split[d] : 1.0f;
        if (!(w >= 0.0f) || w > 1e9f) return tern_fail(TERN_ERR_INVALID_ARG, "tensor split: proportion %d is %g (>= 0)", (int) d, (double) w);
        total += w;
    }
    if (!(total > 0.0f)) return tern_fail(TERN_ERR_INVALID_ARG, "tensor split: the proportions sum to 0");
    for (int32_t d = 0; d < n_devices; d++) cum[d + 1] = cum[d] + (split ? split[d] : 1.0f) / total;
    const int32_t first = n_layer - n_off;
    for (int32_t i = 0; i < n_off; i++) {
        // The middle of layer i's share of the run decides its device.
        const float at = ((float) i + 0.5f) / (float) n_off;
        int32_t d = 0;
        while (d + 1 < n_devices && at >= cum[d + 1]) d++;
        layer_device[first + i] = (int8_t) d;
    }
    layer_device[n_layer] = layer_device[n_layer - 1];
    return TERN_OK;
}

tern_status overrides_parse(const char * text, const hal_device * devices, int32_t n_devices, hal_override * out,
                            int32_t * n_out) {
    *n_out = 0;
    if (!text) return TERN_OK;
    for (const char * p = text; *p;) {
        const char * end = strchr(p, ';');
        const size_t len = end ? (size_t) (end - p) : strlen(p);
        if (len > 0) {
            // The last '=' splits: a pattern may hold '=' itself.
            const char * eq = NULL;
            for (const char * q = p; q < p + len; q++) if (*q == '=') eq = q;
            if (!eq || eq == p || eq == p + len - 1) {
                return tern_fail(TERN_ERR_INVALID_ARG, "tensor override '%.*s': not REGEX=DEVICE", (int) len, p);
            }
            if (*n_out >= HAL_MAX_OVERRIDES) return tern_fail(TERN_ERR_INVALID_ARG, "more than %d tensor overrides", HAL_MAX_OVERRIDES);
            hal_override * o = &out[*n_out];
            char err[160];
            if (re_compile(p, (size_t) (eq - p), &o->pattern, err, sizeof(err)) != 0) {
                return tern_fail(TERN_ERR_INVALID_ARG, "tensor override: %s", err);
            }
            const char * dev = eq + 1;
            const size_t dlen = (size_t) (p + len - dev);
            o->device = -2;
            if ((dlen == 3 && (memcmp(dev, "CPU", 3) == 0 || memcmp(dev, "cpu", 3) == 0))) o->device = HAL_HOST;
            for (int32_t d = 0; d < n_devices && o->device == -2; d++) {
                if (strlen(devices[d].name) == dlen && memcmp(devices[d].name, dev, dlen) == 0) o->device = (int8_t) d;
            }
            if (o->device == -2) {
                char names[160] = "CPU";
                size_t n = 3;
                for (int32_t d = 0; d < n_devices && n < sizeof(names) - 40; d++) {
                    n += (size_t) snprintf(names + n, sizeof(names) - n, ", %s", devices[d].name);
                }
                return tern_fail(TERN_ERR_INVALID_ARG, "tensor override '%.*s': no device '%.*s' in this model's (%s)", (int) len, p,
                                 (int) dlen, dev, names);
            }
            (*n_out)++;
        }
        p = end ? end + 1 : p + len;
    }
    return TERN_OK;
}

tern_status override_device(const hal_override * ov, int32_t n, const char * name, int8_t dflt, int8_t * out) {
    *out = dflt;
    for (int32_t i = 0; i < n; i++) {
        const int r = re_search(&ov[i].pattern, name);
        if (r < 0) return tern_fail(TERN_ERR_INVALID_ARG, "tensor override %d: matching '%s' takes too many steps", (int) i, name);
        if (r > 0) {
            *out = ov[i].device;
            return TERN_OK;
        }
    }
    return TERN_OK;
}

}  // namespace hal
}  // namespace tern
