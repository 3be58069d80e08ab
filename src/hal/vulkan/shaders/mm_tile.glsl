// The tiled MUL_MAT shaders' shared steps (mul_mat.comp, mul_mat_idot.comp:
// 256 threads, a tile of T weight rows x T activation rows, thread
// (tx, ty) = (tid % 16, tid / 16) holding the TT x TT outputs
// (tx + 16 i, ty + 16 j)). Included after the shaders' declarations of T, TT,
// sh_seg[T * 4] and sh_q[T].

#if !ACT_F32 && !ACT_BF16
// At the start of each activation block (QKA values at k0) the tile's rows'
// rounding parameters (act.glsl), as one thread scanning the block gives them:
// four threads a row scan its quarters, and the row's thread joins the four
// scans in order; sh_q[r] = (id, d, s) of row m0 + r.
void tile_act_params(uint tid, uint m0, uint k0) {
    {
        const uint r = tid / 4u, s = tid % 4u;
        if (r < T && m0 + r < p.M) {
            const vec3 sc = act_scan((x_row(m0 + r) >> 2) + k0 + s * (QKA / 4u), QKA / 4u);
            sh_seg[tid] = vec2(sc.z != 0.0 ? sc.x : INF, sc.y);   // a non-finite piece as amax Inf
        }
    }
    barrier();
    if (tid < T) {
        vec4 q = vec4(0.0);
        if (m0 + tid < p.M) {
            vec3 sc = vec3(0.0, 0.0, 1.0);   // the scan of no values
            [[unroll]] for (uint s = 0u; s < 4u; s++) {
                const vec2 g = sh_seg[4u * tid + s];
                sc = act_join(sc, vec3(g, isinf(g.x) ? 0.0 : 1.0));
            }
            q.xy = act_params_of(sc);
#if QDOT_AFFINE
            q.z = act_s(x_row(m0 + tid) + k0 * 4u, q.xy);
#endif
        }
        sh_q[tid] = q;
    }
    barrier();
}
#endif

// The thread's outputs of the tile at (n0, m0) (n0 counts the window's rows).
void tile_store(uint n0, uint m0, uint tx, uint ty, float acc[TT * TT]) {
    [[unroll]] for (uint j = 0u; j < TT; j++) {
        [[unroll]] for (uint i = 0u; i < TT; i++) {
            const uint n = n0 + tx + 16u * i, m = m0 + ty + 16u * j;
            if (n < p.n_count && m < p.M) mm_store(p.n_base + n, m, acc[j * TT + i]);
        }
    }
}
