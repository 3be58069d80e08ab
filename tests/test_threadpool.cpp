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
// the next workers' ranges, each item once; a claim word of another step
// (another tag) is never claimed from.
static void test_claim_order() {
    tern::tern_claim_word words[3];
    for (auto & w : words) w.v.store(tern::step_word(5, 0));
    tern::tern_claim_cursor cur = { 0 };
    int64_t item, got[16], n_got = 0;
    while (tern::tern_claim_next(words, 5, 1, 3, 10, &cur, &item) && n_got < 16) got[n_got++] = item;
    const int64_t want[10] = { 3, 4, 5, 6, 7, 8, 9, 0, 1, 2 };  // ranges [0,3) [3,6) [6,10)
    CHECK(n_got == 10);
    for (int64_t i = 0; i < 10 && i < n_got; i++) CHECK_MSG(got[i] == want[i], "claim %d: %d, want %d", (int) i, (int) got[i], (int) want[i]);
    CHECK(!tern::tern_claim_next(words, 5, 1, 3, 10, &cur, &item));  // exhausted stays exhausted
    for (auto & w : words) w.v.store(tern::step_word(5, 0));
    tern::tern_claim_cursor none = { 0 };
    CHECK(!tern::tern_claim_next(words, 5, 0, 3, 0, &none, &item));  // no items
    // A late worker of step 4 finds the words holding step 5: nothing to claim.
    tern::tern_claim_cursor late = { 0 };
    CHECK(!tern::tern_claim_next(words, 4, 0, 3, 10, &late, &item));
    CHECK(tern::step_count(words[0].v.load()) == 0);
    // Words moved to step 6 while a worker of step 5 walks the ranges: it stops there.
    words[2].v.store(tern::step_word(6, 0));
    tern::tern_claim_cursor mid = { 0 };
    n_got = 0;
    while (tern::tern_claim_next(words, 5, 1, 3, 10, &mid, &item) && n_got < 16) got[n_got++] = item;
    CHECK(n_got == 3 && got[0] == 3 && got[2] == 5);
}

// Step jobs (tern_threadpool_run_steps). A job of steps of many sizes, some
// nodes with two phases; every item records itself. Checked: each item of
// each step runs exactly once, no item runs before every item of the step
// before it is done, `first` is set on exactly one item per worker and step,
// and the steps come in the order next() gives.
static const int64_t k_step_sizes[] = { 1, 2, 7, 64, 1000, 3, 999, 1, 40 };
#define N_STEPS ((int) (sizeof(k_step_sizes) / sizeof(k_step_sizes[0])))

struct step_job {
    std::atomic<int> hits[N_STEPS][1000];
    std::atomic<int> done[N_STEPS];
    std::atomic<int> firsts[N_STEPS][64];
    std::atomic<int> errors;
    std::atomic<int> stolen;          // items of the last worker's range computed by another
    int abort_after;                  // abort() true after this step (-1: never)
    bool late;                        // worker 1 sleeps late_ms in its first item of each job
    int late_ms;
    std::atomic<int> slept;           // jobs worker 1 slept in
    std::atomic<int32_t> slept_this_job;  // int, not bool: riscv64 GCC 12 has no inline 1-byte exchange (libatomic)
};

// Steps: every node has phase 0, odd nodes a phase 1 too.
static int step_of(int32_t node, int32_t phase) {
    // The steps in order: (0,0) (1,0) (1,1) (2,0) (3,0) (3,1) ... mapped onto k_step_sizes.
    int k = 0;
    for (int32_t nd = 0;; nd++) {
        for (int32_t ph = 0; ph <= (nd & 1); ph++) {
            if (nd == node && ph == phase) return k;
            k++;
        }
    }
}

static bool steps_next(const void * job, int32_t prev_node, int32_t prev_phase, int32_t * node, int32_t * phase, int64_t * n) {
    (void) job;
    int32_t nd = prev_node, ph = prev_phase + 1;
    if (prev_node < 0 || ph > (prev_node & 1)) { nd = prev_node + 1; ph = 0; }
    const int k = step_of(nd, ph);
    if (k >= N_STEPS) return false;
    *node = nd;
    *phase = ph;
    *n = k_step_sizes[k];
    return true;
}

static void steps_item(const void * job, int32_t ith, int32_t nth, int32_t node, int32_t phase, int64_t item, int64_t n, bool first) {
    step_job * j = (step_job *) job;
    const int k = step_of(node, phase);
    if (k >= N_STEPS || n != k_step_sizes[k] || item < 0 || item >= n) { j->errors.fetch_add(1); return; }
    if (k > 0 && j->done[k - 1].load() != k_step_sizes[k - 1]) j->errors.fetch_add(1);  // the step before is not over
    if (first) j->firsts[k][ith].fetch_add(1);
    if (j->late && ith == 1 && j->slept_this_job.exchange(1) == 0) {
        j->slept.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(j->late_ms));
    }
    if (j->late && k == 4) {   // items of a few microseconds: worker 1 has time to take one
        const auto t0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(2)) {}
    }
    if (ith != nth - 1 && nth > 1 && item >= n * (nth - 1) / nth) j->stolen.fetch_add(1);
    j->hits[k][item].fetch_add(1);
    j->done[k].fetch_add(1);
}

static bool steps_abort(const void * job, int32_t node, int32_t phase) {
    const step_job * j = (const step_job *) job;
    return j->abort_after >= 0 && step_of(node, phase) >= j->abort_after;
}

