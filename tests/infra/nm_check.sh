#!/usr/bin/env bash
# nm_check.sh <libtern.a> <C compiler> [TERN_SANITIZE value]
#
# Proves from the symbol tables that a static library links with a plain C
# driver (libc, libm, libpthread and the compiler's libgcc only):
#   1. no symbol of the C++ runtime is undefined (operator new/delete, __cxa_*,
#      __gxx_personality*, _Unwind_*, typeinfo/vtables, std::, __dso_handle);
#   2. every other undefined symbol that the archive does not define itself is
#      defined by what -lc, -lm, -lpthread bring in (the .so files, and the
#      archives their linker scripts name) or by libgcc.a;
#   3. no object has a non-empty .init_array/.preinit_array/.ctors section
#      (static constructors);
#   4. every global symbol it defines is tern_* (the C API) or inside
#      namespace tern, so it links beside llama.cpp and other libraries;
#   5. no weak symbol is defined both by a kernel set's object (its own
#      target flags) and by another set's or a baseline object.
# With sanitizers the runtime of the sanitizer is linked in: the check is
# skipped (still registered, exit 0).
set -u

if [ $# -lt 2 ]; then
    echo "usage: $0 <libtern.a> <C compiler> [sanitize]" >&2
    exit 2
fi
lib=$1
cc=$2
sanitize=${3:-}

if [ -n "$sanitize" ]; then
    echo "nm_check: skipped: TERN_SANITIZE=$sanitize links the sanitizer runtime into every program"
    exit 0
fi

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Names of symbols (POSIX nm format: "name type value size"; archive member
# headers end with ':').
symbols() { nm -P -g "$@" 2>/dev/null | awk 'NF >= 2 && $1 !~ /:$/ { print $1 }' | sort -u; }

if [ ! -f "$lib" ] || [ "$(ar t "$lib" 2>/dev/null | wc -l)" -eq 0 ]; then
    fail "$lib is not a readable archive with objects"
    echo "$passed passed, $failed failed"
    exit 1
fi
echo "archive: $lib ($(ar t "$lib" | wc -l) objects)"

symbols --defined-only "$lib" > "$tmp/defined"
symbols --undefined-only "$lib" > "$tmp/undefined"
comm -23 "$tmp/undefined" "$tmp/defined" > "$tmp/external"
echo "undefined outside the archive: $(wc -l < "$tmp/external") symbols"

# Which objects reference a symbol, for the failure message.
referenced_by() {
    nm -A -u "$lib" 2>/dev/null | awk -v s="$1" '$NF == s { sub(/: *$/, "", $1); print "    " $1 }' | head -5
}
report() {   # report <file of symbols>
    while read -r s; do
        echo "  $s ($(echo "$s" | c++filt 2>/dev/null || echo "$s"))"
        referenced_by "$s"
    done < "$1"
}

# --- 1. C++ runtime ----------------------------------------------------------
check_forbidden() {   # check_forbidden <what> <extended regex>
    grep -E "$2" "$tmp/external" > "$tmp/hits" || true
    if [ -s "$tmp/hits" ]; then
        fail "C++ runtime symbols undefined ($1): the library must not need libstdc++"
        report "$tmp/hits"
    else
        pass "no $1"
    fi
}
check_forbidden "operator new/delete" '^_Z(n[wa]|d[la])'
check_forbidden "C++ ABI runtime (__cxa_*, __gxx_personality*, _Unwind_*, __dso_handle)" \
    '^(__cxa_|__gxx_personality|_Unwind_|__dso_handle$)'
check_forbidden "typeinfo or vtables of runtime classes (_ZTI/_ZTS/_ZTV)" '^_ZT[ISV]'
check_forbidden "std:: or __gnu_cxx:: symbols" '^_Z(N[rVK]*)?S[tabsiod]|^_ZN[rVK]*9__gnu_cxx'

# --- 2. everything else comes from libc, libm, libpthread, libgcc ----------
# The files "-l<name>" resolves to: lib<name>.so, or, when that is a GNU ld
# script, every file its GROUP names (libc.so.6, libc_nonshared.a, ld.so, ...).
provider_files() {
    for name in c m pthread; do
        so=$("$cc" -print-file-name="lib$name.so")
        if [ -f "$so" ] && [ "$(head -c 4 "$so" | tr -d '\177')" != "ELF" ]; then
            grep '^ *GROUP' "$so" | tr ' ()' '\n\n\n' | grep '^/'
        elif [ -f "$so" ]; then
            echo "$so"
        else
            for v in 6 0; do
                f=$("$cc" -print-file-name="lib$name.so.$v")
                [ -f "$f" ] && echo "$f"
            done
        fi
    done
    "$cc" -print-libgcc-file-name
}
# The linker itself defines _GLOBAL_OFFSET_TABLE_ and _DYNAMIC (PIC code and
# thread-locals refer to them).
printf '%s\n' _GLOBAL_OFFSET_TABLE_ _DYNAMIC > "$tmp/provided"
provider_files | sort -u > "$tmp/providers"
while read -r f; do
    [ -f "$f" ] || continue
    echo "provider: $f"
    case "$f" in
        *.a) symbols --defined-only "$f" >> "$tmp/provided" ;;
        *)   nm -D --defined-only "$f" 2>/dev/null | awk '{ sub(/@.*/, "", $NF); print $NF }' >> "$tmp/provided" ;;
    esac
