// Known-bad input for nm_check's self-test: needs operator new from libstdc++.
int * nm_check_bad_new(int v) { return new int(v); }
