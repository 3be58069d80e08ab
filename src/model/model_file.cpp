// Model-file loader: see model_file.h for the design (sizing, mmap/read/blob,
// splits, progress, check_tensors).
#include "model/model_file.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <atomic>

#include "core/log.h"
#include "core/sort.h"
#include "core/status.h"
#include "tensor/finite.h"
#include "tensor/types.h"

namespace tern {

namespace {

// First bytes the read path reads before asking gguf_measure whether the header fits.
const uint64_t kFirstPrefixBytes = 1 << 20;
const int32_t kMaxCheckThreads = 8;
// Longest path of a split model's part, with its NUL (one buffer of this size
// is on the loader's stack: a deep PATH_MAX buffer would cost 4 KB of every
// firmware's stack for a feature it never uses). Single files have no limit.
const size_t kPathBytes = 1024;

// ---- split naming ------------------------------------------------------------

// The parts to load. A split-named path is "<prefix>-00001-of-000NN.gguf".
struct split_plan {
    const char * first;          // the path given, or "blob"
    size_t       prefix_len;     // "<prefix>" is first[0, prefix_len); 0 when not split-named
    bool         too_long;       // split-named, but its parts' paths do not fit kPathBytes
    int32_t      named_count;    // NN from the name (0 when not split-named)
    int32_t      named_no;       // part number from the name (1-based)
    int32_t      n;              // parts to load
};

bool parse_digits(const char * s, int n, int32_t * out) {
    int32_t v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

void plan_init(split_plan * plan, const char * path) {
    memset(plan, 0, sizeof(*plan));
    plan->first = path;
    plan->n = 1;
    // "-NNNNN-of-NNNNN.gguf" is 20 characters.
    size_t len = strlen(path);
    if (len <= 20) return;
    const char * s = path + len - 20;
    int32_t no = 0, count = 0;
    if (s[0] != '-' || memcmp(s + 6, "-of-", 4) != 0 || memcmp(s + 15, ".gguf", 5) != 0) return;
    if (!parse_digits(s + 1, 5, &no) || !parse_digits(s + 10, 5, &count)) return;
    plan->too_long = len + 1 > kPathBytes;
    plan->prefix_len = len - 20;
    plan->named_no = no;
    plan->named_count = count;
}

void part_path(const split_plan * plan, int32_t i, char * buf, size_t size) {
    if (i == 0 || plan->n <= 1) snprintf(buf, size, "%s", plan->first);
    else snprintf(buf, size, "%.*s-%05d-of-%05d.gguf", (int) plan->prefix_len, plan->first, (int) (i + 1), (int) plan->n);
}

// ---- header measuring ----------------------------------------------------------

// split.* keys of one part (-1 when absent).
struct split_keys {
    int64_t no, count, tensors;
};

struct measure_visit {
    const model_files_sizer * forward;  // the caller's sizer (split 0's last measure only)
    split_keys                keys;
};

void visit_kv(void * user, const gguf_kv * kv) {
    measure_visit * v = (measure_visit *) user;
    int64_t value = 0;
    if (gguf_kv_int(kv, &value)) {
        if (gguf_str_eq(kv->key, "split.no")) v->keys.no = value;
        if (gguf_str_eq(kv->key, "split.count")) v->keys.count = value;
        if (gguf_str_eq(kv->key, "split.tensors.count")) v->keys.tensors = value;
    }
    if (v->forward && v->forward->on_kv) v->forward->on_kv(v->forward->user, kv);
}

void visit_tensor(void * user, const gguf_tensor_info * ti) {
    measure_visit * v = (measure_visit *) user;
    if (v->forward && v->forward->on_tensor) v->forward->on_tensor(v->forward->user, ti);
}

// Measures one part's header. The read path grows the prefix in its buffer
// while gguf_measure asks for more. The caller's visitor sees the keys exactly
// once: on a pass that cannot be retried.
tern_status measure_part(const char * what, void * read_buffer, gguf_span * span, const model_files_sizer * sizer,
                         split_keys * keys, size_t * out_bytes) {
    measure_visit v;
    for (;;) {
        bool complete = span->avail == span->file_size;
        v.forward = complete ? sizer : NULL;
        v.keys.no = v.keys.count = v.keys.tensors = -1;
        uint64_t need = 0;
        tern_status s = gguf_measure(span, what, visit_kv, visit_tensor, &v, out_bytes, &need);
        if (s == TERN_OK && (complete || !sizer)) break;
        if (s == TERN_OK) {
            v.forward = sizer;
            v.keys.no = v.keys.count = v.keys.tensors = -1;
            TERN_TRY(gguf_measure(span, what, visit_kv, visit_tensor, &v, out_bytes, &need));
            break;
        }
        if (!read_buffer || need <= span->avail) return s;
        TERN_TRY(port_file_read(what, span->avail, (uint8_t *) read_buffer + span->avail, need - span->avail));
        span->avail = need;
    }
    *keys = v.keys;
    return TERN_OK;
}

// Tensor count of a header gguf_measure accepted (u64 at offset 8).
uint64_t measured_tensor_count(const gguf_span * span) {
    uint64_t n = 0;
    memcpy(&n, span->data + 8, 8);
    return n;
}

// First 64-byte boundary of the caller's memory (model_files.h).
uint8_t * caller_base(const tern_model_params * p) {
    return (uint8_t *) (((uintptr_t) p->arena + (TERN_ARENA_ALIGN - 1)) & ~(uintptr_t) (TERN_ARENA_ALIGN - 1));
}

size_t caller_room(const tern_model_params * p, size_t used) {
    const size_t skip = (size_t) (caller_base(p) - (uint8_t *) p->arena);
    return p->arena_size > skip + used ? p->arena_size - skip - used : 0;
}

// Opens one part: maps it, or obtains its buffer (port_alloc or the caller's
// memory) and reads the first prefix.
tern_status open_part(const char * path, bool use_mmap, const tern_model_params * p, model_files * m,
                      model_file_source * src, gguf_span * span) {
#if TERN_WITH_MMAP
    if (use_mmap) {
        TERN_TRY(port_file_map_open(path, p->prefetch, p->use_mlock, &src->map));
        if (p->use_mlock && !src->map.locked) TERN_LOGW("%s: mlock failed: weights may be paged out", path);
        span->data = (const uint8_t *) src->map.addr;
        span->avail = span->file_size = src->map.size;
        return TERN_OK;
    }
#endif
    uint64_t size = 0;
    TERN_TRY(port_file_size(path, &size));
    if (size == 0 || size > (uint64_t) SIZE_MAX) {
        return tern_fail(TERN_ERR_FORMAT, "%s: a file of %llu bytes is no GGUF file", path, (unsigned long long) size);
    }
    if (m->caller_memory) {
        if (caller_room(p, m->caller_used) < arena_padded((size_t) size)) {
            return tern_fail(TERN_ERR_NO_MEMORY, "%s: the model memory given (%zu bytes) cannot hold the file's %llu bytes",
                             path, p->arena_size, (unsigned long long) size);
        }
        src->buffer = caller_base(p) + m->caller_used;
        m->caller_used += arena_padded((size_t) size);
    } else {
        src->buffer = port_alloc((size_t) size);
    }
    if (!src->buffer) {
        return tern_fail(TERN_ERR_NO_MEMORY, "%s: cannot allocate %llu bytes to read it", path,
                         (unsigned long long) size);
    }
    span->data = (const uint8_t *) src->buffer;
    span->file_size = size;
    span->avail = std::min(size, kFirstPrefixBytes);
    return port_file_read(path, 0, src->buffer, span->avail);
}

// ---- progress ---------------------------------------------------------------------

struct progress {
    tern_progress_callback cb;
    void *                 user;
    float                  last;
    // Reports max(value, last); false when the callback asks to cancel.
    bool report(float value) {
        last = std::max(last, std::min(value, 1.0f));
        return cb == NULL || cb(last, user) != 0;
    }
};

tern_status cancelled(const char * what) {
    return tern_fail(TERN_ERR_CANCELLED, "%s: load cancelled by the progress callback", what);
}

// ---- tensor order -------------------------------------------------------------------

}  // namespace

int64_t model_tensor_layer(const char * name) {
    if (strncmp(name, "blk.", 4) != 0) return -1;
    int64_t n = 0;
    const char * p = name + 4;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
        if (n > INT32_MAX) return -1;
    }
    return *p == '.' ? n : -1;
}

namespace {

// llama.cpp's load order: by layer (other tensors first), then by name.
void sort_load_order(const model_file_tensor * t, uint32_t * idx, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    tern_heap_sort(idx, (size_t) n, [t](uint32_t a, uint32_t b) {
        int64_t la = model_tensor_layer(t[a].name), lb = model_tensor_layer(t[b].name);
        return la != lb ? la < lb : strcmp(t[a].name, t[b].name) < 0;
    });
}

// ---- check_tensors --------------------------------------------------------------------

// F32/F16/BF16 values and block scales (tensor/finite.h); a tensor's bytes are whole blocks.
bool tensor_finite(const model_file_tensor * t) { return tern_data_finite(t->type, t->data, (size_t) t->bytes); }

// Workers take tensors from a shared counter; worker 0 (the caller) reports progress.
struct check_job {
    const model_files *  m;
    // Pointer-sized counters: lock-free on every target (Cortex-M has no 64-bit
    // atomics); a tensor count fits the address space that holds its table.
    std::atomic<intptr_t> next;
    std::atomic<intptr_t> done;
    std::atomic<intptr_t> bad;     // lowest bad tensor index found, n_tensors when none
    std::atomic<int>     stop;
};

// Checks the next tensor; false when none are left or the job stopped.
bool check_next(check_job * job) {
    intptr_t i = job->next.fetch_add(1);
    if (i >= job->m->n_tensors || job->stop.load()) return false;
    if (!tensor_finite(&job->m->tensors[i])) {
        intptr_t cur = job->bad.load();
        while (i < cur && !job->bad.compare_exchange_weak(cur, i)) {}
        job->stop.store(1);
    }
    job->done.fetch_add(1);
    return true;
}

// Helper threads for check_tensors, in the arena's temp region (none without TERN_WITH_THREADS).
struct check_crew {
    uint8_t * threads;
    size_t    stride;
    int32_t   started;
};

#if TERN_WITH_THREADS
void * check_worker(void * arg) {
    while (check_next((check_job *) arg)) {}
    return NULL;
}
#endif

void crew_start(check_crew * crew, tern_arena * arena, check_job * job, int n_threads) {
    memset(crew, 0, sizeof(*crew));
#if TERN_WITH_THREADS
    int64_t helpers = std::min<int64_t>(std::max(n_threads, 1), std::min<int64_t>(kMaxCheckThreads, job->m->n_tensors)) - 1;
    crew->stride = arena_padded(port_thread_size());
    crew->threads = helpers > 0 ? (uint8_t *) arena_alloc_temp(arena, crew->stride * (size_t) helpers) : NULL;
    if (!crew->threads) return;  // the caller's thread checks everything
    while (crew->started < helpers &&
           port_thread_start((port_thread *) (crew->threads + crew->stride * crew->started), check_worker, job) == TERN_OK) {
        crew->started++;
    }
#endif
}

void crew_join(check_crew * crew) {
#if TERN_WITH_THREADS
    for (int32_t w = 0; w < crew->started; w++) port_thread_join((port_thread *) (crew->threads + crew->stride * w));
#endif
}

tern_status check_tensors(model_files * m, const char * what, int n_threads, progress * pr, float from) {
    check_job job;
    job.m = m;
    job.next.store(0);
    job.done.store(0);
    job.bad.store((intptr_t) m->n_tensors);
    job.stop.store(0);
    size_t mark = arena_temp_mark(&m->arena);
    check_crew crew;
    crew_start(&crew, &m->arena, &job, n_threads);
    bool cancel = false;
    while (check_next(&job)) {
        if (!pr->report(from + (1.0f - from) * (float) job.done.load() / (float) m->n_tensors)) {
            job.stop.store(1);
            cancel = true;
        }
    }
    crew_join(&crew);
    arena_temp_release(&m->arena, mark);
    if (cancel) return cancelled(what);
    int64_t bad = job.bad.load();
    if (bad < m->n_tensors) {
        return tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': check_tensors: non-finite values or block scales", what,
                         m->tensors[bad].name);
    }
    return TERN_OK;
}

// Bytes of temp scratch the loader needs at most at once (after the headers are parsed).
size_t load_scratch_bytes(uint64_t n_tensors, const tern_model_params * p) {
    size_t order = arena_padded((size_t) n_tensors * sizeof(uint32_t));
    size_t threads = p->check_tensors && TERN_WITH_THREADS ? arena_padded(port_thread_size()) * kMaxCheckThreads : 0;
    return std::max(order, threads);
}

// ---- the shared second half of every open ----------------------------------------------

struct open_state {
    split_plan  plan;
    gguf_span   spans[MODEL_FILES_MAX_SPLITS];
    size_t      index_bytes[MODEL_FILES_MAX_SPLITS];
    split_keys  keys0;
    bool        read;  // read path: tensor data still to be read into the buffers
    char        path[kPathBytes + 32];  // a part's path, built where needed (one buffer: bounded stack)
};

tern_status merge_tensors(model_files * m, const char * what) {
    int64_t k = 0;
    for (int32_t s = 0; s < m->n_splits; s++) {
        const gguf_file & f = m->splits[s];
        for (uint64_t i = 0; i < f.n_tensors; i++, k++) {
            const gguf_tensor_info & ti = f.tensors[i];
            model_file_tensor & t = m->tensors[k];
            t.name = ti.name;
            t.type = ti.type;
            t.n_dims = (int32_t) ti.n_dims;
            memcpy(t.ne, ti.ne, sizeof(t.ne));
            t.bytes = ti.bytes;
            t.offset = ti.offset;
            t.split = s;
            t.data = f.base + f.data_offset + ti.offset;
        }
    }
    if (m->n_splits == 1) return TERN_OK;  // gguf_parse checked the names of one file
    size_t mark = arena_temp_mark(&m->arena);
    uint32_t * idx = (uint32_t *) arena_alloc_temp(&m->arena, (size_t) m->n_tensors * sizeof(uint32_t));
    if (!idx) return TERN_ERR_NO_MEMORY;
    const model_file_tensor * t = m->tensors;
    for (uint32_t i = 0; i < (uint32_t) m->n_tensors; i++) idx[i] = i;
    tern_heap_sort(idx, (size_t) m->n_tensors, [t](uint32_t a, uint32_t b) { return strcmp(t[a].name, t[b].name) < 0; });
    tern_status s = TERN_OK;
    for (int64_t i = 1; i < m->n_tensors && s == TERN_OK; i++) {
        if (strcmp(t[idx[i - 1]].name, t[idx[i]].name) == 0) {
            s = tern_fail(TERN_ERR_FORMAT, "%s: tensor '%s': in parts %" PRId32 " and %" PRId32, what, t[idx[i]].name,
                          t[idx[i - 1]].split + 1, t[idx[i]].split + 1);
        }
    }
    arena_temp_release(&m->arena, mark);
    return s;
}

// Kernels read weights through typed pointers (fp16 scales, f32 values), so
// every tensor must start at a multiple of its type's alignment. A file whose
// general.alignment leaves a tensor unaligned, or a blob handed over at an
// address that misaligns it, is refused (never copied: a copy would double
// the weights' memory on a device that has none to spare).
tern_status check_alignment(const model_files * m, const char * what) {
    for (int64_t i = 0; i < m->n_tensors; i++) {
        const model_file_tensor & t = m->tensors[i];
        const size_t align = tern_type_align(t.type);
        if ((uintptr_t) t.data % align == 0) continue;
        const gguf_file & f = m->splits[t.split];
        if ((f.data_offset + t.offset) % align != 0) {
            return tern_fail(TERN_ERR_FORMAT,
                             "%s: tensor '%s': data at file offset %llu is not aligned to the %zu bytes type %s "
                             "needs (general.alignment %" PRIu32 ")",
                             what, t.name, (unsigned long long) (f.data_offset + t.offset), align,
                             tern_type_name(t.type), f.alignment);
        }
        return tern_fail(TERN_ERR_INVALID_ARG,
                         "%s: tensor '%s' lands at a misaligned address: the model's memory must start at a "
                         "multiple of %" PRIu32 " bytes (general.alignment)", what, t.name, f.alignment);
    }
    return TERN_OK;
}

// Reads (read path) and reports every tensor in load order.
tern_status load_tensors(model_files * m, open_state * st, progress * pr, float share) {
    size_t mark = arena_temp_mark(&m->arena);
    uint32_t * idx = (uint32_t *) arena_alloc_temp(&m->arena, (size_t) m->n_tensors * sizeof(uint32_t));
    if (!idx) return TERN_ERR_NO_MEMORY;
    sort_load_order(m->tensors, idx, (uint32_t) m->n_tensors);
    tern_status s = TERN_OK;
    char * path = st->path;
    for (int64_t k = 0; k < m->n_tensors && s == TERN_OK; k++) {
        const model_file_tensor & t = m->tensors[idx[k]];
        if (st->read && t.bytes > 0) {
            part_path(&st->plan, t.split, path, sizeof(st->path));
            s = port_file_read(path, m->splits[t.split].data_offset + t.offset, (void *) t.data, t.bytes);
            if (s != TERN_OK) tern_error_prefix("tensor '%s': ", t.name);
        }
        if (s == TERN_OK && !pr->report(share * (float) (k + 1) / (float) m->n_tensors)) s = cancelled(st->plan.first);
    }
    arena_temp_release(&m->arena, mark);
    return s;
}

// Table arena payload of an open whose headers are measured.
tern_status table_bytes(const model_files * m, const open_state * st, const tern_model_params * p,
                        const model_files_sizer * sz, size_t * out) {
    const char * what = st->plan.first;
    if (st->keys0.tensors >= 0 || m->n_splits > 1) {
        uint64_t total = 0;
        for (int32_t s = 0; s < m->n_splits; s++) total += measured_tensor_count(&st->spans[s]);
        if (st->keys0.tensors >= 0 && (uint64_t) st->keys0.tensors != total) {
            return tern_fail(TERN_ERR_FORMAT, "%s: key 'split.tensors.count' is %lld but the %" PRId32 " parts hold %llu tensors",
                             what, (long long) st->keys0.tensors, m->n_splits, (unsigned long long) total);
        }
    }
    uint64_t n_tensors = 0;
    size_t bytes = arena_padded(sizeof(gguf_file) * (size_t) m->n_splits);
    for (int32_t s = 0; s < m->n_splits; s++) {
        n_tensors += measured_tensor_count(&st->spans[s]);
        bytes += st->index_bytes[s];
    }
    if (n_tensors > INT32_MAX) return tern_fail(TERN_ERR_FORMAT, "%s: %llu tensors in all", what, (unsigned long long) n_tensors);
    bytes += arena_padded((size_t) n_tensors * sizeof(model_file_tensor));
    bytes += load_scratch_bytes(n_tensors, p);
    if (sz && sz->extra_bytes) bytes += sz->extra_bytes(sz->user, n_tensors);
    *out = bytes;
    return TERN_OK;
}

// Bytes of caller memory: alignment slack, the read buffers taken so far, the tables.
size_t caller_total(const model_files * m, size_t tables) { return arena_buffer_size(m->caller_used + tables); }

tern_status finish_open(model_files * m, open_state * st, const tern_model_params * p, const model_files_sizer * sz,
                        int64_t t0) {
    const char * what = st->plan.first;
    size_t bytes = 0;
    TERN_TRY(table_bytes(m, st, p, sz, &bytes));
    uint64_t n_tensors = 0;
    for (int32_t s = 0; s < m->n_splits; s++) n_tensors += measured_tensor_count(&st->spans[s]);
    if (m->caller_memory) {
        // The exact size whatever the buffer's alignment (the same buffer elsewhere must fit too).
        const size_t need = caller_total(m, bytes);
        if (p->arena_size < need || !arena_init(&m->arena, caller_base(p) + m->caller_used, bytes)) {
            return tern_fail(TERN_ERR_NO_MEMORY, "%s: the model memory given is %zu bytes, %zu needed (tern_model_mem_size_*)",
                             what, p->arena_size, need);
        }
        m->caller_used += bytes;
    } else {
        m->arena_buffer = port_alloc(arena_buffer_size(bytes));
        if (!m->arena_buffer || !arena_init(&m->arena, m->arena_buffer, arena_buffer_size(bytes))) {
            return tern_fail(TERN_ERR_NO_MEMORY, "%s: cannot allocate the %zu-byte model table arena", what, bytes);
        }
    }
    m->splits = (gguf_file *) arena_calloc(&m->arena, sizeof(gguf_file) * (size_t) m->n_splits, TERN_MEM_MODEL_TABLES);
    if (!m->splits) return TERN_ERR_NO_MEMORY;
    for (int32_t s = 0; s < m->n_splits; s++) {
        part_path(&st->plan, s, st->path, sizeof(st->path));
        TERN_TRY(gguf_parse(&st->spans[s], st->path, &m->arena, &m->splits[s]));
    }
    m->n_tensors = (int64_t) n_tensors;
    m->tensors = (model_file_tensor *) arena_calloc(&m->arena, sizeof(model_file_tensor) * (size_t) n_tensors,
                                                    TERN_MEM_MODEL_TABLES);
    if (!m->tensors) return TERN_ERR_NO_MEMORY;
    TERN_TRY(merge_tensors(m, what));
    TERN_TRY(check_alignment(m, what));
    progress pr = {p->progress_callback, p->progress_callback_user_data, 0.0f};
    float share = p->check_tensors ? 0.5f : 1.0f;
    TERN_TRY(load_tensors(m, st, &pr, share));
    if (p->check_tensors) TERN_TRY(check_tensors(m, what, p->n_threads, &pr, share));
    if (pr.last < 1.0f && !pr.report(1.0f)) return cancelled(what);
    m->load_ms = (double) (port_time_us() - t0) / 1000.0;
    return TERN_OK;
}

const tern_model_params * params_or_default(const tern_model_params * p, tern_model_params * storage) {
    if (p) return p;
    memset(storage, 0, sizeof(*storage));
    storage->use_mmap = 1;
    return storage;
}

tern_status open_path(const char * path, const tern_model_params * p, const model_files_sizer * sz, model_files * m,
                      open_state * st) {
    bool use_mmap = TERN_WITH_MMAP && p->use_mmap;
    m->load_path = use_mmap ? "mmap" : "read";
    st->read = !use_mmap;
    plan_init(&st->plan, path);
    TERN_TRY(open_part(path, use_mmap, p, m, &m->sources[0], &st->spans[0]));
    m->n_splits = 1;
    TERN_TRY(measure_part(path, m->sources[0].buffer, &st->spans[0], sz, &st->keys0, &st->index_bytes[0]));
    int64_t count = st->keys0.count;
    if (count <= 1) return TERN_OK;
    if (st->keys0.no != 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: key 'split.no' is %lld: load a split model by its first part", path,
                         (long long) st->keys0.no);
    }
    if (st->plan.too_long) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "%s: the path of a split model's parts must be shorter than %zu bytes",
                         path, kPathBytes);
    }
    if (st->plan.named_count == 0) {
        return tern_fail(TERN_ERR_FORMAT, "%s: split model (split.count %lld) not named <prefix>-00001-of-%05lld.gguf",
                         path, (long long) count, (long long) count);
    }
    if (count != st->plan.named_count) {
        return tern_fail(TERN_ERR_FORMAT, "%s: key 'split.count' is %lld but the file name says %" PRId32 " parts", path,
                         (long long) count, st->plan.named_count);
    }
    if (count > MODEL_FILES_MAX_SPLITS) {
        return tern_fail(TERN_ERR_UNSUPPORTED, "%s: %lld parts (at most %d)", path, (long long) count,
                         MODEL_FILES_MAX_SPLITS);
    }
    st->plan.n = (int32_t) count;
    char * part = st->path;
    for (int32_t s = 1; s < st->plan.n; s++) {
        part_path(&st->plan, s, part, sizeof(st->path));
        if (!port_file_exists(part)) {
            return tern_fail(TERN_ERR_IO, "%s: part %" PRId32 " of %" PRId32 " of the split model is missing", part, s + 1, st->plan.n);
        }
        TERN_TRY(open_part(part, use_mmap, p, m, &m->sources[s], &st->spans[s]));
        m->n_splits = s + 1;
        split_keys keys;
        TERN_TRY(measure_part(part, m->sources[s].buffer, &st->spans[s], NULL, &keys, &st->index_bytes[s]));
        if (keys.no != s || keys.count != count) {
            return tern_fail(TERN_ERR_FORMAT, "%s: keys 'split.no' / 'split.count' are %lld / %lld, expected %" PRId32 " / %lld",
                             part, (long long) keys.no, (long long) keys.count, s, (long long) count);
        }
    }
    return TERN_OK;
}

}  // namespace

