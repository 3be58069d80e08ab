#!/bin/sh
# Seeds of fuzz_tokenize in DIR: for each vocabulary index (byte 0) and both
# special-token modes (byte 1), a short mixed text: ASCII, digits, a special
# token, accented Latin and CJK.
set -e
dir=$1
rm -rf "$dir" && mkdir -p "$dir"
for v in 0 1 2 3 4 5 6 7 8 9 10 11; do
  for f in 0 3; do
    { printf "\\$(printf %o "$v")\\$(printf %o "$f")"
      printf 'Hello world! <s> 123  \303\251t\303\251 \344\275\240\345\245\275\n'; } > "$dir/seed-$v-$f"
  done
done
