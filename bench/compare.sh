#!/usr/bin/env bash
# compare.sh: Tern against llama.cpp on the same files, interleaved, one table.
#
#   bench/compare.sh --tern build/bin/tern-bench --llama /path/llama-bench \
#       -m a.gguf,b.gguf [-p 128] [-n 32] [-t 2] [-r 3] [--kernels avx2,avxvnni] [--bw /path/bw]
#
# Each of the -r rounds runs, for every model in turn, tern-bench (once per
# --kernels set, with TERN_KERNELS=set) and llama-bench with the same
# -p/-n/-t and one timed repetition each (after each tool's own warmup), the
# order rotated every round, so drift of a shared machine falls on every
# tool alike. The table gives each tool's median t/s over the rounds with
# the lowest and highest (the noise), and the ratio of the medians Tern /
# llama.cpp (above 1: Tern is faster). --bw runs the bandwidth probe
# (shared/peer/bw.c) with -t threads before and after.
# Exit status: 0 all runs succeeded, 1 a run failed (its cells read "failed"),
# 2 bad command line.
set -u

prog=compare.sh
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  cat <<EOF
usage: $prog --tern PATH/tern-bench --llama PATH/llama-bench -m MODEL[,MODEL...]
             [-p N[,N...]] [-n N[,N...]] [-t N] [-r N] [--kernels SET[,SET...]] [--bw PATH/bw]
  --tern FILE    tern-bench executable
  --llama FILE   llama-bench executable (llama.cpp)
  -m FILES       GGUF models, comma-separated or -m repeated
  -p LIST        prompt tokens of the pp tests (default 128; 0: none)
  -n LIST        generated tokens of the tg tests (default 32; 0: none)
  -t N           threads for both tools (default: $(nproc 2>/dev/null || echo 1))
  -r N           interleaved rounds, one timed repetition per tool and round (default 3)
  --kernels LIST Tern's kernel sets to run, each a column (TERN_KERNELS; default: the one in use)
  --bw FILE      also measure read bandwidth with this probe before and after
EOF
}
die() { echo "$prog: $*" >&2; exit 2; }

tern= llama= bw= models=() kernels=() p=128 n=32 t=$(nproc 2>/dev/null || echo 1) r=3
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 9 ]; }
is_list() { [[ $1 =~ ^[0-9]{1,9}(,[0-9]{1,9})*$ ]]; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --tern|--llama|--bw|--kernels|-m|-p|-n|-t|-r) [ $# -ge 2 ] || die "$1 needs a value" ;;
    *) die "unknown option '$1' ($prog --help lists them)" ;;
  esac
  case $1 in
    --tern) tern=$2 ;;
    --llama) llama=$2 ;;
    --bw) bw=$2 ;;
    --kernels) [[ $2 =~ ^[a-z0-9]+(,[a-z0-9]+)*$ ]] || die "--kernels: '$2' is not a comma list of set names"
               IFS=, read -r -a kernels <<<"$2" ;;
    -m) [[ -n $2 && $2 != ,* && $2 != *, && $2 != *,,* ]] || die "-m: empty item in '$2'"
        IFS=, read -r -a items <<<"$2"; models+=("${items[@]}") ;;
    -p) is_list "$2" || die "-p: '$2' is not a comma list of numbers"; p=$2 ;;
    -n) is_list "$2" || die "-n: '$2' is not a comma list of numbers"; n=$2 ;;
    -t) is_uint "$2" && [ "$2" -ge 1 ] || die "-t: '$2' is not a number >= 1"; t=$2 ;;
    -r) is_uint "$2" && [ "$2" -ge 1 ] || die "-r: '$2' is not a number >= 1"; r=$2 ;;
  esac
  shift 2
