# Why each skipped test was skipped: prints "REASON<TAB>TEST" for every test that ctest's console output (the first
# file) marks ***Skipped, the reason read from that test's output in ctest's LastTest.log (the second file):
#   - a GoogleTest skip: the line after "FILE:LINE: Skipped" ("no CUDA GPU (cudaErrorInsufficientDriver)");
#   - a chapter's words: "no CUDA GPU was found" -> "no CUDA GPU", "would share one GPU" (07's two ranks on one GPU)
#     -> "needs 2 GPUs", "compute-sanitizer was not found";
#   - a script's own line "WHAT: skipped (WHY)" or "WHAT skipped: WHY" -> WHY;
# with a closing " (...)" dropped, so one reason reads the same on every test: "no CUDA GPU".
#
#     awk -f scripts/skip_reasons.awk build/ctest.log build/Testing/Temporary/LastTest.log
FNR == NR {
  if ($0 ~ / Test +#[0-9]+: .*\*\*\*Skipped/) {
    name = $0
    sub(/^.* Test +#[0-9]+: /, "", name)
    sub(/ \.*\*\*\*Skipped.*$/, "", name)
    skipped[name] = 1
  }
  next
}
/^[0-9]+\/[0-9]+ Test: / { test = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", test); reason = ""; after_skip = 0; next }
/^<end of output>$/ {
  if (test in skipped) {
    if (reason == "") reason = "reason not recognised (ctest -V -R '" test "' shows the output)"
    sub(/ \([^()]*\)$/, "", reason)
    print reason "\t" test
    delete skipped[test]
  }
  test = ""
  next
}
test == "" || !(test in skipped) { next }
after_skip && NF { reason = $0; after_skip = 0; next }
/: Skipped$/ { if (reason == "") after_skip = 1; next }
reason != "" { next }
/no CUDA GPU was found/ { reason = "no CUDA GPU"; next }
/would share one GPU/ { reason = "needs 2 GPUs"; next }
/compute-sanitizer was not found/ { reason = "compute-sanitizer was not found"; next }
/: skipped \(.*\)$/ { reason = $0; sub(/^.*: skipped \(/, "", reason); sub(/\)$/, "", reason); next }
/ skipped: / { reason = $0; sub(/^.* skipped: /, "", reason); next }
END {
  for (name in skipped) print "not in LastTest.log\t" name
}
