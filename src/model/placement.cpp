// Placement of the model's layers and weights (see placement.h).
#include "model/placement.h"
#include "core/arena.h"
#include "core/log.h"
#include "core/status.h"
#include "tensor/types.h"

#include <inttypes.h>
#include <string.h>

#if TERN_WITH_HAL
#include "hal/offload.h"
#endif

namespace tern {

#if !TERN_WITH_HAL

size_t model_devices_size(uint32_t) { return 0; }

tern_status model_place(tern_model * m, const tern_model_params * p) {
    m->devices = NULL;
    if (p->devices && p->devices[0]) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "devices '%s' asked for, but this build has none (TERN_DEVICES)", p->devices);
    }
    if (p->tensor_overrides && p->tensor_overrides[0]) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "tensor overrides asked for, but this build has no devices (TERN_DEVICES)");
    }
    return TERN_OK;  // n_gpu_layers: nothing to offload to
}

tern_status model_upload(tern_model *) { return TERN_OK; }
void model_devices_close(tern_model *) {}

#else

using namespace hal;

// Imports cover whole pages of the mapping (its start is page-aligned; the
// smallest page size rounds its end: the mapping covers at least that).
const uint64_t kImportPage = 4096;

size_t model_devices_size(uint32_t n_layer) {
    return arena_padded(sizeof(model_devices)) + arena_padded((size_t) n_layer + 1);
}

namespace {

// Every weight of the model with the layer whose placement it follows: the
// input part (-1), layers 0..n_layer-1, the output part (n_layer).
template <typename F>
tern_status each_weight(tern_model * m, F && f) {
    const int32_t n_layer = (int32_t) m->hp.n_layer;
    TERN_TRY(f(&m->w.tok_embd, -1));
    TERN_TRY(f(&m->w.rope_freqs, -1));  // RoPE factors: read by the rope cache of the input part
    TERN_TRY(f(&m->w.rope_long, -1));
    TERN_TRY(f(&m->w.rope_short, -1));
    for (int32_t il = 0; il < n_layer; il++) {
        model_layer * l = &m->w.layers[il];
        model_weight * ws[] = { &l->attn_norm, &l->wq, &l->wk, &l->wv, &l->wo, &l->bq, &l->bk, &l->bv,
                                &l->q_norm, &l->k_norm, &l->ffn_norm, &l->ffn_gate, &l->ffn_up, &l->ffn_down,
                                &l->attn_post_norm, &l->ffn_post_norm };
        for (model_weight * w : ws) TERN_TRY(f(w, il));
    }
    TERN_TRY(f(&m->w.output_norm, n_layer));
    return f(&m->w.output, n_layer);
}

// A device weight's storage offset relative to its file tensor's start
// (st.offset - file_offset) is where that tensor's copy begins.
size_t copy_base(const model_weight & w) { return w.st.offset - w.file_offset; }

tern_status open_devices(model_devices * md, const tern_model_params * p) {
    md->n = 0;
    if (!p->devices || !p->devices[0]) {
        // -ngl without a list: the accelerators that offer themselves (never the sim).
        if (p->n_gpu_layers != 0) md->n = device_open_implicit(md->dev, TERN_MAX_DEVICES);
        return TERN_OK;
    }
    for (const char * s = p->devices; *s;) {
        const char * end = strchr(s, ',');
        const size_t len = end ? (size_t) (end - s) : strlen(s);
        if (len > 0) {
            if (md->n >= TERN_MAX_DEVICES) return tern_fail(TERN_ERR_INVALID_ARG, "more than %d devices", TERN_MAX_DEVICES);
            TERN_TRY(device_open(s, len, &md->dev[md->n]));
            for (int32_t d = 0; d < md->n; d++) {
                if (strcmp(md->dev[d].name, md->dev[md->n].name) == 0) {
                    device_close(&md->dev[md->n]);
                    return tern_fail(TERN_ERR_INVALID_ARG, "device %s named twice", md->dev[d].name);
                }
            }
            md->n++;
        }
        s = end ? end + 1 : s + len;
    }
    return TERN_OK;
}

}  // namespace

