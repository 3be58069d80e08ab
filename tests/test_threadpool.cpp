// Thread pool: kick-offs, barrier phases, sleeping workers, abort between nodes.
#include <atomic>
#include <chrono>
#include <thread>
#include "cpu_test_util.h"
#include "port.h"
#include "cpu/work_claim.h"

static int32_t expected_threads(int32_t n) { return TERN_WITH_THREADS ? n : 1; }

struct count_job {
    std::atomic<int> calls[64];
    std::atomic<int> bad_nth;
    int32_t nth_expected;
};

static void count_fn(int32_t ith, int32_t nth, void * arg) {
    count_job * j = (count_job *) arg;
    j->calls[ith].fetch_add(1);
    if (nth != j->nth_expected) j->bad_nth.fetch_add(1);
}

// Every phase writes one slot per worker, then (after a barrier) every worker
// checks all slots of that phase.
struct phase_job {
    tern_threadpool * pool;
    int32_t slots[64];
    std::atomic<int> errors;
    int phases;
};

static void phase_fn(int32_t ith, int32_t nth, void * arg) {
    phase_job * j = (phase_job *) arg;
    for (int p = 0; p < j->phases; p++) {
        j->slots[ith] = p * 1000 + ith;
        tern_threadpool_barrier(j->pool);
        for (int32_t k = 0; k < nth; k++) if (j->slots[k] != p * 1000 + k) j->errors.fetch_add(1);
        tern_threadpool_barrier(j->pool);
    }
}

static void test_kickoffs_and_barrier(int32_t n, int32_t spin_rounds) {
    tern_threadpool * pool = test_pool(n, spin_rounds);
    CHECK(pool != NULL);
    if (!pool) return;
    CHECK(tern_threadpool_n_threads(pool) == expected_threads(n));
    static count_job cj;
    for (auto & c : cj.calls) c.store(0);
    cj.bad_nth.store(0);
    cj.nth_expected = expected_threads(n);
    const int kicks = 300;
    for (int k = 0; k < kicks; k++) tern_threadpool_run(pool, count_fn, &cj);
    for (int32_t i = 0; i < expected_threads(n); i++) CHECK_MSG(cj.calls[i].load() == kicks, "n=%d worker %d ran %d times", n, i, cj.calls[i].load());
    CHECK(cj.bad_nth.load() == 0);

    static phase_job pj;
    pj.pool = pool;
    pj.errors.store(0);
    pj.phases = 50;
    for (int k = 0; k < 20; k++) tern_threadpool_run(pool, phase_fn, &pj);
    CHECK_MSG(pj.errors.load() == 0, "n=%d spin=%d: %d stale reads after a barrier", n, spin_rounds, pj.errors.load());
    tern_threadpool_free(pool);
}

// Workers that exhausted their spins sleep; the next kick-off wakes them.
static void test_sleep_and_wake() {
    tern_threadpool * pool = test_pool(3, 0);
    CHECK(pool != NULL);
    if (!pool) return;
    static count_job cj;
    for (auto & c : cj.calls) c.store(0);
    cj.bad_nth.store(0);
    cj.nth_expected = expected_threads(3);
    for (int k = 0; k < 5; k++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        tern_threadpool_run(pool, count_fn, &cj);
    }
    for (int32_t i = 0; i < expected_threads(3); i++) CHECK(cj.calls[i].load() == 5);
    tern_threadpool_free(pool);
}

// A pool in caller memory at an odd address.
static void test_init_in() {
    tern_threadpool_params p = tern_threadpool_default_params(4);
    std::vector<uint8_t> mem(tern_threadpool_mem_size(4) + 3);
    tern_threadpool * pool = NULL;
    CHECK(tern_threadpool_init_in(mem.data() + 3, &p, &pool) == TERN_OK);
    static phase_job pj;
    pj.pool = pool;
    pj.errors.store(0);
    pj.phases = 10;
    tern_threadpool_run(pool, phase_fn, &pj);
    CHECK(pj.errors.load() == 0);
    tern_threadpool_free(pool);

    p.n_threads = 0;
    CHECK(tern_threadpool_create(&p, &pool) == TERN_ERR_INVALID_ARG);
    p.n_threads = TERN_MAX_THREADS + 1;
    CHECK(tern_threadpool_create(&p, &pool) == TERN_ERR_INVALID_ARG);
}

// A chain of SCALE nodes; the callback fires after `after` checks: the nodes
// after that point must not run.
struct abort_state { int calls; int after; };
static int abort_after(void * data) {
    abort_state * s = (abort_state *) data;
    return ++s->calls > s->after;
}