done
[ -n "$tern" ] || die "give --tern PATH/tern-bench"
[ -n "$llama" ] || die "give --llama PATH/llama-bench"
[ -x "$tern" ] || die "--tern: '$tern' is not an executable"
[ -x "$llama" ] || die "--llama: '$llama' is not an executable"
[ -z "$bw" ] || [ -x "$bw" ] || die "--bw: '$bw' is not an executable"
[ ${#models[@]} -gt 0 ] || die "give -m MODEL[,MODEL...]"
for m in "${models[@]}"; do [ -r "$m" ] || die "-m: cannot read '$m'"; done
[[ $p =~ [1-9] || $n =~ [1-9] ]] || die "nothing to run: -p and -n are all 0"

work=$(mktemp -d "${TMPDIR:-/tmp}/compare.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
samples=$work/samples.tsv   # tool, model index, test, t/s
: >"$samples"
failed=0

# Rows of a llama-bench / tern-bench csv: "test<TAB>t/s" (columns found by name).
csv_rows() { awk -f "$here/csv_rows.awk" "$1"; }

# One value of the first data row of a csv, by column name.
csv_value() { awk -v want="$2" -f "$here/csv_rows.awk" "$1"; }

run_one() {  # tool, model index, command...
  local tool=$1 mi=$2; shift 2
  if "$@" >"$work/out.csv" 2>"$work/err.txt" && csv_rows "$work/out.csv" >"$work/rows.tsv" &&
     [ -s "$work/rows.tsv" ]; then
    if [[ $tool == tern:* ]] && [ "$(csv_value "$work/out.csv" kernels)" != "${tool#tern:}" ]; then
      failed=1   # TERN_KERNELS fell back to another set: no samples for this column
      echo "$prog: TERN_KERNELS=${tool#tern:} ran kernels '$(csv_value "$work/out.csv" kernels)' (not in this build, or not on this CPU)" >&2
      return
    fi
    awk -v tool="$tool" -v mi="$mi" -F'\t' '{ printf "%s\t%s\t%s\t%s\n", tool, mi, $1, $2 }' "$work/rows.tsv" >>"$samples"
    [ "$tool" = tern ] && [ -z "${tern_kernels:-}" ] && tern_kernels=$(csv_value "$work/out.csv" kernels)
    [ "$tool" = llama ] && [ -z "${llama_build:-}" ] && llama_build=$(csv_value "$work/out.csv" build_commit)
  else
    failed=1
    echo "$prog: $tool failed on ${models[$mi]}: $*" >&2
    tail -n 5 "$work/err.txt" | sed 's/^/    /' >&2
  fi
}

bw_line() { [ -z "$bw" ] || echo "read bandwidth ($1): $("$bw" "$t" 2>&1 | tail -n 1)"; }

# The tools of a round: "tern" (the set in use) or "tern:SET" per --kernels, then "llama".
tools=()
if [ ${#kernels[@]} -eq 0 ]; then tools=(tern); else for k in "${kernels[@]}"; do tools+=("tern:$k"); done; fi
tools+=(llama)
nt=${#tools[@]}

bw_before=$(bw_line before)
for ((round = 1; round <= r; round++)); do
  for mi in "${!models[@]}"; do
    m=${models[$mi]}
    echo "$prog: round $round/$r: ${m##*/}" >&2
    for ((i = 0; i < nt; i++)); do
      tool=${tools[$(( (i + round - 1) % nt ))]}   # rotated: no tool always first
      case $tool in
        llama) run_one llama "$mi" "$llama" -m "$m" -p "$p" -n "$n" -t "$t" -r 1 -o csv ;;
        tern) run_one tern "$mi" "$tern" -m "$m" -p "$p" -n "$n" -t "$t" -r 1 -o csv ;;
        tern:*) run_one "$tool" "$mi" env TERN_KERNELS="${tool#tern:}" "$tern" -m "$m" -p "$p" -n "$n" -t "$t" -r 1 -o csv ;;
      esac
    done
  done
done
bw_after=$(bw_line after)

[ -s "$samples" ] || { echo "$prog: no results" >&2; exit 1; }
names=$(for m in "${models[@]}"; do printf '%s\n' "${m##*/}"; done)
if [ ${#kernels[@]} -eq 0 ]; then what="Tern (kernels ${tern_kernels:-?})"; else what="Tern (kernels ${kernels[*]})"; fi
echo "$what vs llama.cpp (build ${llama_build:-?}), $t threads, $r interleaved rounds, -p $p -n $n; t/s: median (lowest-highest)"
[ -z "$bw_before" ] || echo "$bw_before; $bw_after"
echo
NAMES=$names TOOLS="${tools[*]}" awk -F'\t' '
  BEGIN { nm = split(ENVIRON["NAMES"], name, "\n"); nt = split(ENVIRON["TOOLS"], tool, " ") }
  {
    k = $2 SUBSEP $3
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    c = ++cnt[$1, k]; val[$1, k, c] = $4 + 0
  }
  function median(t, k,    c, i, j, x, v) {
    c = cnt[t, k] + 0
    for (i = 1; i <= c; i++) v[i] = val[t, k, i]
    for (i = 2; i <= c; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    lo = v[1]; hi = v[c]
    return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
  }
  function cell(t, k,    m) {
    if (cnt[t, k] + 0 == 0) return "failed"
    m = median(t, k)
    return sprintf("%.2f (%.2f-%.2f)", m, lo, hi)
  }
  function label(t) { return t == "tern" ? "Tern" : "Tern " substr(t, 6) }
  END {
    head = "| model | test | llama.cpp t/s"; rule = "| --- | --- | ---:"
    for (i = 1; i < nt; i++) { head = head " | " label(tool[i]) " t/s | " label(tool[i]) " / llama.cpp"; rule = rule " | ---: | ---:" }
    print head " |"; print rule " |"
    # rows by model (command-line order), then test (order of first result)
    for (mi = 0; mi < nm; mi++)
      for (i = 1; i <= nk; i++) {
        split(order[i], kk, SUBSEP)
        if (kk[1] + 0 != mi) continue
        k = order[i]
        row = sprintf("| %s | %s | %s", name[mi + 1], kk[2], cell("llama", k))
        ml = cnt["llama", k] ? median("llama", k) : 0
        for (j = 1; j < nt; j++) {
          ratio = "-"
          if (cnt[tool[j], k] && ml > 0) ratio = sprintf("%.2f", median(tool[j], k) / ml)
          row = row " | " cell(tool[j], k) " | " ratio
        }
        print row " |"
      }
  }' "$samples"
exit $failed