static const tern::tern_step_ops k_step_ops = { steps_next, steps_item, steps_abort };

static void step_job_reset(step_job * j) {
    for (auto & row : j->hits) for (auto & h : row) h.store(0);
    for (auto & d : j->done) d.store(0);
    for (auto & row : j->firsts) for (auto & f : row) f.store(0);
    j->errors.store(0);
    j->slept_this_job.store(0);
}

// Every step complete (up to `last`, none after), each item once, one first per worker that ran.
static int step_job_faults(step_job * j, int last) {
    int bad = j->errors.load();
    for (int k = 0; k < N_STEPS; k++) {
        for (int64_t i = 0; i < k_step_sizes[k]; i++) bad += j->hits[k][i].load() != (k <= last ? 1 : 0);
        for (int w = 0; w < 64; w++) bad += j->firsts[k][w].load() > 1;
    }
    return bad;
}

static void test_steps(int32_t n) {
    tern_threadpool * pool = test_pool(n, 1 << 10);
    CHECK(pool != NULL);
    if (!pool) return;
    static step_job j;
    j.abort_after = -1;
    j.late = false;
    j.stolen.store(0);
    for (int r = 0; r < 50; r++) {
        step_job_reset(&j);
        CHECK(tern::tern_threadpool_run_steps(pool, &k_step_ops, &j));
        const int bad = step_job_faults(&j, N_STEPS - 1);
        CHECK_MSG(bad == 0, "n=%d run %d: %d faults", n, r, bad);
        if (bad) break;
    }
    // Abort after step 3 (between steps): steps 0-3 whole, none after; the pool runs on.
    j.abort_after = 3;
    step_job_reset(&j);
    CHECK(!tern::tern_threadpool_run_steps(pool, &k_step_ops, &j));
    CHECK_MSG(step_job_faults(&j, 3) == 0, "n=%d: abort left steps half done or ran past it", n);
    j.abort_after = -1;
    step_job_reset(&j);
    CHECK(tern::tern_threadpool_run_steps(pool, &k_step_ops, &j));
    CHECK(step_job_faults(&j, N_STEPS - 1) == 0);
    tern_threadpool_free(pool);
}

// A worker descheduled inside an item (here: asleep in it for 50 ms) holds its
// one item, not the step: the others take the rest of its range, and it is
// benched (sits out the next jobs) so later jobs do not wait for it. Every
// job stays whole, and a benched worker comes back.
static void test_steps_late(int32_t n) {
    if (!TERN_WITH_THREADS || n < 2) return;
    tern_threadpool * pool = test_pool(n, 1 << 10);
    CHECK(pool != NULL);
    if (!pool) return;
    static step_job j;
    j.abort_after = -1;
    j.late = true;
    j.late_ms = 50;
    j.slept.store(0);
    j.stolen.store(0);
    tern::tern_threadpool_stats st0, st1, st2;
    tern::tern_threadpool_get_stats(pool, &st0);
    for (int r = 0; r < 10; r++) {
        step_job_reset(&j);
        CHECK(tern::tern_threadpool_run_steps(pool, &k_step_ops, &j));
        CHECK_MSG(step_job_faults(&j, N_STEPS - 1) == 0, "n=%d late run %d: faults", n, r);
    }
    tern::tern_threadpool_get_stats(pool, &st1);
    // Worker 1 may not have been scheduled at all on a loaded machine; when it slept in items of
    // two jobs, it was benched (once may escape: its item began after the waiter looked).
    if (j.slept.load() > 1) CHECK_MSG(st1.benched > st0.benched, "n=%d: a worker asleep in an item (%d jobs) was never benched", n, j.slept.load());
    if (j.slept.load() > 0) CHECK_MSG(j.stolen.load() > 0, "n=%d: nothing of a late worker's range taken", n);
    if (n == 2) CHECK_MSG(j.slept.load() > 0, "n=2: worker 1 took no item in 10 jobs");
    // A classic job needs every worker, a benched (asleep) one too.
    static count_job cj;
    for (auto & c : cj.calls) c.store(0);
    cj.bad_nth.store(0);
    cj.nth_expected = n;
    tern_threadpool_run(pool, count_fn, &cj);
    for (int32_t i = 0; i < n; i++) CHECK_MSG(cj.calls[i].load() == 1, "n=%d: worker %d ran a classic job %d times after a bench", n, i, cj.calls[i].load());
    // No more sleeping: the benched worker takes part again within BACKOFF_MAX jobs.
    j.late = false;
    for (int r = 0; r < 600; r++) {
        step_job_reset(&j);
        CHECK(tern::tern_threadpool_run_steps(pool, &k_step_ops, &j));
    }
    CHECK(step_job_faults(&j, N_STEPS - 1) == 0);
    tern::tern_threadpool_get_stats(pool, &st2);
    CHECK(st2.jobs == st1.jobs + 600);
    CHECK_MSG(st2.worker_jobs > st1.worker_jobs, "n=%d: benched workers never came back", n);
    tern_threadpool_free(pool);
}

int main() {
    for (int32_t n : { 1, 2, 3, 8 }) {
        test_kickoffs_and_barrier(n, 1 << 10);
        test_kickoffs_and_barrier(n, 0);
        test_abort(n);
        test_steps(n);
        test_steps_late(n);
    }
    test_claim_order();
    test_sleep_and_wake();
    test_init_in();
    test_keep_off_cpu();
    return tern_test_summary();
}
