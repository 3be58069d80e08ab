// The captured-graph cache: device graphs recorded once and replayed, kept in
// an LRU of fixed capacity (TERN_GRAPH_CACHE_SIZE, or the context's
// graph_cache), in memory fixed at context creation.
//
// A key is the whole list of commands a device split issues, in order: its
// input copies, its launches, its output copies. Each is a gc_record: for a
// launch the op, its params and, for the output and every input, type,
// shape, strides and buffer + offset (tern_hal_op_desc with the name
// cleared); for a copy the direction, both ends (buffer + offset, or the host
// address) and the size. Two splits match when they have the same number of
// commands and every record is equal, byte for byte: node count, ops, types,
// shapes, strides, op params and every address, as CANN's graph matching
// does. A 64-bit FNV-1a hash of the records rejects most candidates first.
//
//   lookup  hash, then the records compared in full; a hit moves the entry
//           to the front (most recently used).
//   insert  at the front; with the cache full the entry at the back (least
//           recently used) is evicted first (its device graph released by
//           the caller's release callback).
//   failed  an entry may hold no graph: its capture failed, and the split it
//           keys runs eagerly from then on (a lookup still hits it).
//
// Entries also keep what one replay moves and launches, so the counters of
// a replay are known without asking the device.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tern.h"
#include "tern_hal.h"
#include "core/arena.h"

namespace tern {
namespace hal {

enum { GC_LAUNCH = 0, GC_H2D, GC_D2H, GC_D2D };

struct gc_record {
    int32_t          kind;          // GC_*
    int32_t          pad;
    tern_hal_buffer * dst_buf, * src_buf;
    uint64_t         dst_off, src_off, size;
    const void *     host;          // the host end of a copy
    tern_hal_op_desc op;            // GC_LAUNCH (name NULL)
};

struct gc_stats {                    // what one replay does
    uint64_t launches, copies_h2d, copies_d2h, copies_d2d, bytes_h2d, bytes_d2h, bytes_d2d;
};

struct gc_entry {
    uint64_t         hash;
    int32_t          n_records;     // -1: empty
    int32_t          device;
    tern_hal_graph * graph;         // NULL: the capture failed (run eagerly)
    gc_stats         stats;
    uint32_t         generation;    // bumped each time the entry is filled
    int32_t          prev, next;    // LRU list (front: most recent)
};

typedef void (*gc_release_fn)(void * user, int32_t device, tern_hal_graph * graph);

struct graph_cache {
    gc_entry *    entries;          // [capacity]
    gc_record *   records;          // [capacity * max_records]
    int32_t       capacity;
    int32_t       max_records;      // commands one entry holds
    int32_t       front, back;      // -1: empty list
    int32_t       n_used;
    gc_release_fn release;
    void *        release_user;
    uint64_t      evictions;
};

size_t      gc_mem_size(int32_t capacity, int32_t max_records);
tern_status gc_init(graph_cache * c, tern_arena * arena, int32_t capacity, int32_t max_records, gc_release_fn release,
                    void * user);
uint64_t    gc_hash(const gc_record * r, int32_t n);
// The entry with these records (moved to the front), or -1.
int32_t     gc_lookup(graph_cache * c, const gc_record * r, int32_t n, uint64_t hash);
// Insert at the front (evicting the back when full); -1 when n > max_records
// or the capacity is 0 (the caller runs eagerly, uncached).
int32_t     gc_insert(graph_cache * c, const gc_record * r, int32_t n, uint64_t hash, int32_t device, tern_hal_graph * graph,
                      const gc_stats * stats);
// Move an entry to the front (a hit found without a lookup).
void        gc_touch(graph_cache * c, int32_t e);
// Release every graph (context free).
void        gc_clear(graph_cache * c);

}  // namespace hal
}  // namespace tern
