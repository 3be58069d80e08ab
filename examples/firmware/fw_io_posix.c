/* fw_write / fw_exit on Linux: write(2) to standard output, _exit. No stdio:
 * its buffer would be the program's only heap allocation. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <unistd.h>

#include "fw_io.h"

void fw_write(const char * text, size_t n) {
    while (n > 0) {
        ssize_t k = write(1, text, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        text += k;
        n -= (size_t) k;
    }
}

void fw_exit(int status) { _exit(status); }
