/* Built against an installed Tern (CMake package and pkg-config): it calls only
 * what needs no model so that it runs anywhere the install does. */
#include <stdio.h>
#include <string.h>

#include "tern.h"

int main(void) {
    tern_model_params mp = tern_model_default_params();
    tern_context_params cp = tern_context_default_params();
    tern_sampler_params sp = tern_sampler_default_params();
    const char * q8 = tern_type_name(TERN_TYPE_Q8_0);
    int ok = strcmp(tern_status_str(TERN_OK), "ok") == 0 &&
             strcmp(tern_status_str(TERN_ERR_NO_MEMORY), tern_status_str(TERN_ERR_IO)) != 0 &&
             q8 != NULL && strcmp(q8, "Q8_0") == 0 &&
             cp.n_batch > 0 && sp.repeat_penalty == 1.0f;
    printf("tern %s: %s, use_mmap %d, n_batch %u, type %s\n", TERN_VERSION, ok ? "ok" : "FAILED",
           mp.use_mmap, (unsigned) cp.n_batch, q8 ? q8 : "(null)");
    return ok ? 0 : 1;
}