done < "$tmp/providers"
sort -u -o "$tmp/provided" "$tmp/provided"
if [ "$(wc -l < "$tmp/provided")" -le 2 ]; then
    fail "found no libc/libm/libpthread to check against with $cc"
else
    comm -23 "$tmp/external" "$tmp/provided" > "$tmp/unprovided"
    if [ -s "$tmp/unprovided" ]; then
        fail "undefined symbols that libc, libm, libpthread and libgcc do not provide:"
        report "$tmp/unprovided"
    else
        pass "all $(wc -l < "$tmp/external") external symbols come from libc, libm, libpthread or libgcc"
    fi
fi

# --- 4. no name a program could also define ------------------------------------
# Every global symbol the archive defines is the C API (tern_*) or inside
# namespace tern (_ZN4tern, also as a template argument of a std:: helper the
# compiler instantiated, which is weak): a program can link Tern beside
# llama.cpp (whose gguf_* and ggml_* it would otherwise meet).
nm -P -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 2 && $1 !~ /:$/ { print $1, $2 }' | sort -u |
    awk '$1 !~ /^tern_/ && $1 !~ /^_ZN4tern/ && !($2 ~ /^[WVwv]$/ && $1 ~ /4tern/) { print "  " $1 " (" $2 ")" }' > "$tmp/names"
if [ -s "$tmp/names" ]; then
    fail "global symbols outside the tern_ prefix and namespace tern:"
    head -20 "$tmp/names"
else
    pass "every global symbol is tern_* or in namespace tern"
fi

# --- 3. static constructors ---------------------------------------------------
# readelf -S -W: "  [Nr] Name Type Address Off Size ES Flg Lk Inf Al", one table
# per member after "File: lib.a(member.o)".
readelf -S -W "$lib" 2>/dev/null | awk '
    /^File: / { file = $2 }
    /^ *\[ *[0-9]+\]/ {
        line = $0
        sub(/^ *\[ *[0-9]+\] */, "", line)
        n = split(line, f, / +/)
        if (f[1] ~ /^\.(init_array|preinit_array|ctors)/ && f[5] !~ /^0+$/)
            print "  " file ": " f[1] " (" f[5] " bytes, hex)"
    }' > "$tmp/ctors"
if [ -s "$tmp/ctors" ]; then
    fail "static constructors (global objects with constructors or __attribute__((constructor))):"
    cat "$tmp/ctors"
else
    pass "no .init_array/.preinit_array/.ctors in any object"
fi

# --- 5. no weak symbol shared by objects compiled for different kernel sets ----
# The files of a kernel set (*_avx2, *_avxvnni, *_avx512, *_neon, *_dotprod, *_i8mm) are compiled with their
# own target flags. A weak (inline, template) symbol defined by one of them
# and also by an object of another set or of the baseline is one symbol to the
# linker, which keeps either body: the baseline or the avx2 set could then
# run AVX-512 code (or the avx512 set the slower avx2 tile). Templates
# instantiated with a set's own (anonymous-namespace) types are no exception:
# GCC mangles every file's anonymous namespace alike, so such a weak symbol
# is refused even where only one set defines it today.
nm -A --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[WVuwv]$/ {
        n = split($1, p, ":"); obj = p[n - 1]; g = "baseline"
        if (obj ~ /_avx512\./) g = "avx512"; else if (obj ~ /_avxvnni\./) g = "avxvnni"
        else if (obj ~ /_avx2\./) g = "avx2"; else if (obj ~ /_neon\./) g = "neon"
        else if (obj ~ /_dotprod\./) g = "dotprod"; else if (obj ~ /_i8mm\./) g = "i8mm"
        print $3, g, obj }' | sort -u > "$tmp/weak"
awk '{ if (!(($1, $2) in seen)) { seen[$1, $2] = 1; sets[$1]++; where[$1] = where[$1] " " $3 } }
     $2 != "baseline" && $1 ~ /_GLOBAL__N_/ { anon[$1] = 1 }
     END { for (s in sets) if (sets[s] > 1 || (s in anon)) print "  " s ":" where[s] }' "$tmp/weak" | sort > "$tmp/shared_weak"
if [ -s "$tmp/shared_weak" ]; then
    fail "weak symbols a kernel set's object shares with another set or the baseline (or names with an anonymous namespace):"
    head -20 "$tmp/shared_weak"
else
    pass "no weak symbol shared across kernel sets' objects"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
