// Repacking: the matmul weights rewritten, once at load, into the CPU kernel
// set's row-interleaved layouts (kernel_set.h: repack_rows / repack).
//
// Which: the attention and FFN projections of every layer and the output
// matrix that the CPU runs (placement comes first: weights placed on a
// device are copied there in the file layout and the CPU leaves them be),
// where the kernel set in use has a layout for the type (avx512: Q4_0 Q4_1
// Q5_0 Q5_1 Q8_0 IQ4_NL Q4_K Q5_K Q6_K; avx2 the same but IQ4_NL). A token
// embedding tied to an output the CPU runs is repacked too where the set can
// give single rows back for get_rows (unpack_row); an untied embedding (or
// one whose output runs on a device) is only read by get_rows and stays.
// A rewritten weight's layout becomes CPU_LAYOUT_INTERLEAVED.
//
// Where: in place, group by group through a small scratch of one group's
// rows, taken from the model arena's temp region (sized at load from the
// header by model_repack_group_bytes over every tensor: no heap). The layouts take exactly the bytes of the rows they replace, so the
// model holds its weights once:
//   read path  the load buffer is the process's own memory;
//   mmap path  the mapping is private: the span of the rewritten tensors
//              becomes the process's own memory first (port_mem_own: on Linux
//              copied into transparent huge pages that replace the mapping's
//              pages, 5-9% faster decode than 4 KiB copy-on-write pages; a
//              locked mapping is made writable in place), the file is never
//              written, and the page-cache pages of that span are no longer
//              mapped;
//   blob path  never (the caller's memory may be flash or read-only).
// tern_model_params.repack = 0 keeps every weight in the file layout.
#pragma once
#include "model/model.h"

namespace tern {

// Bytes of one group of rows the kernel set in use repacks for a tensor of
// this type and shape (0: not repacked): the scratch the rewrite needs.
size_t model_repack_group_bytes(tern_type type, int32_t n_dims, const int64_t * ne);

// report(user, done) after each rewritten weight, done in [0, 1] by bytes;
// false from it cancels (TERN_ERR_CANCELLED). report may be NULL.
typedef bool (*model_repack_report)(void * user, float done);
tern_status model_repack_weights(tern_model * m, model_repack_report report, void * user);

}  // namespace tern
