// The execution door (see executor.h).
#include "exec/executor.h"
#include "core/status.h"
#include "cpu/compute.h"

#include <string.h>

namespace tern {

tern_status exec_plan_make(const tern_executor * ex, const tern_graph * g, const tern_graph_builder * gb,
                           int32_t n_threads, tern_arena * arena, exec_plan * out) {
    memset(out, 0, sizeof(*out));
    TERN_TRY(tern_graph_plan_make(g, gb, NULL, 1, arena, &out->mem));
    out->cpu_work = tern_graph_work_size(g, n_threads);
    return TERN_OK;
}

tern_status exec_bind(const tern_executor * ex, const exec_plan * plan, tern_graph_builder * gb, const tern_graph * g) {
    return tern_graph_plan_apply(&plan->mem, gb, g, ex->regions);
}

tern_status exec_run(tern_executor * ex, const exec_plan * plan, const tern_graph * g, tern_abort_callback abort_cb,
                     void * abort_data) {
    return tern_graph_compute(g, ex->pool, ex->work, ex->work_size, abort_cb, abort_data);
}

tern_status exec_storage_read(tern_executor * ex, tern_storage st, size_t offset, void * dst, size_t n) {
    const uint8_t * src = (const uint8_t *) tern_storage_host(st);
    if (!src || st.offset + offset + n > st.buffer->size) {
        return tern_fail(TERN_ERR_INTERNAL, "storage read of %zu bytes at %zu: no such host bytes", n, offset);
    }
    memcpy(dst, src + offset, n);
    return TERN_OK;
}

tern_status exec_storage_write(tern_executor * ex, tern_storage st, size_t offset, const void * src, size_t n) {
    uint8_t * dst = (uint8_t *) tern_storage_host(st);
    if (!dst || st.offset + offset + n > st.buffer->size) {
        return tern_fail(TERN_ERR_INTERNAL, "storage write of %zu bytes at %zu: no such host bytes", n, offset);
    }
    memcpy(dst + offset, src, n);
    return TERN_OK;
}

}  // namespace tern
