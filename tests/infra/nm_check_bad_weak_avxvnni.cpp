// Known-bad input for nm_check.sh's fifth check: this file (an avxvnni
// kernel set's file by its name) and nm_check_bad_weak_baseline.cpp (a file
// of no set) define the same inline function, one weak symbol the linker
// would take from either: the check must know the avxvnni set's files.
namespace tern {
__attribute__((noinline)) inline int bad_weak_vnni(int x) { return 5 * x + 2; }
int bad_weak_user_avxvnni(int x) { return bad_weak_vnni(x); }
}  // namespace tern
