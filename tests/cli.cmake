# The CLI as a user runs it (needs the `tern` executable).
if(TARGET tern_cli)
  tern_add_test(NAME test_cli SOURCES test_cli.cpp SHARED)
  if(TARGET test_cli)
    add_dependencies(test_cli tern_cli)
    include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
    tern_emulated_bin_dir(test_cli tern_cli)  # cross builds: `tern` runs under qemu
  endif()
endif()

# tern run's context shift and Self-Extend bookkeeping (examples/cli/run_context.cpp).
tern_add_test(NAME test_run_context SOURCES test_run_context.cpp ${PROJECT_SOURCE_DIR}/examples/cli/run_context.cpp SHARED)
target_include_directories(test_run_context PRIVATE ${PROJECT_SOURCE_DIR}/examples/cli)

# tern chat: templates, messages files, and a real terminal session (tmux).
if(TARGET tern_cli)
  tern_add_test(NAME test_chat_cli SOURCES test_chat_cli.cpp SHARED)
  add_dependencies(test_chat_cli tern_cli)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated_bin_dir(test_chat_cli tern_cli)  # cross builds: `tern` runs under qemu
endif()

# The firmware example against the CLI: the same story from the same model.
if(TARGET tern_firmware AND TARGET tern_cli)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated(tern_firmware fw_path)
  tern_emulated(tern_cli cli_path)
  add_test(NAME firmware_example
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/infra/firmware_test.sh ${fw_path} ${cli_path}
                   ${TERN_FIRMWARE_MODEL})
endif()

# Structured output from the CLI: grammars and JSON schemas in tern run and tern chat.
if(TARGET tern_cli AND TERN_JSON_SCHEMA)
  tern_add_test(NAME test_grammar_cli SOURCES test_grammar_cli.cpp SHARED)
  add_dependencies(test_grammar_cli tern_cli)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated_bin_dir(test_grammar_cli tern_cli)
endif()

# The option table (examples/cli/options.h) against tern and tern-bench: every
# flag accepted, with one meaning, by each command that lists it; --opt=value;
# "did you mean"; one-line errors; help generated from the table.
if(TARGET tern_cli AND TARGET tern-bench)
  tern_add_test(NAME test_cli_options SOURCES test_cli_options.cpp)
  target_link_libraries(test_cli_options PRIVATE tern_cli_options)
  add_dependencies(test_cli_options tern_cli tern-bench)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated_bin_dir(test_cli_options tern_cli tern-bench)
endif()
