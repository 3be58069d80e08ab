# `tern info` on any valid GGUF: shared files, files Tern cannot run, broken files.
if(TARGET tern_cli)
  tern_add_test(NAME test_cli_info SOURCES test_cli_info.cpp SHARED)
  add_dependencies(test_cli_info tern_cli)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated_bin_dir(test_cli_info tern_cli)  # cross builds: `tern` runs under qemu
endif()