static void test_abort(int32_t n) {
    tern_threadpool * pool = test_pool(n);
    test_graph tg;
    tern_tensor * x = test_input(&tg.gb, TERN_TYPE_F32, 1, { 64 });
    tern_tensor * chain[6];
    tern_tensor * cur = x;
    for (int i = 0; i < 6; i++) {
        cur = chain[i] = tg_scale(&tg.gb, cur, 2.0f);
        cur->flags |= TERN_TENSOR_OUTPUT;  // keep every result (no reuse of its bytes)
    }
    CHECK(tg.plan_for({ cur }, n) == TERN_OK);
    // Markers first: the planner may reuse the input's bytes once node 0 has read it.
    for (int i = 0; i < 6; i++) ((float *) chain[i]->data)[0] = -1.0f;
    for (int i = 0; i < 64; i++) ((float *) x->data)[i] = 1.0f;
    // Check before node 0 passes (call 1), after node 0 passes (call 2), after node 1 fires (call 3).
    abort_state st = { 0, 2 };
    tern_status s = tern_graph_compute(&tg.g, pool, tg.align64(tg.work.data()), tg.work_bytes, abort_after, &st);
    CHECK(s == TERN_ERR_ABORTED);
    CHECK(((float *) chain[0]->data)[0] == 2.0f);
    CHECK(((float *) chain[1]->data)[0] == 4.0f);
    CHECK(((float *) chain[2]->data)[0] == -1.0f);
    CHECK(((float *) chain[5]->data)[0] == -1.0f);
    // Aborting before the first node runs nothing; no abort runs everything.
    st = { 0, 0 };
    CHECK(tern_graph_compute(&tg.g, pool, tg.align64(tg.work.data()), tg.work_bytes, abort_after, &st) == TERN_ERR_ABORTED);
    CHECK(((float *) chain[2]->data)[0] == -1.0f);
    st = { 0, 100 };
    for (int i = 0; i < 64; i++) ((float *) x->data)[i] = 1.0f;
    CHECK(tern_graph_compute(&tg.g, pool, tg.align64(tg.work.data()), tg.work_bytes, abort_after, &st) == TERN_OK);
    CHECK(((float *) chain[5]->data)[0] == 64.0f);
    tern_threadpool_free(pool);
}

// port_thread_keep_off_cpu (what a worker calls when it finds itself on the
// caller's CPU): the thread leaves that CPU, and a second call replaces the
// exclusion rather than adding to it. Needs two CPUs the test may use.
struct where_job {
    std::atomic<int> ask{ 0 };    // bumped by the test: report your CPU
    std::atomic<int> told{ 0 };   // bumped by the thread with `cpu` written
    std::atomic<int> cpu{ -1 };
    std::atomic<bool> stop{ false };
};

static void * where_fn(void * arg) {
    where_job * j = (where_job *) arg;
    int seen = 0;
    while (!j->stop.load()) {
        if (j->ask.load() == seen) {
            std::this_thread::yield();
            continue;
        }
        seen = j->ask.load();
        j->cpu.store(tern::port_current_cpu());
        j->told.fetch_add(1);
    }
    return NULL;
}

static int where_now(where_job * j) {
    const int want = j->told.load() + 1;
    j->ask.fetch_add(1);
    while (j->told.load() < want) std::this_thread::yield();
    return j->cpu.load();
}

static void test_keep_off_cpu() {
    if (!TERN_WITH_THREADS || tern::port_cpus_allowed() < 2 || tern::port_current_cpu() < 0) {
        printf("keep_off_cpu: needs threads, two CPUs and sched_getcpu: not run\n");
        return;
    }
    std::vector<uint8_t> mem(tern::port_thread_size() + 64);
    tern::port_thread * t = (tern::port_thread *) (((uintptr_t) mem.data() + 63) & ~(uintptr_t) 63);
    where_job j;
    CHECK(tern::port_thread_start(t, where_fn, &j) == TERN_OK);
    const int c0 = where_now(&j);
    CHECK(c0 >= 0);
    CHECK(tern::port_thread_keep_off_cpu(t, c0) == 0);
    for (int i = 0; i < 20; i++) CHECK_MSG(where_now(&j) != c0, "still on CPU %d", c0);
    const int c1 = where_now(&j);
    CHECK(tern::port_thread_keep_off_cpu(t, c1) == 0);  // c0 is allowed again, c1 not
    for (int i = 0; i < 20; i++) CHECK_MSG(where_now(&j) != c1, "still on CPU %d", c1);
    CHECK(tern::port_thread_keep_off_cpu(t, -1) != 0);
    j.stop.store(true);
    tern::port_thread_join(t);
}

