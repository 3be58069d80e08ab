/* Known-bad input for nm_check's self-test: a static constructor, and nothing
 * else wrong (no C++ runtime symbol), so only that check can catch it. */
int nm_check_bad_ctor_value;
__attribute__((constructor)) static void nm_check_bad_ctor(void) { nm_check_bad_ctor_value = 1; }
