/* Minimal Cortex-M start-up for the firmware example: the vector table, a
 * reset handler that enables the FPU (the code is hard-float), copies .data,
 * clears .bss and calls main, and a semihosting exit with main's status.
 * C99 plus GNU attributes; no vendor headers. */
#include <stdint.h>

extern uint32_t _data_load[], _data_start[], _data_end[], _bss_start[], _bss_end[];
/* The initial stack pointer (the linker script's _stack_top), declared as a
 * function so the vector table holds only function pointers (ISO C). */
extern void _stack_top(void);
int main(void);
void fw_exit(int status);

void Reset_Handler(void);
static void Fault_Handler(void) { fw_exit(3); }

__attribute__((section(".vectors"), used)) static void (*const g_vectors[16])(void) = {
    _stack_top, Reset_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,  /* NMI .. UsageFault */
    0, 0, 0, 0,
    Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,               /* SVC, DebugMon, PendSV, SysTick */
};

void Reset_Handler(void) {
    /* CPACR: full access to CP10 and CP11 (the FPU) before any float code runs. */
    volatile uint32_t * cpacr = (volatile uint32_t *) 0xE000ED88u;
    *cpacr |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    for (uint32_t * s = _data_load, * d = _data_start; d < _data_end;) *d++ = *s++;
    for (uint32_t * d = _bss_start; d < _bss_end;) *d++ = 0;
    fw_exit(main());
}