tern_status model_place(tern_model * m, const tern_model_params * p) {
    const int32_t n_layer = (int32_t) m->hp.n_layer;
    model_devices * md = (model_devices *) arena_calloc(&m->files.arena, sizeof(model_devices), TERN_MEM_MODEL_TABLES);
    if (!md) return tern_fail(TERN_ERR_INTERNAL, "model arena: no room for the device table");
    md->layer_device = (int8_t *) arena_alloc(&m->files.arena, (size_t) n_layer + 1, TERN_MEM_MODEL_TABLES);
    if (!md->layer_device) return tern_fail(TERN_ERR_INTERNAL, "model arena: no room for the layer placement");
    m->devices = md;
    TERN_TRY(open_devices(md, p));
    TERN_TRY(place_layers(n_layer, p->n_gpu_layers, p->tensor_split, md->n, md->layer_device));
    hal_override ov[HAL_MAX_OVERRIDES];
    int32_t n_ov = 0;
    TERN_TRY(overrides_parse(p->tensor_overrides, md->dev, md->n, ov, &n_ov));
    for (int32_t il = 0; il < n_layer; il++) if (md->layer_device[il] >= 0) md->n_layers_on[md->layer_device[il]]++;

    // Devices that hold the mapped file itself (see placement.h).
    tern_buffer * bufs = md->weights;
    const port_file_map & map = m->files.sources[0].map;
    const bool mapped = m->files.n_splits == 1 && strcmp(m->files.load_path, "mmap") == 0 && map.addr;
    const uint64_t span = mapped ? (map.size + kImportPage - 1) / kImportPage * kImportPage : 0;
    for (int32_t d = 0; d < md->n; d++) {
        const hal_device * dv = &md->dev[d];
        md->imported[d] = false;
        if (!mapped || !dv->caps.import_host || md->n_layers_on[d] + (md->layer_device[n_layer] == d) == 0) continue;
        tern_hal_buffer * hb = NULL;
        if (dv->desc->buffer_import_host(dv->dev, map.addr, span, &hb) != TERN_OK) {
            TERN_LOGI("%s: cannot import the mapped model (%s): weights are copied", dv->name, tern_last_error());
            tern_error_clear();
            continue;
        }
        md->imported[d] = true;
        bufs[d].handle = hb;
    }

    // Each weight's device; device weights get offsets in their device's
    // buffer, a file tensor already copied to that device is shared.
    uint64_t offset[TERN_MAX_DEVICES] = {0};
    TERN_TRY(each_weight(m, [&](model_weight * w, int32_t il) -> tern_status {
        if (!w->data) return TERN_OK;
        const int8_t layer_dev = il < 0 ? (int8_t) HAL_HOST : md->layer_device[il];
        int8_t dev = HAL_HOST;
        TERN_TRY(override_device(ov, n_ov, w->name, layer_dev, &dev));
        if (dev < 0) {
            md->host_weight_bytes += (uint64_t) tern_row_size(w->type, w->ne[0]) * (uint64_t) w->ne[1];
            return TERN_OK;
        }
        // Shared with a weight placed before? (phi3's fused rows, the same tensor twice)
        bool shared = false;
        each_weight(m, [&](model_weight * o, int32_t) -> tern_status {
            if (o == w) return TERN_ERR_CANCELLED;  // only those before w
            if (o->data && o->file_tensor == w->file_tensor && o->st.buffer == &bufs[dev]) {
                w->st.buffer = &bufs[dev];
                w->st.offset = copy_base(*o) + w->file_offset;
                shared = true;
                return TERN_ERR_CANCELLED;
            }
            return TERN_OK;
        });
        if (md->imported[dev]) {   // the file's own layout: the tensor's offset in the mapping
            const model_file_tensor * ft = &m->files.tensors[w->file_tensor];
            w->st.buffer = &bufs[dev];
            w->st.offset = (size_t) (ft->data - (const uint8_t *) map.addr) + w->file_offset;
            if (!shared) offset[dev] += ft->bytes;   // bytes of weights it runs (reported)
            return TERN_OK;
        }
        if (shared) return TERN_OK;
        const uint64_t align = md->dev[dev].caps.alignment;
        offset[dev] = (offset[dev] + align - 1) / align * align;
        w->st.buffer = &bufs[dev];
        w->st.offset = (size_t) offset[dev] + w->file_offset;
        offset[dev] += m->files.tensors[w->file_tensor].bytes;
        return TERN_OK;
    }));
    // Each device's weights buffer, once, exactly.
    for (int32_t d = 0; d < md->n; d++) {
        md->weight_bytes[d] = offset[d];
        bufs[d].host = NULL;
        bufs[d].size = md->imported[d] ? (size_t) span : (size_t) offset[d];
        bufs[d].device = d;
        bufs[d].usage = TERN_BUFFER_WEIGHTS;
        if (md->imported[d]) continue;
        bufs[d].handle = NULL;
        if (offset[d] == 0) continue;
        const hal_device * dv = &md->dev[d];
        tern_hal_buffer * hb = NULL;
        if (offset[d] > dv->caps.max_buffer_size) {
            return tern_fail(TERN_ERR_NO_MEMORY, "%s: %" PRIu64 " bytes of weights, its buffers hold at most %" PRIu64, dv->name,
                             offset[d], (uint64_t) dv->caps.max_buffer_size);
        }
        tern_status st = dv->desc->buffer_alloc(dv->dev, offset[d], TERN_HAL_USAGE_WEIGHTS, &hb);
        if (st != TERN_OK) {
            tern_error_prefix("%s: cannot hold %" PRIu64 " bytes of weights (%d layers): ", dv->name, offset[d], (int) md->n_layers_on[d]);
            return st;
        }
        bufs[d].handle = hb;
    }
    return TERN_OK;
}