// Work claiming (work_claim.h). One worker alone: its own range in order, then
// the next workers' ranges, each item once.
static void test_claim_order() {
    tern::tern_claim_counter counters[3];
    for (auto & c : counters) c.next.store(0);
    tern::tern_claim_cursor cur = { 0 };
    int64_t item, got[16], n_got = 0;
    while (tern::tern_claim_next(counters, 1, 3, 10, &cur, &item) && n_got < 16) got[n_got++] = item;
    const int64_t want[10] = { 3, 4, 5, 6, 7, 8, 9, 0, 1, 2 };  // ranges [0,3) [3,6) [6,10)
    CHECK(n_got == 10);
    for (int64_t i = 0; i < 10 && i < n_got; i++) CHECK_MSG(got[i] == want[i], "claim %d: %d, want %d", (int) i, (int) got[i], (int) want[i]);
    CHECK(!tern::tern_claim_next(counters, 1, 3, 10, &cur, &item));  // exhausted stays exhausted
    for (auto & c : counters) c.next.store(0);
    tern::tern_claim_cursor none = { 0 };
    CHECK(!tern::tern_claim_next(counters, 0, 3, 0, &none, &item));  // no items
}

// Every worker claims through the pool's counters as the executor does (set
// k % 2 for node k, its own counter of the other set zeroed meanwhile), over
// nodes of many sizes; the last worker starts late on some nodes, so the others
// must take its range. Every item is claimed exactly once.
struct claim_job {
    tern_threadpool * pool;
    std::atomic<int> hits[1000];
    std::atomic<int> stolen;   // items of the last worker's range claimed by another
    std::atomic<int> errors;
};

static const int64_t k_claim_sizes[] = { 0, 1, 2, 7, 64, 1000, 3, 999 };

static void claim_fn(int32_t ith, int32_t nth, void * arg) {
    claim_job * j = (claim_job *) arg;
    tern::tern_claim_counter * claims = tern_threadpool_claims(j->pool);
    const int n_nodes = (int) (sizeof(k_claim_sizes) / sizeof(k_claim_sizes[0]));
    for (int k = 0; k < n_nodes; k++) {
        claims[((k + 1) & 1) * nth + ith].next.store(0, std::memory_order_relaxed);
        if (ith == nth - 1 && nth > 1 && (k & 1)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const int64_t n = k_claim_sizes[k];
        tern::tern_claim_cursor cur = { 0 };
        int64_t item;
        while (tern::tern_claim_next(claims + (k & 1) * nth, ith, nth, n, &cur, &item)) {
            if (item < 0 || item >= n) { j->errors.fetch_add(1); break; }
            j->hits[item].fetch_add(1);
            if (ith != nth - 1 && item >= n * (nth - 1) / nth) j->stolen.fetch_add(1);
        }
        tern_threadpool_barrier(j->pool);
        if (ith == 0) {
            for (int64_t i = 0; i < n; i++) {
                if (j->hits[i].load() != 1) j->errors.fetch_add(1);
                j->hits[i].store(0);
            }
        }
        tern_threadpool_barrier(j->pool);
    }
}

static void test_claims(int32_t n) {
    tern_threadpool * pool = test_pool(n, 1 << 10);
    CHECK(pool != NULL);
    if (!pool) return;
    static claim_job j;
    j.pool = pool;
    for (auto & h : j.hits) h.store(0);
    j.stolen.store(0);
    j.errors.store(0);
    for (int r = 0; r < 5; r++) tern_threadpool_run(pool, claim_fn, &j);
    CHECK_MSG(j.errors.load() == 0, "n=%d: %d items not claimed exactly once", n, j.errors.load());
    // 5 ms late on 1000 items: the others take part of the late worker's range.
    if (tern_threadpool_n_threads(pool) > 1) CHECK_MSG(j.stolen.load() > 0, "n=%d: nothing taken from a late worker", n);
    tern_threadpool_free(pool);
}

int main() {
    for (int32_t n : { 1, 2, 3, 8 }) {
        test_kickoffs_and_barrier(n, 1 << 10);
        test_kickoffs_and_barrier(n, 0);
        test_abort(n);
        test_claims(n);
    }
    test_claim_order();
    test_sleep_and_wake();
    test_init_in();
    test_keep_off_cpu();
    return tern_test_summary();
}
