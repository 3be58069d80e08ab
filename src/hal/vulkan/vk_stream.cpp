// Recording, barriers, submission and capture (see vk_device.h).
//
// Every command buffer, eager frame or captured graph, starts with a barrier
// that orders it after everything submitted before it (compute and transfer
// writes, host writes -> compute and transfer access) and ends with one that
// makes its writes visible to the host. Inside it, vk_hazard keeps the byte
// ranges touched since the last barrier and puts one in only before a command
// that conflicts with them: it reads what one wrote (RAW), writes what one
// read (WAR) or wrote (WAW). Independent dispatches (the q, k and v
// projections of one input) thus run back to back.
//
// Eager work collects in the current frame; the frame is submitted when the
// core synchronizes or waits for an event, before a replay, and when its
// descriptor pool fills (three frames rotate, each waited for before reuse).
// Host bytes a copy reads or writes go straight to or from a mapped buffer of
// the device when they lie in one (the core's staging buffer); other host
// memory goes through the ring, a host-visible buffer the device owns.
#include "hal/vulkan/vk_internal.h"
#include "core/log.h"
#include "core/status.h"
#include "port.h"

#include <stdio.h>
#include <string.h>

namespace tern {
namespace hal {

namespace {

const VkPipelineStageFlags kWork = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

void barrier(vk_device * d, VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
             VkAccessFlags dst_access) {
    VkMemoryBarrier mb = {};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    d->f.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

tern_status cmd_create(vk_device * d, vk_cmd * c, int32_t max_sets) {
    vk_fns * f = &d->f;
    memset((void *) c, 0, sizeof(*c));
    VkCommandBufferAllocateInfo ai = {};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = d->cmd_pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    TERN_TRY(vk_check(d, f->vkAllocateCommandBuffers(d->device, &ai, &c->cmd), "vkAllocateCommandBuffers"));
    VkFenceCreateInfo fi = {};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    TERN_TRY(vk_check(d, f->vkCreateFence(d->device, &fi, NULL, &c->fence), "vkCreateFence"));
    VkDescriptorPoolSize size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t) (max_sets * VK_BINDINGS) };
    VkDescriptorPoolCreateInfo pi = {};
    pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pi.maxSets = (uint32_t) max_sets;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    TERN_TRY(vk_check(d, f->vkCreateDescriptorPool(d->device, &pi, NULL, &c->pool), "vkCreateDescriptorPool"));
    c->max_sets = max_sets;
    if (d->profile && max_sets == VK_FRAME_SETS) {   // an eager frame: its timestamps
        VkQueryPoolCreateInfo qi = {};
        qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = VK_FRAME_SETS + 1;
        TERN_TRY(vk_check(d, f->vkCreateQueryPool(d->device, &qi, NULL, &c->queries), "vkCreateQueryPool"));
    }
    return TERN_OK;
}

// The profile: a finished frame's timestamps into the per-shader sums.
void profile_collect(vk_device * d, vk_cmd * c) {
    if (!c->queries || c->n_timed == 0) return;
    uint64_t ts[VK_FRAME_SETS + 1];
    const VkResult r = d->f.vkGetQueryPoolResults(d->device, c->queries, 0, (uint32_t) c->n_timed + 1, sizeof(ts), ts,
                                                  sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
    if (r == VK_SUCCESS) {
        const double period = d->props.limits.timestampPeriod;   // ns a tick
        for (int32_t i = 0; i < c->n_timed; i++) {
            const int32_t s = c->timed_shader[i];
            d->prof_ns[s] += (double) (ts[i + 1] - ts[i]) * period;
            d->prof_n[s]++;
        }
    }
    c->n_timed = 0;
}

void cmd_destroy(vk_device * d, vk_cmd * c) {
    vk_fns * f = &d->f;
    if (c->pool) f->vkDestroyDescriptorPool(d->device, c->pool, NULL);
    if (c->fence) f->vkDestroyFence(d->device, c->fence, NULL);
    if (c->queries) f->vkDestroyQueryPool(d->device, c->queries, NULL);
    c->queries = VK_NULL_HANDLE;
    c->pool = VK_NULL_HANDLE;
    c->fence = VK_NULL_HANDLE;
}

tern_status cmd_wait(vk_device * d, vk_cmd * c) {
    if (!c->pending) return TERN_OK;
    const VkResult r = d->f.vkWaitForFences(d->device, 1, &c->fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) return vk_check(d, r, "vkWaitForFences");
    c->pending = false;
    if (c->serial == d->serial) d->last_done = true;
    return TERN_OK;
}

tern_status cmd_begin(vk_device * d, vk_cmd * c, bool reusable) {
    vk_fns * f = &d->f;
    TERN_TRY(cmd_wait(d, c));
    profile_collect(d, c);
    TERN_TRY(vk_check(d, f->vkResetCommandBuffer(c->cmd, 0), "vkResetCommandBuffer"));
    TERN_TRY(vk_check(d, f->vkResetDescriptorPool(d->device, c->pool, 0), "vkResetDescriptorPool"));
    VkCommandBufferBeginInfo bi = {};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    TERN_TRY(vk_check(d, f->vkBeginCommandBuffer(c->cmd, &bi), "vkBeginCommandBuffer"));
    // Ordered after every earlier submission and the host's writes.
    barrier(d, c->cmd, kWork | VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT, kWork,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    if (c->queries) {
        f->vkCmdResetQueryPool(c->cmd, c->queries, 0, VK_FRAME_SETS + 1);
        f->vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries, 0);
    }
    c->n_timed = 0;
    c->n_sets = 0;
    c->n_acc = 0;
    c->open = true;
    c->has_work = false;
    memset(&c->rec, 0, sizeof(c->rec));
    return TERN_OK;
}

tern_status cmd_end(vk_device * d, vk_cmd * c) {
    barrier(d, c->cmd, kWork, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    c->open = false;
    return vk_check(d, d->f.vkEndCommandBuffer(c->cmd), "vkEndCommandBuffer");
}

tern_status cmd_submit(vk_device * d, vk_cmd * c) {
    vk_fns * f = &d->f;
    TERN_TRY(cmd_wait(d, c));
    TERN_TRY(vk_check(d, f->vkResetFences(d->device, 1, &c->fence), "vkResetFences"));
    VkSubmitInfo si = {};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &c->cmd;
    TERN_TRY(vk_check(d, f->vkQueueSubmit(d->queue, 1, &si, c->fence), "vkQueueSubmit"));
    d->counters.submissions++;
    c->pending = true;
    c->serial = ++d->serial;
    d->last_fence = c->fence;
    d->last_done = false;
    return TERN_OK;
}

bool overlap(const vk_access & a, const vk_access & b) {
    return a.buf == b.buf && a.off < b.off + b.size && b.off < a.off + a.size;
}

// A copy recorded into c, its hazards resolved.
void record_copy(vk_device * d, vk_cmd * c, VkBuffer src, uint64_t soff, VkBuffer dst, uint64_t doff, uint64_t size) {
    const vk_access acc[2] = { { src, soff, size, false, true }, { dst, doff, size, true, true } };
    vk_hazard(d, c, acc, 2);
    VkBufferCopy region = { soff, doff, size };
    d->f.vkCmdCopyBuffer(c->cmd, src, dst, 1, &region);
    c->has_work = true;
}

tern_status check_range(vk_device * d, const tern_hal_buffer * b, uint64_t off, uint64_t size, const char * what) {
    if (!b || off > b->size || size > b->size - off) {
        return tern_hal_error(TERN_ERR_INTERNAL, "vulkan%d: %s of %llu bytes at %llu outside a buffer of %llu", (int) d->index, what,
                              (unsigned long long) size, (unsigned long long) off, (unsigned long long) (b ? b->size : 0));
    }
    return TERN_OK;
}

// Capture: a copy from or to host memory outside the device's mapped buffers
// cannot be replayed (the core refills its staging buffer, nothing else).
bool capture_host(vk_device * d, const void * host, uint64_t size, tern_hal_buffer ** hb) {
    *hb = vk_host_buffer(d, host, size);
    if (!*hb) d->capture_failed = true;
    return *hb != NULL;
}

}  // namespace

void vk_fail(vk_device * d, tern_status st, const char * msg) {
    if (d->error != TERN_OK) return;
    d->error = st;
    snprintf(d->error_msg, sizeof(d->error_msg), "%s", msg);
}

tern_status vk_stream_init(vk_device * d) {
    VkCommandPoolCreateInfo ci = {};
    ci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = d->queue_family;
    TERN_TRY(vk_check(d, d->f.vkCreateCommandPool(d->device, &ci, NULL, &d->cmd_pool), "vkCreateCommandPool"));
    for (int32_t i = 0; i < VK_FRAMES; i++) TERN_TRY(cmd_create(d, &d->frames[i], VK_FRAME_SETS));
    d->last_done = true;
    return TERN_OK;
}

void vk_stream_free(vk_device * d) {
    if (!d->cmd_pool) return;
    for (int32_t i = 0; i < VK_FRAMES; i++) cmd_destroy(d, &d->frames[i]);
    for (int32_t i = 0; i < VK_GRAPHS; i++) cmd_destroy(d, &d->graphs[i]);
    d->f.vkDestroyCommandPool(d->device, d->cmd_pool, NULL);   // frees the command buffers
    d->cmd_pool = VK_NULL_HANDLE;
}

tern_status vk_recorder(vk_device * d, vk_cmd ** out) {
    *out = NULL;
    if (d->capturing || d->capture_failed) {
        *out = d->capture_failed ? NULL : d->capturing;   // NULL: a failed capture records nothing
        return TERN_OK;
    }
    vk_cmd * c = &d->frames[d->frame];
    if (c->open && c->n_sets >= c->max_sets) {   // full: submit it, go on in the next frame
        TERN_TRY(vk_flush(d));
        c = &d->frames[d->frame];
    }
    if (!c->open) TERN_TRY(cmd_begin(d, c, false));
    *out = c;
    return TERN_OK;
}

void vk_hazard(vk_device * d, vk_cmd * c, const vk_access * a, int32_t n) {
    bool conflict = c->n_acc + n > VK_MAX_ACCESS;
    for (int32_t i = 0; i < n && !conflict; i++) {
        for (int32_t j = 0; j < c->n_acc && !conflict; j++) {
            conflict = (a[i].write || c->acc[j].write) && overlap(a[i], c->acc[j]);
        }
    }
    if (conflict) {
        VkPipelineStageFlags src = 0, dst = 0;
        VkAccessFlags src_access = 0, dst_access = 0;
        for (int32_t j = 0; j < c->n_acc; j++) {
            src |= c->acc[j].transfer ? VK_PIPELINE_STAGE_TRANSFER_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
            if (c->acc[j].write) src_access |= c->acc[j].transfer ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_SHADER_WRITE_BIT;
        }
        for (int32_t i = 0; i < n; i++) {
            dst |= a[i].transfer ? VK_PIPELINE_STAGE_TRANSFER_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
            dst_access |= a[i].transfer ? (a[i].write ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT)
                                        : (a[i].write ? VK_ACCESS_SHADER_WRITE_BIT : VK_ACCESS_SHADER_READ_BIT);
        }
        if (!src) src = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
        barrier(d, c->cmd, src, src_access, dst, dst_access);
        c->n_acc = 0;
    }
    for (int32_t i = 0; i < n && c->n_acc < VK_MAX_ACCESS; i++) c->acc[c->n_acc++] = a[i];
}

tern_status vk_alloc_set(vk_device * d, vk_cmd * c, VkDescriptorSet * out) {
    VkDescriptorSetAllocateInfo ai = {};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = c->pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &d->dsl;
    TERN_TRY(vk_check(d, d->f.vkAllocateDescriptorSets(d->device, &ai, out), "vkAllocateDescriptorSets"));
    c->n_sets++;
    return TERN_OK;
}

tern_status vk_flush(vk_device * d) {
    vk_cmd * c = &d->frames[d->frame];
    if (!c->open || !c->has_work) return TERN_OK;
    TERN_TRY(cmd_end(d, c));
    TERN_TRY(cmd_submit(d, c));
    d->frame = (d->frame + 1) % VK_FRAMES;
    return TERN_OK;
}

tern_status vk_wait_all(vk_device * d) {
    if (!d->cmd_pool) return TERN_OK;
    TERN_TRY(vk_flush(d));
    if (!d->last_done && d->last_fence) {
        const VkResult r = d->f.vkWaitForFences(d->device, 1, &d->last_fence, VK_TRUE, UINT64_MAX);
        if (r != VK_SUCCESS) return vk_check(d, r, "vkWaitForFences");
    }
    // The last submission's fence covers every earlier one (submission order).
    d->last_done = true;
    for (int32_t i = 0; i < VK_FRAMES; i++) d->frames[i].pending = false;
    for (int32_t i = 0; i < VK_GRAPHS; i++) d->graphs[i].pending = false;
    d->ring_head = 0;
    return TERN_OK;
}

void vk_profile_mark(vk_device * d, vk_cmd * c, int32_t shader) {
    if (!c->queries || c->n_timed >= VK_FRAME_SETS) return;
    d->f.vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries, (uint32_t) c->n_timed + 1);
    c->timed_shader[c->n_timed++] = (int16_t) shader;
}

void vk_profile_report(vk_device * d) {
    if (!d->profile) return;
    for (int32_t i = 0; i < VK_FRAMES; i++) profile_collect(d, &d->frames[i]);
    double total = 0;
    for (int32_t i = 0; i < VKS_COUNT; i++) total += d->prof_ns[i];
    tern_log_write(TERN_LOG_WARN, "vulkan profile: %.3f ms of GPU time between dispatches, by shader:\n", total * 1e-6);
    bool done[VKS_COUNT] = {};
    for (;;) {   // largest first
        int32_t best = -1;
        for (int32_t i = 0; i < VKS_COUNT; i++) {
            if (!done[i] && d->prof_n[i] && (best < 0 || d->prof_ns[i] > d->prof_ns[best])) best = i;
        }
        if (best < 0) break;
        done[best] = true;
        tern_log_write(TERN_LOG_WARN, "vulkan profile: %-24s %10.3f ms %5.1f%% %8llu dispatches %9.2f us each\n",
                       vk_spirv_table[best].name, d->prof_ns[best] * 1e-6, total > 0 ? 100.0 * d->prof_ns[best] / total : 0.0,
                       (unsigned long long) d->prof_n[best], d->prof_ns[best] * 1e-3 / (double) d->prof_n[best]);
    }
}

bool vk_idle(vk_device * d) {
    const vk_cmd & c = d->frames[d->frame];
    if (c.open && c.has_work) return false;
    if (!d->last_done && d->f.vkGetFenceStatus(d->device, d->last_fence) == VK_SUCCESS) {
        d->last_done = true;
        for (int32_t i = 0; i < VK_FRAMES; i++) d->frames[i].pending = false;
        for (int32_t i = 0; i < VK_GRAPHS; i++) d->graphs[i].pending = false;
        d->ring_head = 0;
    }
    return d->last_done;
}

tern_status vk_copy_h2d(vk_device * d, tern_hal_buffer * dst, uint64_t off, const void * src, uint64_t size) {
    TERN_TRY(check_range(d, dst, off, size, "copy_h2d"));
    if (size == 0) return TERN_OK;
    vk_cmd * c = NULL;
    tern_hal_buffer * hb = NULL;
    if (d->capturing || d->capture_failed) {
        if (!capture_host(d, src, size, &hb) || !d->capturing) return TERN_OK;
        record_copy(d, d->capturing, hb->buf, (uint64_t) ((const uint8_t *) src - hb->host), dst->buf, off, size);
        d->capturing->rec.copies_h2d++;
        d->capturing->rec.bytes_h2d += size;
        return TERN_OK;
    }
    d->counters.copies_h2d++;
    d->counters.bytes_h2d += size;
    if (dst->host && !dst->imported && vk_idle(d)) {   // UMA, nothing in flight: the host writes it
        memcpy(dst->host + off, src, size);
        return TERN_OK;
    }
    hb = vk_host_buffer(d, src, size);
    if (hb) {
        TERN_TRY(vk_recorder(d, &c));
        record_copy(d, c, hb->buf, (uint64_t) ((const uint8_t *) src - hb->host), dst->buf, off, size);
        return TERN_OK;
    }
    // Through the ring, a slice at a time.
    const uint8_t * s = (const uint8_t *) src;
    while (size > 0) {
        const uint64_t n = size < d->ring->size ? size : d->ring->size;
        if (d->ring_head + n > d->ring->size) TERN_TRY(vk_wait_all(d));
        memcpy(d->ring->host + d->ring_head, s, n);
        TERN_TRY(vk_recorder(d, &c));
        record_copy(d, c, d->ring->buf, d->ring_head, dst->buf, off, n);
        d->ring_head = (d->ring_head + n + 15) / 16 * 16;
        s += n;
        off += n;
        size -= n;
    }
    return TERN_OK;
}

tern_status vk_copy_d2h(vk_device * d, void * dst, tern_hal_buffer * src, uint64_t off, uint64_t size) {
    TERN_TRY(check_range(d, src, off, size, "copy_d2h"));
    if (size == 0) return TERN_OK;
    vk_cmd * c = NULL;
    tern_hal_buffer * hb = NULL;
    if (d->capturing || d->capture_failed) {
        if (!capture_host(d, dst, size, &hb) || !d->capturing) return TERN_OK;
        record_copy(d, d->capturing, src->buf, off, hb->buf, (uint64_t) ((uint8_t *) dst - hb->host), size);
        d->capturing->rec.copies_d2h++;
        d->capturing->rec.bytes_d2h += size;
        return TERN_OK;
    }
    d->counters.copies_d2h++;
    d->counters.bytes_d2h += size;
    hb = vk_host_buffer(d, dst, size);
    if (hb) {   // into a mapped buffer (the staging buffer): stream-ordered
        TERN_TRY(vk_recorder(d, &c));
        record_copy(d, c, src->buf, off, hb->buf, (uint64_t) ((uint8_t *) dst - hb->host), size);
        return TERN_OK;
    }
    // Plain host memory: done now (after the work before it).
    TERN_TRY(vk_wait_all(d));
    if (src->host) {
        memcpy(dst, src->host + off, size);
        return TERN_OK;
    }
    uint8_t * p = (uint8_t *) dst;
    while (size > 0) {
        const uint64_t n = size < d->ring->size ? size : d->ring->size;
        TERN_TRY(vk_recorder(d, &c));
        record_copy(d, c, src->buf, off, d->ring->buf, 0, n);
        TERN_TRY(vk_wait_all(d));
        memcpy(p, d->ring->host, n);
        p += n;
        off += n;
        size -= n;
    }
    return TERN_OK;
}

tern_status vk_copy_d2d(vk_device * d, tern_hal_buffer * dst, uint64_t doff, tern_hal_buffer * src, uint64_t soff, uint64_t size) {
    TERN_TRY(check_range(d, dst, doff, size, "copy_d2d"));
    TERN_TRY(check_range(d, src, soff, size, "copy_d2d"));
    if (size == 0) return TERN_OK;
    vk_cmd * c = NULL;
    TERN_TRY(vk_recorder(d, &c));
    if (!c) return TERN_OK;
    tern_hal_counters * n = d->capturing ? &d->capturing->rec : &d->counters;
    n->copies_d2d++;
    n->bytes_d2d += size;
    record_copy(d, c, src->buf, soff, dst->buf, doff, size);
    return TERN_OK;
}

tern_status vk_synchronize(vk_device * d) {
    const tern_status st = vk_wait_all(d);
    if (st != TERN_OK) return st;
    if (d->error == TERN_OK) return TERN_OK;
    const tern_status e = d->error;
    d->error = TERN_OK;
    return tern_hal_error(e, "%s", d->error_msg);
}

tern_status vk_event_record(vk_device * d, tern_hal_event * e) {
    const vk_cmd & c = d->frames[d->frame];
    e->serial = d->serial + (c.open && c.has_work ? 1 : 0);
    return TERN_OK;
}

tern_status vk_event_wait(vk_device * d, tern_hal_event * e) {
    if (e->serial > d->serial) TERN_TRY(vk_flush(d));
    if (!d->last_done && d->last_fence) {
        const VkResult r = d->f.vkWaitForFences(d->device, 1, &d->last_fence, VK_TRUE, UINT64_MAX);
        if (r != VK_SUCCESS) return vk_check(d, r, "vkWaitForFences");
        d->last_done = true;
        for (int32_t i = 0; i < VK_FRAMES; i++) d->frames[i].pending = false;
        for (int32_t i = 0; i < VK_GRAPHS; i++) d->graphs[i].pending = false;
        d->ring_head = 0;
    }
    if (d->error == TERN_OK) return TERN_OK;
    const tern_status st = d->error;
    d->error = TERN_OK;
    return tern_hal_error(st, "%s", d->error_msg);
}

tern_status vk_capture_begin(vk_device * d) {
    if (d->capturing || d->capture_failed) return tern_hal_error(TERN_ERR_INTERNAL, "vulkan%d: capture_begin while capturing", (int) d->index);
    vk_cmd * g = NULL;
    for (int32_t i = 0; i < VK_GRAPHS && !g; i++) {
        if (!d->graphs[i].in_use) g = &d->graphs[i];
    }
    if (!g) {
        d->capture_failed = true;   // no slot: record nothing, capture_end says why
        return TERN_OK;
    }
    if (!g->pool) TERN_TRY(cmd_create(d, g, VK_GRAPH_SETS));
    TERN_TRY(cmd_begin(d, g, true));
    d->capturing = g;
    d->capture_failed = false;
    return TERN_OK;
}

tern_status vk_capture_end(vk_device * d, tern_hal_graph ** out) {
    *out = NULL;
    vk_cmd * g = d->capturing;
    const bool failed = d->capture_failed;
    d->capturing = NULL;
    d->capture_failed = false;
    if (!g) {
        if (failed) return tern_hal_error(TERN_ERR_NO_MEMORY, "vulkan%d: no free graph slot (%d)", (int) d->index, (int) VK_GRAPHS);
        return tern_hal_error(TERN_ERR_INTERNAL, "vulkan%d: capture_end without capture_begin", (int) d->index);
    }
    if (failed) {
        // Host memory outside the device's buffers, or more dispatches than a graph holds.
        d->f.vkEndCommandBuffer(g->cmd);
        g->open = false;
        g->in_use = false;
        return tern_hal_error(TERN_ERR_UNSUPPORTED, "vulkan%d: this split cannot be captured (host memory outside the staging "
                              "buffer, or more than %d dispatches)", (int) d->index, (int) VK_GRAPH_SETS);
    }
    TERN_TRY(cmd_end(d, g));
    g->in_use = true;
    d->counters.captures++;
    *out = (tern_hal_graph *) g;
    return TERN_OK;
}

tern_status vk_replay(vk_device * d, tern_hal_graph * graph) {
    vk_cmd * g = (vk_cmd *) graph;
    TERN_TRY(vk_flush(d));   // eager work recorded before it runs first
    TERN_TRY(cmd_submit(d, g));
    tern_hal_counters & c = d->counters;
    c.replays++;
    c.launches += g->rec.launches;
    c.copies_h2d += g->rec.copies_h2d;
    c.copies_d2h += g->rec.copies_d2h;
    c.copies_d2d += g->rec.copies_d2d;
    c.bytes_h2d += g->rec.bytes_h2d;
    c.bytes_d2h += g->rec.bytes_d2h;
    c.bytes_d2d += g->rec.bytes_d2d;
    return TERN_OK;
}

void vk_graph_release(vk_device * d, tern_hal_graph * graph) {
    vk_cmd * g = (vk_cmd *) graph;
    cmd_wait(d, g);
    g->in_use = false;
}

}  // namespace hal
}  // namespace tern