tern_status model_files_open_path(const char * path, const tern_model_params * params, const model_files_sizer * s,
                                  model_files * out) {
    memset(out, 0, sizeof(*out));
    if (!path) return tern_fail(TERN_ERR_INVALID_ARG, "model path is NULL");
    int64_t t0 = port_time_us();
    tern_model_params defaults;
    const tern_model_params * p = params_or_default(params, &defaults);
    out->caller_memory = p->arena != NULL;
    open_state st;
    tern_status status = open_path(path, p, s, out, &st);
    if (status == TERN_OK) status = finish_open(out, &st, p, s, t0);
    if (status != TERN_OK) model_files_close(out);
    return status;
}

tern_status model_files_open_blob(const void * data, size_t size, const tern_model_params * params,
                                  const model_files_sizer * s, model_files * out) {
    memset(out, 0, sizeof(*out));
    if (!data) return tern_fail(TERN_ERR_INVALID_ARG, "blob: data is NULL");
    int64_t t0 = port_time_us();
    tern_model_params defaults;
    const tern_model_params * p = params_or_default(params, &defaults);
    out->caller_memory = p->arena != NULL;
    open_state st;
    plan_init(&st.plan, "blob");
    st.read = false;
    st.spans[0].data = (const uint8_t *) data;
    st.spans[0].avail = st.spans[0].file_size = size;
    out->load_path = "blob";
    out->n_splits = 1;
    tern_status status = measure_part("blob", NULL, &st.spans[0], s, &st.keys0, &st.index_bytes[0]);
    if (status == TERN_OK && st.keys0.count > 1) {
        status = tern_fail(TERN_ERR_UNSUPPORTED, "blob: split models (split.count %lld) load from files only",
                           (long long) st.keys0.count);
    }
    if (status == TERN_OK) status = finish_open(out, &st, p, s, t0);
    if (status != TERN_OK) model_files_close(out);
    return status;
}

