// The execution door (see executor.h).
#include "exec/executor.h"
#include "core/status.h"
#include "cpu/compute.h"

#include <string.h>

namespace tern {

tern_status exec_plan_make(const tern_executor * ex, const tern_graph * g, tern_graph_builder * gb, int32_t n_threads,
                           exec_plan_kind kind, tern_arena * arena, exec_plan * out) {
    memset(out, 0, sizeof(*out));
#if TERN_WITH_HAL
    if (ex->hal) {
        TERN_TRY(hal::sched_plan_make(ex->hal, g, gb, kind.large, kind.capturable, arena, &out->sched));
        TERN_TRY(tern_graph_plan_make(g, gb, out->sched->region, ex->n_regions, out->sched->live_to, arena, &out->mem));
        out->cpu_work = hal::sched_cpu_work(out->sched, g, n_threads);
        return TERN_OK;
    }
#endif
    TERN_TRY(tern_graph_plan_make(g, gb, NULL, 1, NULL, arena, &out->mem));
    out->cpu_work = tern_graph_work_size(g, n_threads);
    return TERN_OK;
}

bool exec_plan_offloads(const exec_plan * plan) {
#if TERN_WITH_HAL
    return plan->sched && plan->sched->n_offloaded > 0;
#else
    (void) plan;
    return false;
#endif
}

size_t exec_plan_extra_size(const exec_plan * plan) {
#if TERN_WITH_HAL
    if (plan->sched) return hal::sched_records_size(plan->sched);
#endif
    return 0;
}

tern_status exec_plan_extra_alloc(exec_plan * plan, tern_arena * arena) {
#if TERN_WITH_HAL
    if (plan->sched) return hal::sched_records_alloc(plan->sched, arena);
#endif
    return TERN_OK;
}

tern_status exec_bind(const tern_executor * ex, const exec_plan * plan, tern_graph_builder * gb, const tern_graph * g) {
#if TERN_WITH_HAL
    if (plan->sched) {
        TERN_TRY(hal::sched_bind(plan->sched, gb, g));
        TERN_TRY(tern_graph_plan_apply(&plan->mem, gb, g, ex->regions));
        hal::sched_bind_records(ex->hal, plan->sched, g);
        return TERN_OK;
    }
#endif
    return tern_graph_plan_apply(&plan->mem, gb, g, ex->regions);
}

tern_status exec_run(tern_executor * ex, const exec_plan * plan, const tern_graph * g, tern_abort_callback abort_cb,
                     void * abort_data, bool capture) {
#if TERN_WITH_HAL
    if (plan->sched) {
        return hal::sched_run(ex->hal, plan->sched, g, ex->pool, ex->work, ex->work_size, abort_cb, abort_data, capture);
    }
#endif
    (void) capture;
    return tern_graph_compute(g, ex->pool, ex->work, ex->work_size, abort_cb, abort_data);
}

tern_tensor * exec_output(const exec_plan * plan, tern_tensor * t) {
#if TERN_WITH_HAL
    if (plan->sched) return hal::sched_host_output(plan->sched, t);
#endif
    return t;
}

tern_status exec_prepare(const tern_executor * ex, const exec_plan * plan, const tern_graph * g) {
#if TERN_WITH_HAL
    if (plan->sched) return hal::sched_prepare(ex->hal, plan->sched, g);
#endif
    return TERN_OK;
}

tern_status exec_storage_read(tern_executor * ex, tern_storage st, size_t offset, void * dst, size_t n) {
    if (!st.buffer || st.offset + offset + n > st.buffer->size) {
        return tern_fail(TERN_ERR_INTERNAL, "storage read of %zu bytes at %zu outside its buffer", n, offset);
    }
    const uint8_t * src = (const uint8_t *) tern_storage_host(st);
    if (src) {
        memcpy(dst, src + offset, n);
        return TERN_OK;
    }
#if TERN_WITH_HAL
    if (ex->hal && st.buffer->device >= 0 && st.buffer->device < ex->hal->n_dev) {
        const hal::hal_device * dv = &ex->hal->dev[st.buffer->device];
        TERN_TRY(dv->desc->copy_d2h(dv->dev, dst, (tern_hal_buffer *) st.buffer->handle, st.offset + offset, n));
        return dv->desc->synchronize(dv->dev);
    }
#endif
    return tern_fail(TERN_ERR_INTERNAL, "storage read: no way to the bytes");
}

tern_status exec_storage_write(tern_executor * ex, tern_storage st, size_t offset, const void * src, size_t n) {
    if (!st.buffer || st.offset + offset + n > st.buffer->size) {
        return tern_fail(TERN_ERR_INTERNAL, "storage write of %zu bytes at %zu outside its buffer", n, offset);
    }
    uint8_t * dst = (uint8_t *) tern_storage_host(st);
    if (dst) {
        memcpy(dst + offset, src, n);
        return TERN_OK;
    }
#if TERN_WITH_HAL
    if (ex->hal && st.buffer->device >= 0 && st.buffer->device < ex->hal->n_dev) {
        const hal::hal_device * dv = &ex->hal->dev[st.buffer->device];
        TERN_TRY(dv->desc->copy_h2d(dv->dev, (tern_hal_buffer *) st.buffer->handle, st.offset + offset, src, n));
        return dv->desc->synchronize(dv->dev);
    }
#endif
    return tern_fail(TERN_ERR_INTERNAL, "storage write: no way to the bytes");
}

}  // namespace tern
