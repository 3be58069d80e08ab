// The Vulkan device's own state, shared by its files (vk_device.cpp: instance,
// memory, buffers; vk_stream.cpp: recording, barriers, submission, capture;
// vk_ops.cpp: pipelines and dispatches). See vk_device.h.
#pragma once
#include <stdint.h>
#include "tern_hal.h"
#include "hal/vulkan/vk_api.h"
#include "hal/vulkan/vk_shaders.h"

struct tern_hal_buffer {
    VkBuffer         buf;
    VkDeviceMemory   mem;
    uint64_t         size;       // asked for
    uint64_t         alloc;      // the VkBuffer's size (rounded up to 16)
    uint8_t *        host;       // mapped address, or NULL (device-local)
    int32_t          usage;
    bool             imported;   // host memory imported (not the device's)
    tern_hal_buffer * next;      // the device's list (host address lookups)
};

struct tern_hal_event {
    uint64_t serial;   // the submission that completes the work recorded before it
};

namespace tern {
namespace hal {

const int32_t VK_FRAMES = 3;         // eager command buffers in rotation
const int32_t VK_FRAME_SETS = 1024;  // descriptor sets of one eager command buffer
const int32_t VK_GRAPHS = 16;        // captured graphs at once (the core keeps 12 by default)
const int32_t VK_GRAPH_SETS = 2048;  // dispatches one captured graph may hold
const int32_t VK_MAX_ACCESS = 64;    // accesses tracked since the last barrier
const int32_t VK_BINDINGS = 6;       // dst + 5 sources
const uint32_t VK_PUSH_WORDS = 32;   // 128 bytes, the guaranteed minimum

// Bytes a recorded command reads or writes (a binding's range, a copy's side).
struct vk_access {
    VkBuffer buf;
    uint64_t off, size;
    bool     write;
    bool     transfer;   // copy (else shader)
};

// A command buffer with its descriptor pool and fence: an eager frame or a
// captured graph.
struct vk_cmd {
    VkCommandBuffer  cmd;
    VkDescriptorPool pool;
    VkFence          fence;
    int32_t          max_sets, n_sets;
    bool             open;        // recording
    bool             has_work;    // commands recorded since it was begun
    bool             pending;     // submitted, fence not yet seen signaled
    uint64_t         serial;      // its last submission
    bool             in_use;      // graphs: held by the core
    tern_hal_counters rec;        // graphs: the launches and copies it holds (added at each replay)
    // the profile parameter (eager frames only): a timestamp after the frame's
    // first barrier and after each dispatch, and each dispatch's shader
    VkQueryPool      queries;
    int32_t          n_timed;
    int16_t          timed_shader[VK_FRAME_SETS];
    // accesses since the last barrier in this command buffer
    vk_access        acc[VK_MAX_ACCESS];
    int32_t          n_acc;
};

struct vk_device {
    vk_fns           f;
    int32_t          index;
    char             desc[400];
    // instance and device
    VkInstance       instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice         device;
    VkQueue          queue;
    uint32_t         queue_family;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem_props;
    int32_t          type_device;    // memory type for weights, KV, activations
    int32_t          type_host;      // host-visible type for staging and the ring
    bool             uma;
    bool             has_import;     // VK_EXT_external_memory_host enabled
    uint64_t         import_align;   // minImportedHostPointerAlignment
    uint64_t         max_alloc, max_binding, heap_size, used;
    uint64_t         bind_align;     // minStorageBufferOffsetAlignment
    bool             fp16_math, int8_math, int_dot, storage8;
    bool             use_int_dot;    // int_dot enabled and taken (the no_int_dot parameter: not)
    uint32_t         subgroup_size;
    bool             capture_ok;
    bool             refuse[32];     // ops supports_op refuses (the refuse= parameter: CPU fallback)
    // pipelines
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline       pipe[VKS_COUNT];
    // commands
    VkCommandPool    cmd_pool;
    vk_cmd           frames[VK_FRAMES];
    int32_t          frame;          // the frame being recorded into (or next)
    vk_cmd           graphs[VK_GRAPHS];
    vk_cmd *         capturing;      // the graph being recorded, or NULL
    bool             capture_failed; // the current capture cannot be kept
    uint64_t         serial;         // submissions so far
    VkFence          last_fence;     // of the last submission
    bool             last_done;      // ... seen signaled
    // memory
    tern_hal_buffer * buffers;
    tern_hal_buffer * ring;          // host-visible: host bytes in transit
    uint64_t         ring_head;
    tern_hal_buffer * dummy;         // bound to absent sources
    // errors: the first failure since the last synchronize
    tern_status      error;
    char             error_msg[300];
    // counts
    tern_hal_counters counters;
    // the profile parameter: GPU time per shader (timestamps between dispatches), logged at close
    bool             profile;
    double           prof_ns[VKS_COUNT];
    uint64_t         prof_n[VKS_COUNT];
};

// vk_device.cpp
tern_status vk_buffer_new(vk_device * d, uint64_t size, bool host, tern_hal_buffer ** out);
void        vk_buffer_delete(vk_device * d, tern_hal_buffer * b);
// The buffer holding host address p (a mapped buffer of this device), or NULL.
tern_hal_buffer * vk_host_buffer(vk_device * d, const void * p, uint64_t size);
tern_status vk_check(vk_device * d, VkResult r, const char * what);

// vk_stream.cpp
tern_status vk_stream_init(vk_device * d);
void        vk_stream_free(vk_device * d);
// The command buffer calls record into (the capture's, or the current eager frame, begun on demand).
tern_status vk_recorder(vk_device * d, vk_cmd ** out);
// Before a command touching these bytes: a barrier when it conflicts with one since the last.
void        vk_hazard(vk_device * d, vk_cmd * c, const vk_access * a, int32_t n);
tern_status vk_alloc_set(vk_device * d, vk_cmd * c, VkDescriptorSet * out);
tern_status vk_flush(vk_device * d);           // submit the eager frame if it has work
tern_status vk_wait_all(vk_device * d);        // flush, then wait for every submission
bool        vk_idle(vk_device * d);            // nothing recorded unsubmitted, nothing in flight
tern_status vk_copy_h2d(vk_device * d, tern_hal_buffer * dst, uint64_t off, const void * src, uint64_t size);
tern_status vk_copy_d2h(vk_device * d, void * dst, tern_hal_buffer * src, uint64_t off, uint64_t size);
tern_status vk_copy_d2d(vk_device * d, tern_hal_buffer * dst, uint64_t doff, tern_hal_buffer * src, uint64_t soff, uint64_t size);
tern_status vk_synchronize(vk_device * d);
tern_status vk_event_record(vk_device * d, tern_hal_event * e);
tern_status vk_event_wait(vk_device * d, tern_hal_event * e);
tern_status vk_capture_begin(vk_device * d);
tern_status vk_capture_end(vk_device * d, tern_hal_graph ** out);
tern_status vk_replay(vk_device * d, tern_hal_graph * g);
void        vk_graph_release(vk_device * d, tern_hal_graph * g);
// Record a device failure (kept until the next synchronize reports it).
void        vk_fail(vk_device * d, tern_status st, const char * msg);
// The profile parameter: after a dispatch recorded into an eager frame, its timestamp.
void        vk_profile_mark(vk_device * d, vk_cmd * c, int32_t shader);
// Log the GPU time per shader (every frame's timestamps read; the device idle).
void        vk_profile_report(vk_device * d);

// vk_ops.cpp
int         vk_supports_op(vk_device * d, const tern_hal_op_desc * op);
tern_status vk_prepare(vk_device * d, const tern_hal_op_desc * op);
tern_status vk_launch(vk_device * d, const tern_hal_op_desc * op);
void        vk_pipelines_free(vk_device * d);

}  // namespace hal
}  // namespace tern
