// Known-bad input for nm_check.sh's fifth check: the baseline twin of
// nm_check_bad_weak_avxvnni.cpp (that file says why).
namespace tern {
__attribute__((noinline)) inline int bad_weak_vnni(int x) { return 5 * x + 2; }
int bad_weak_user_baseline(int x) { return bad_weak_vnni(x); }
}  // namespace tern
