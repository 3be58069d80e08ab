/* The firmware example's only contact with its board: write text, stop.
 * fw_io_posix.c implements them for Linux (write(2), exit), board/
 * fw_io_semihost.c for a Cortex-M under a debugger or QEMU. */
#ifndef FW_IO_H
#define FW_IO_H

#include <stddef.h>

void fw_write(const char * text, size_t n);
void fw_exit(int status);

#endif