size_t model_files_size_path(const char * path, const tern_model_params * params, const model_files_sizer * s) {
    if (!path) {
        tern_fail(TERN_ERR_INVALID_ARG, "model path is NULL");
        return 0;
    }
    tern_model_params p;
    tern_model_params defaults;
    p = *params_or_default(params, &defaults);
    // Measure over a mapping (no memory taken) where one exists; the read
    // path's files count as the file sizes they will be read into.
    const bool read = !(TERN_WITH_MMAP && p.use_mmap);
    p.use_mmap = TERN_WITH_MMAP;
    p.prefetch = 0;
    p.use_mlock = 0;
    p.arena = NULL;
    model_files m;
    memset(&m, 0, sizeof(m));
    open_state st;
    tern_status status = open_path(path, &p, s, &m, &st);
    size_t tables = 0, files = 0;
    if (status == TERN_OK) status = table_bytes(&m, &st, params_or_default(params, &defaults), s, &tables);
    for (int32_t k = 0; k < m.n_splits && read; k++) files += arena_padded((size_t) st.spans[k].file_size);
    model_files_close(&m);
    return status == TERN_OK ? arena_buffer_size(files + tables) : 0;
}

size_t model_files_size_blob(const void * data, size_t size, const tern_model_params * params,
                             const model_files_sizer * s) {
    if (!data) {
        tern_fail(TERN_ERR_INVALID_ARG, "blob: data is NULL");
        return 0;
    }
    tern_model_params defaults;
    const tern_model_params * p = params_or_default(params, &defaults);
    model_files m;
    memset(&m, 0, sizeof(m));
    open_state st;
    plan_init(&st.plan, "blob");
    st.spans[0].data = (const uint8_t *) data;
    st.spans[0].avail = st.spans[0].file_size = size;
    m.n_splits = 1;
    size_t tables = 0;
    tern_status status = measure_part("blob", NULL, &st.spans[0], s, &st.keys0, &st.index_bytes[0]);
    if (status == TERN_OK) status = table_bytes(&m, &st, p, s, &tables);
    return status == TERN_OK ? arena_buffer_size(tables) : 0;
}

void model_files_close(model_files * m) {
    for (int32_t s = 0; s < MODEL_FILES_MAX_SPLITS; s++) {
        if (m->sources[s].map.addr) port_file_map_close(&m->sources[s].map);
        if (m->sources[s].buffer && !m->caller_memory) port_free(m->sources[s].buffer);
    }
    // m may live inside the arena (a loaded model's files): clear it first,
    // release the arena last.
    void * arena_buffer = m->arena_buffer;
    memset(m, 0, sizeof(*m));
    if (arena_buffer) port_free(arena_buffer);
}

}  // namespace tern
