// Known-bad input for nm_check.sh's fifth check: this file and its twin
// (nm_check_bad_weak_avx2.cpp / _avx512.cpp) stand for two kernel sets'
// files; both define the same inline function, one weak symbol the linker
// would take from either.
namespace tern {
__attribute__((noinline)) inline int bad_weak_twice(int x) { return 3 * x + 1; }
int bad_weak_user_avx2(int x) { return bad_weak_twice(x); }
}  // namespace tern
