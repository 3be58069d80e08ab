# Saved state never lost nor wrongly accepted (issue 23): files replaced whole and
# only when they hold a state (library and tern run --prompt-cache).
tern_add_test(NAME test_state_files SOURCES test_state_files.cpp SHARED)
if(TARGET tern_cli AND TARGET test_state_files)
  add_dependencies(test_state_files tern_cli)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated_bin_dir(test_state_files tern_cli)  # cross builds: `tern` runs under qemu
endif()
# Saved states after any history: randomized sequence-op histories on
# stories260K and a phi3 window file, fingerprints of same-shape models,
# non-finite contents, window rollback (issue 23, items 3 to 6).
if("phi3" IN_LIST TERN_ARCHS AND "llama" IN_LIST TERN_ARCHS)
  tern_add_test(NAME test_state_history SOURCES test_state_history.cpp SHARED)
endif()
