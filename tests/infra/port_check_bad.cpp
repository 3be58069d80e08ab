// A known-bad object for port_check: stdio, the heap and thread-local storage
// outside port/. port_check must fail on the archive built from it.
#include <stdio.h>
#include <stdlib.h>

static thread_local int g_bad_tls;
void * port_check_bad_kept;   // the allocation escapes: the compiler cannot drop it

extern "C" int port_check_bad(const char * path) {
    FILE * f = fopen(path, "rb");
    port_check_bad_kept = malloc(16);
    g_bad_tls++;
    if (f) fclose(f);
    return g_bad_tls;
}
