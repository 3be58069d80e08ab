/* stories260K.gguf inside the image, in read-only data, 64-byte aligned (the
 * GGUF tensors need their type's alignment; the blob is never written).
 * FW_MODEL_PATH comes from CMake. */
    .section .rodata.fw_model, "a"
    .balign 64
    .global fw_model
fw_model:
    .incbin FW_MODEL_PATH
fw_model_end:
    .balign 4
    .global fw_model_size
fw_model_size:
    .long fw_model_end - fw_model
#if defined(__ELF__)
    .section .note.GNU-stack, "", %progbits
#endif