tern_status model_upload(tern_model * m) {
    model_devices * md = m->devices;
    if (!md || md->n == 0) return TERN_OK;
    tern_buffer * bufs = md->weights;
    TERN_TRY(each_weight(m, [&](model_weight * w, int32_t) -> tern_status {
        if (!w->data || !w->st.buffer || w->st.buffer->device < 0) return TERN_OK;
        const int32_t d = w->st.buffer->device;
        if (md->imported[d]) return TERN_OK;   // the mapping itself: nothing to copy
        // Copied once: by the first weight (in the same order) that uses this copy.
        bool first = true;
        each_weight(m, [&](model_weight * o, int32_t) -> tern_status {
            if (o == w) return TERN_ERR_CANCELLED;
            if (o->data && o->st.buffer == &bufs[d] && copy_base(*o) == copy_base(*w)) {
                first = false;
                return TERN_ERR_CANCELLED;
            }
            return TERN_OK;
        });
        if (!first) return TERN_OK;
        const model_file_tensor * ft = &m->files.tensors[w->file_tensor];
        const hal_device * dv = &md->dev[d];
        tern_status st = dv->desc->copy_h2d(dv->dev, (tern_hal_buffer *) bufs[d].handle, copy_base(*w), ft->data, ft->bytes);
        if (st != TERN_OK) tern_error_prefix("%s: uploading '%s': ", dv->name, ft->name);
        return st;
    }));
    for (int32_t d = 0; d < md->n; d++) {
        const hal_device * dv = &md->dev[d];
        tern_status st = dv->desc->synchronize(dv->dev);
        if (st != TERN_OK) {
            tern_error_prefix("%s: uploading the weights: ", dv->name);
            return st;
        }
    }
    return TERN_OK;
}

void model_devices_close(tern_model * m) {
    model_devices * md = m->devices;
    if (!md) return;
    for (int32_t d = 0; d < md->n; d++) {
        hal_device * dv = &md->dev[d];
        if (md->weights[d].handle) dv->desc->buffer_free(dv->dev, (tern_hal_buffer *) md->weights[d].handle);
        md->weights[d].handle = NULL;
        device_close(dv);
    }
    md->n = 0;
}

#endif

}  // namespace tern
