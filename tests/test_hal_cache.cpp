// The captured-graph cache on its own (src/hal/graph_cache.h), with fake
// graphs (issue 20):
// - LRU: capacity 2 and three keys alternating A B C A B C evict in LRU order
//   (A, then B, then C, ... each released exactly once), every lookup a miss;
//   with A B A C the entry evicted is B (A was used last);
// - a match needs every property: changing one alone (an address, a buffer,
//   a shape, a stride, an op param, a type, the op, a copy's size or host
//   end, the number of commands) is a miss, and the unchanged records still hit;
// - an entry without a graph (a failed capture) hits and keeps no graph;
// - records longer than an entry holds are never cached.
#include <vector>
#include "check.h"
#include "core/arena.h"
#include "hal/graph_cache.h"

using namespace tern;
using namespace tern::hal;

namespace {

std::vector<int> g_released;  // fake graph ids released, in order

void release(void *, int32_t, tern_hal_graph * g) { g_released.push_back((int) (intptr_t) g); }

tern_hal_graph * fake(int id) { return (tern_hal_graph *) (intptr_t) id; }

tern_hal_buffer * buf(int id) { return (tern_hal_buffer *) (intptr_t) (0x1000 * id); }

// Records of a fake split: an input copy, two launches, an output copy.
std::vector<gc_record> records(int key) {
    std::vector<gc_record> r(4);
    for (gc_record & x : r) memset(&x, 0, sizeof(x));
    static const char host[64] = {0};
    r[0].kind = GC_H2D;
    r[0].dst_buf = buf(1);
    r[0].dst_off = 64 * (uint64_t) key;
    r[0].host = host;
    r[0].size = 128;
    for (int k = 1; k <= 2; k++) {
        tern_hal_op_desc & d = r[k].op;
        r[k].kind = GC_LAUNCH;
        d.op = k == 1 ? TERN_HAL_OP_RMS_NORM : TERN_HAL_OP_MUL_MAT;
        d.params[0] = 7;
        d.dst.type = TERN_TYPE_F32;
        d.dst.ne[0] = 32;
        d.dst.ne[1] = d.dst.ne[2] = d.dst.ne[3] = 1;
        d.dst.nb[0] = 4;
        d.dst.nb[1] = d.dst.nb[2] = d.dst.nb[3] = 128;
        d.dst.buffer = buf(2);
        d.dst.offset = 256;
        for (int s = 0; s < TERN_HAL_MAX_SRC; s++) d.src[s].type = TERN_HAL_TYPE_NONE;
        d.src[0] = d.dst;
        d.src[0].offset = 512;
    }
    r[3].kind = GC_D2H;
    r[3].src_buf = buf(2);
    r[3].src_off = 256;
    r[3].host = host + 32;
    r[3].size = 128;
    return r;
}

struct cache_fixture {
    std::vector<uint8_t> mem;
    tern_arena arena;
    graph_cache c;
    explicit cache_fixture(int capacity, int max_records = 8) : mem(gc_mem_size(capacity, max_records) + 256) {
        arena_init(&arena, mem.data(), mem.size());
        CHECK(gc_init(&c, &arena, capacity, max_records, release, NULL) == TERN_OK);
        g_released.clear();
    }
    int lookup(const std::vector<gc_record> & r) { return gc_lookup(&c, r.data(), (int32_t) r.size(), gc_hash(r.data(), (int32_t) r.size())); }
    int insert(const std::vector<gc_record> & r, int id) {
        return gc_insert(&c, r.data(), (int32_t) r.size(), gc_hash(r.data(), (int32_t) r.size()), 0, id ? fake(id) : NULL, NULL);
    }
};

void test_lru_order() {
    cache_fixture f(2);
    const std::vector<gc_record> key[3] = { records(1), records(2), records(3) };
    int misses = 0;
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 3; k++) {
            if (f.lookup(key[k]) < 0) {
                misses++;
                CHECK(f.insert(key[k], 10 * round + k + 1) >= 0);
            }
        }
    }
    CHECK(misses == 9);  // capacity 2, three alternating graphs: nothing survives to its next use
    CHECK(f.c.evictions == 7);
    const std::vector<int> want = { 1, 2, 3, 11, 12, 13, 21 };  // the least recently used goes first, each once
    CHECK_MSG(g_released == want, "released %zu graphs", g_released.size());

    cache_fixture g(2);
    CHECK(g.insert(key[0], 1) >= 0);
    CHECK(g.insert(key[1], 2) >= 0);
    CHECK(g.lookup(key[0]) >= 0);  // A used: B is now the least recent
    CHECK(g.insert(key[2], 3) >= 0);
    CHECK(g_released.size() == 1 && g_released[0] == 2);
    CHECK(g.lookup(key[0]) >= 0);
    CHECK(g.lookup(key[1]) < 0);
    CHECK(g.lookup(key[2]) >= 0);
    gc_clear(&g.c);
    CHECK(g_released.size() == 3);
}

