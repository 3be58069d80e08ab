// The model's side of placement: the devices it opened, where each layer runs
// (hal/offload.h decides, from n_gpu_layers, tensor_split and tensor
// overrides), and each device's weights buffer.
//
// Load order (api.cpp): bind the weights by name -> model_place (open the
// devices, decide every weight's device, obtain each device's weights buffer
// once, sized exactly; a weight placed on a device gets that buffer as its
// storage) -> the CPU repacks the weights it runs (model/repack.h) ->
// model_upload (each device weight copied from the file, in the file's
// layout; a file tensor two weights share is copied once per device).
//
// Held once (UMA): a device that can import host memory (caps.import_host)
// and a model mmap'd from one file: the device's weights buffer is the
// mapping itself, imported (buffer_import_host of the page-aligned span of
// the whole file, so each weight's offset in it is its offset in the file);
// nothing is copied at upload. Imported before the CPU repacks its own
// weights: the repack rewrites only rows the CPU runs, never a device's. An
// import the device refuses (alignment, size, a driver that cannot pin the
// pages) falls back to the copy.
//
// A token embedding tied to the output: the embedding (get_rows, the input
// part) stays on the host; the output matrix is its own weight, placed with
// the output part, so a device running the output holds a copy of those
// bytes, and the CPU then does not repack the embedding (its only reader
// there is get_rows).
//
// Without devices compiled in (TERN_DEVICES empty) nothing here opens or
// allocates anything: every weight is the host's, and a device list in the
// parameters is refused.
#pragma once
#include "tern.h"
#include "model/model.h"
#if TERN_WITH_HAL
#include "hal/device.h"
#endif

namespace tern {

#if TERN_WITH_HAL
struct model_devices {
    int32_t          n;                              // devices in use (0: the CPU runs everything)
    hal::hal_device  dev[TERN_MAX_DEVICES];
    int8_t *         layer_device;                   // [n_layer + 1], -1 the host; [n_layer]: the output part
    tern_buffer      weights[TERN_MAX_DEVICES];      // each device's weights (handle: its buffer)
    uint64_t         weight_bytes[TERN_MAX_DEVICES];
    bool             imported[TERN_MAX_DEVICES];     // the buffer is the mapped file, imported (UMA: held once)
    int32_t          n_layers_on[TERN_MAX_DEVICES];  // layers each device runs
    uint64_t         host_weight_bytes;
};
#endif

// Bytes of the model arena the device table takes (0 without devices).
size_t model_devices_size(uint32_t n_layer);
tern_status model_place(tern_model * m, const tern_model_params * p);
tern_status model_upload(tern_model * m);
// Release the devices' buffers and close the devices (safe without any).
void model_devices_close(tern_model * m);

}  // namespace tern
