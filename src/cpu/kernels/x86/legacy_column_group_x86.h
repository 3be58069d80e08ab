// The legacy-format GEMM drivers' shared part (gemm_legacy_avx2.cpp, LANES = 8
// rows a row vector; gemm_legacy_avx512.cpp, 16): the row vectors the tiles read
// their weights through, and one column group's walk over the rows.
//
// Included by each file after its LANES, UNROLL, act_qs<F>, block_sum and
// tile<F, RV, NC> (the file's tile choice for a format), so each file compiles
// its own copy with its own target flags, in its anonymous namespace
// (column_blocks.h says why).
#pragma once   // (included inside the file's namespaces, once)

// The LANES rows of a row vector, walked in order once per block. Full tiles
// step one pointer by the row stride (the empty asm keeps the compiler from
// holding every row address in a register of its own, and at 16 rows from
// reloading them); the short last tile of a call reads a list of rows, those
// past the end repeating the last one.
struct rows_strided {
    const uint8_t * base;
    size_t stride;
    struct cursor {
        const uint8_t * p;
        size_t stride;
        const uint8_t * at() const { return p; }
        void next() {
            p += stride;
            __asm__("" : "+r"(p));
        }
    };
    cursor first(size_t bo) const { return cursor{base + bo, stride}; }
};
struct rows_list {
    const uint8_t * p[LANES];
    struct cursor {
        const uint8_t * const * p;
        size_t bo;
        int r;
        const uint8_t * at() const { return p[r] + bo; }
        void next() { r++; }
    };
    cursor first(size_t bo) const { return cursor{p, bo, 0}; }
};

// Activation block sums kept on the stack per column group (8 KiB); a longer
// row has them computed in the tile.
const int YSUM_CAP = 4096;

// One column group: NC columns from a, over all nr rows: full tiles of RV row
// vectors, then what is left in tiles of one row vector (the last one short,
// its missing rows repeating the last row).
template <typename F, int NC, int RV>
void column_group(int64_t nb, int64_t nr, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride,
                  int16_t * ysum, float * out, int64_t ldo) {
    const uint8_t * ap[NC];
    UNROLL
    for (int c = 0; c < NC; c++) ap[c] = a + (size_t) c * a_stride;
    const int16_t * ys = nullptr;
    if constexpr (!F::lanes8 && F::off != 0) {
        if (nb * NC <= YSUM_CAP) {
            for (int64_t b = 0; b < nb; b++)
                for (int c = 0; c < NC; c++) ysum[b * NC + c] = (int16_t) block_sum(act_qs<F>(ap[c] + b * sizeof(typename F::act)));
            ys = ysum;
        }
    }
    int64_t r0 = 0;
    for (; r0 + RV * LANES <= nr; r0 += RV * LANES) {
        rows_strided rv[RV];
        UNROLL
        for (int v = 0; v < RV; v++) rv[v] = rows_strided{w + (size_t) (r0 + v * LANES) * w_stride, w_stride};
        tile<F, RV, NC>(nb, rv, ap, ys, out + r0, ldo, RV * LANES);
    }
    for (; r0 < nr; r0 += LANES) {
        const int nrv = nr - r0 < LANES ? (int) (nr - r0) : LANES;
        rows_list rv[1];
        UNROLL
        for (int i = 0; i < LANES; i++) rv[0].p[i] = w + (size_t) (r0 + (i < nrv ? i : nrv - 1)) * w_stride;
        tile<F, 1, NC>(nb, rv, ap, ys, out + r0, ldo, nrv);
    }
}