// One property changed: a miss; the original still hits.
void test_property(const char * what, void (*change)(std::vector<gc_record> &)) {
    cache_fixture f(4);
    const std::vector<gc_record> base = records(1);
    CHECK(f.insert(base, 1) >= 0);
    std::vector<gc_record> changed = base;
    change(changed);
    CHECK_MSG(f.lookup(changed) < 0, "changing %s alone still matched", what);
    CHECK_MSG(f.lookup(base) >= 0, "%s: the unchanged records missed", what);
}

void test_properties() {
    test_property("the output's address", [](std::vector<gc_record> & r) { r[1].op.dst.offset += 64; });
    test_property("an input's address", [](std::vector<gc_record> & r) { r[2].op.src[0].offset += 64; });
    test_property("an input's buffer", [](std::vector<gc_record> & r) { r[2].op.src[0].buffer = buf(9); });
    test_property("a shape", [](std::vector<gc_record> & r) { r[1].op.dst.ne[1] = 2; });
    test_property("an input's shape", [](std::vector<gc_record> & r) { r[2].op.src[0].ne[0] = 64; });
    test_property("a stride", [](std::vector<gc_record> & r) { r[2].op.dst.nb[1] = 256; });
    test_property("an op param", [](std::vector<gc_record> & r) { r[1].op.params[0] = 8; });
    test_property("a type", [](std::vector<gc_record> & r) { r[2].op.src[0].type = TERN_TYPE_F16; });
    test_property("a layout", [](std::vector<gc_record> & r) { r[2].op.src[0].layout = 1; });
    test_property("the op", [](std::vector<gc_record> & r) { r[1].op.op = TERN_HAL_OP_SCALE; });
    test_property("a copy's size", [](std::vector<gc_record> & r) { r[0].size = 64; });
    test_property("a copy's host end", [](std::vector<gc_record> & r) { r[3].host = (const char *) r[3].host + 4; });
    test_property("a copy's device end", [](std::vector<gc_record> & r) { r[3].src_off += 128; });
    test_property("the node count", [](std::vector<gc_record> & r) { r.insert(r.begin() + 2, r[1]); });
    test_property("one node fewer", [](std::vector<gc_record> & r) { r.erase(r.begin() + 1); });
}

void test_failed_and_large() {
    cache_fixture f(2, 4);
    const std::vector<gc_record> a = records(1);
    CHECK(f.insert(a, 0) >= 0);  // a failed capture: no graph
    const int e = f.lookup(a);
    CHECK(e >= 0);
    CHECK(e >= 0 && f.c.entries[e].graph == NULL);
    std::vector<gc_record> big = records(2);
    big.push_back(big[1]);  // 5 commands, the entries hold 4
    CHECK(f.insert(big, 7) < 0);
    CHECK(f.lookup(big) < 0);
    cache_fixture none(0);
    CHECK(none.insert(a, 1) < 0);  // capacity 0: capture off
}

}  // namespace

int main() {
    test_lru_order();
    test_properties();
    test_failed_and_large();
    return tern_test_summary();
}
