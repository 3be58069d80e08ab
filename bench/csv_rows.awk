# csv_rows.awk: the rows of a tern-bench or llama-bench csv as "test<TAB>t/s".
#
#   awk -f bench/csv_rows.awk out.csv
#   awk -v want=COLUMN -f bench/csv_rows.awk out.csv   # that column of the first row
#
# llama-bench quotes every value; the columns are found by name in the header
# (n_prompt, n_gen, avg_ts), so either tool's csv reads the same. The test is
# named as llama-bench names it: pp512, tg128, pp512+tg128.
function split_csv(line, out,    n, i, c, f, q) {
  n = 0; f = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else q = 0
      } else f = f c
    } else if (c == "\"") q = 1
    else if (c == ",") { out[++n] = f; f = "" }
    else f = f c
  }
  out[++n] = f
  return n
}
{ sub(/\r$/, "") }
NR == 1 {
  nf = split_csv($0, h)
  for (i = 1; i <= nf; i++) col[h[i]] = i
  if (!("n_prompt" in col) || !("n_gen" in col) || !("avg_ts" in col)) {
    print "csv_rows.awk: no n_prompt/n_gen/avg_ts columns" > "/dev/stderr"; exit 1
  }
  next
}
NF && want != "" {
  split_csv($0, v)
  if (want in col) print v[col[want]]
  exit
}
NF {
  split_csv($0, v)
  np = v[col["n_prompt"]] + 0; ng = v[col["n_gen"]] + 0
  name = ng == 0 ? "pp" np : (np == 0 ? "tg" ng : "pp" np "+tg" ng)
  printf "%s\t%s\n", name, v[col["avg_ts"]]
}
