# What did not run, and why: one line per reason, "212 skipped: no CUDA GPU", or, for a test this machine cannot run
# (a reason "needs ..."), "10 not run: needs 2 GPUs (TEST, TEST, ...)" with the tests' names (also for a reason of three
# tests or fewer). Its files come in pairs, one per build: ctest's console output, whose ***Skipped lines say which
# tests were skipped, then ctest's LastTest.log, whose copy of each test's output says why:
#   - a GoogleTest skip: the line after "FILE:LINE: Skipped" ("no CUDA GPU (cudaErrorInsufficientDriver)");
#   - a chapter's words: "no CUDA GPU was found" -> "no CUDA GPU", "would share one GPU" (07's two ranks on one GPU)
#     -> "needs 2 GPUs", "compute-sanitizer was not found", 04 running its Hopper variant where the test checks that
#     a GPU of another kind refuses it -> "needs a GPU that is not a Hopper";
#   - a script's own line "WHAT: skipped (WHY)" or "WHAT skipped: WHY" -> WHY;
# with a closing " (...)" dropped, so that one reason reads the same on every test: "no CUDA GPU".
#
#     awk -f scripts/skip_reasons.awk build/ctest.log build/Testing/Temporary/LastTest.log [more pairs]
FNR == 1 { file++ }
file % 2 == 1 {
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
    if (reason == "") reason = "reason not recognised (ctest -V -R shows the output)"
    sub(/ \([^()]*\)$/, "", reason)
    note(reason, test)
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
/ geglu_gemm variant: fast$/ { reason = "needs a GPU that is not a Hopper (this one runs the Hopper variant)"; next }
/: skipped \(.*\)$/ { reason = $0; sub(/^.*: skipped \(/, "", reason); sub(/\)$/, "", reason); next }
/ skipped: / { reason = $0; sub(/^.* skipped: /, "", reason); next }

function note(reason, test) {
  if (!(reason in count)) order[++reasons] = reason
  count[reason]++
  names[reason] = names[reason] (names[reason] == "" ? "" : ", ") test
}

END {
  for (name in skipped) note("its output is not in LastTest.log", name)
  for (i = 1; i <= reasons; i++) {
    r = order[i]
    not_run = r ~ /^needs /
    printf "%d %s: %s%s\n", count[r], not_run ? "not run" : "skipped", r, \
           (not_run || count[r] <= 3) ? " (" names[r] ")" : ""
  }
}
