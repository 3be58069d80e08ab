#!/usr/bin/env bash
# vulkan_no_driver.sh <tern> <model.gguf>
# `--device vulkan` where no Vulkan driver (or no loader) is present: tern run
# exits non-zero with one line on stderr that names what is missing. Two
# ways to have none on a machine that has both: a driver manifest list that
# points at nothing (VK_ICD_FILENAMES), and a loader path that does not exist
# (TERN_VULKAN_LOADER).
set -u
tern=$1
model=$2
passed=0
failed=0
check() {  # name, expected phrase, env...
    local name=$1 phrase=$2
    shift 2
    local err rc
    err=$(env "$@" "$tern" run -m "$model" -p hi -n 1 --device vulkan -ngl 99 2>&1 >/dev/null)
    rc=$?
    local lines
    lines=$(printf '%s\n' "$err" | grep -c .)
    if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && printf '%s' "$err" | grep -q "$phrase"; then
        echo "PASS: $name: exit $rc: $err"
        passed=$((passed + 1))
    else
        echo "FAIL: $name: exit $rc, $lines lines: $err"
        failed=$((failed + 1))
    fi
}
check "no driver" "no Vulkan driver" VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json
check "no loader" "no Vulkan loader: cannot open /nonexistent/libvulkan.so.1" TERN_VULKAN_LOADER=/nonexistent/libvulkan.so.1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
