// The sim device: a software accelerator that makes every path of the HAL
// testable on a CPU-only machine (TERN_DEVICES=sim).
//
// It behaves like a discrete accelerator:
//   memory  its own: every buffer is a block the sim allocates (weights, KV
//           cache and activations placed there are copies, never aliases of
//           host memory); only STAGING buffers are host-visible, and host
//           memory is never imported, so the core must copy everything.
//   queue   its own worker thread consumes a ring of commands in order
//           (copies, launches, replays); calls return as soon as the command
//           is queued, errors surface at synchronize / event_wait.
//   kernels Tern's CPU kernels, one op at a time on the worker
//           (tern_node_compute): with the kernel set the CPU path uses, its
//           results are bit-identical to the CPU path's.
//   events  a queue position; event_wait waits until the worker passed it.
//   capture records copies and launches into a command list from a fixed
//           pool; replay queues the list as one entry (one submission).
//   counts  submissions, launches, copies and bytes each way, captures and
//           replays (tern_hal_counters), for the core to cross-check.
//
// Test knobs, in the device spec's params ("sim0:refuse=ATTN+ROPE;mem=64M"):
//   refuse=OP[+OP...]  ops supports_op refuses (the CPU runs them: fallback)
//   mem=BYTES[K|M|G]   memory the device has (default 2G); allocations past it fail
//   fail_alloc=N       the N-th buffer allocation fails (1-based)
//   fail_launch=N      the N-th op the worker runs fails (eager or replayed), once
//   min_batch=N        op-offload threshold (caps.op_offload_min_batch, default 32)
//   graphs=N, cmds=N   capture pool: N graphs of at most cmds commands (16, 4096);
//                      a capture that needs more fails (the core then runs eagerly)
//   no_capture, no_events  caps without them
// An unknown knob or value is an error at open naming it.
#pragma once
#include "tern_hal.h"

namespace tern {
namespace hal {

const tern_hal_device_desc * sim_device_desc(void);

}  // namespace hal
}  // namespace tern
