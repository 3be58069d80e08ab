/* fw_write / fw_exit over Arm semihosting: the debugger (or QEMU with
 * -semihosting) prints the text and ends the run. On a board without a
 * debugger attached, replace this file with one writing to a UART. */
#include <stddef.h>
#include <stdint.h>

#include "fw_io.h"

static uintptr_t semihost(uintptr_t op, const void * arg) {
    register uintptr_t r0 __asm__("r0") = op;
    register const void * r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void fw_write(const char * s, size_t n) {
    char chunk[65];
    while (n > 0) {
        size_t k = n < sizeof(chunk) - 1 ? n : sizeof(chunk) - 1;
        for (size_t i = 0; i < k; i++) chunk[i] = s[i] ? s[i] : ' ';
        chunk[k] = 0;
        semihost(0x04, chunk); /* SYS_WRITE0 */
        s += k;
        n -= k;
    }
}

void fw_exit(int status) {
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with the status. */
    uintptr_t args[2] = {0x20026u, (uintptr_t) status};
    semihost(0x20, args);
    semihost(0x18, (const void *) (uintptr_t) 0x20026u); /* SYS_EXIT, if the host lacks the extended call */
    for (;;) {}
}

/* No heap on this board: newlib's malloc (which its printf family links in)
 * gets nothing. Tern itself never asks (every object is in a static array);
 * a call here would make malloc return NULL, never touch the stack. */
void * _sbrk(ptrdiff_t increment) {
    (void) increment;
    return (void *) -1;
}
