// Storage identity: where a tensor's bytes live, as buffer + offset.
//
// A buffer is one block of memory obtained once: a model file's mapping or
// read buffer (weights), a region of a context's arena (KV cache,
// activations), or memory of an accelerator (hal/: weights, KV cache,
// activations, staging). Graph code, the planner and the scheduler name bytes
// only as (buffer, offset); a host address exists only where the host can
// address the buffer (`host`): host memory and host-visible device memory.
// Bytes in a device's own memory have no host address at all (Vulkan has no
// device pointers either), and are moved only through the device's copies.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tern {

enum tern_buffer_usage {
    TERN_BUFFER_WEIGHTS = 0,
    TERN_BUFFER_KV,
    TERN_BUFFER_ACTIVATIONS,
    TERN_BUFFER_STAGING,     // host-visible memory both sides read and write (split inputs and outputs)
    TERN_BUFFER_USAGE_COUNT
};

// Device index of host memory (the CPU runs on it).
#define TERN_DEVICE_HOST (-1)

struct tern_buffer {
    uint8_t *   host;     // host address of byte 0, or NULL (device memory the host cannot address)
    size_t      size;
    int32_t     device;   // TERN_DEVICE_HOST or an index in the model's device table (hal/)
    uint32_t    usage;    // tern_buffer_usage
    void *      handle;   // the device's buffer (tern_hal_buffer *); NULL for host memory
};

struct tern_storage {
    tern_buffer * buffer;  // NULL: nothing (an absent optional weight)
    size_t        offset;
};

static inline tern_buffer tern_host_buffer(void * host, size_t size, uint32_t usage) {
    tern_buffer b = { (uint8_t *) host, size, TERN_DEVICE_HOST, usage, NULL };
    return b;
}

// Host address of the storage's first byte, or NULL (no buffer, or device-only memory).
static inline void * tern_storage_host(tern_storage s) {
    return s.buffer && s.buffer->host ? (void *) (s.buffer->host + s.offset) : NULL;
}

static inline bool tern_storage_on_host(tern_storage s) { return s.buffer && s.buffer->device == TERN_DEVICE_HOST; }

static inline tern_storage tern_storage_at(tern_storage s, size_t bytes) {
    s.offset += bytes;
    return s;
}

}  // namespace tern
