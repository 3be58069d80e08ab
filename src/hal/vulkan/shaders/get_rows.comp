#version 450
// GET_ROWS: dst row i = fp32(table row ids[i]) for ids in [row_lo, row_hi);
// an id outside [0, n_rows) gives a zero row (written by the dispatch with
// zero_oob set). A table larger than one binding is bound a window of rows
// at a time, one dispatch per window (row_lo..row_hi; the table binding
// starts at row row_lo). One workgroup per output row, threads over its values.
#include "common.glsl"
layout(local_size_x = 64) in;
BIND_F32(0, d, writeonly)
BIND_F32(1, s0, readonly)
BIND_U16(1, s0, readonly)
BIND_U32(2, ids, readonly)
layout(push_constant) uniform PC {
    uint o_d, o_t, o_i;     // byte offsets in the bindings
    uint ne0, n_rows;       // row length, table rows
    uint nb_t1, nb_i0, nb_d1;
    uint n;                 // rows to write
    uint row_lo, row_hi, zero_oob;
} p;
#include "dequant.glsl"

void main() {
    const uint i = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (i >= p.n) return;
    const int id = int(ids_w[(p.o_i + i * p.nb_i0) >> 2]);
    const uint out0 = (p.o_d + i * p.nb_d1) >> 2;
    if (id < 0 || uint(id) >= p.n_rows) {
        if (p.zero_oob != 0u) for (uint e = gl_LocalInvocationID.x; e < p.ne0; e += 64u) d_f[out0 + e] = 0.0;
        return;
    }
    if (uint(id) < p.row_lo || uint(id) >= p.row_hi) return;
    const uint row = p.o_t + (uint(id) - p.row_lo) * p.nb_t1;
    for (uint e = gl_LocalInvocationID.x; e < p.ne0; e += 64u) d_f[out0 + e] = dequant(row, e);
}
