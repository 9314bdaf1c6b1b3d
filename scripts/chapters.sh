# Sourced by the scripts that read chapters.txt, the list of the chapters (its top says the format):
#   chapters_entries KIND      prints the entries of that kind (or kinds: run|trace) in the file's order, one a line, as
#                              CHAPTER|NEEDS|NAME|TARGET|LAUNCH|REST  (NEEDS: the chapter line's and the entry's own,
#                              joined by commas; TARGET and LAUNCH: the chapter line's; REST last, so that
#                              `IFS='|' read -r chapter needs name target launch rest` reads it whole)
# A malformed line is one error line naming it, and a non-zero status.
chapters_file=${LADDER_CHAPTERS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/chapters.txt}

chapters_entries() {
  awk -v want="$1" -v file="$chapters_file" '
    function fail(why) { printf "error: %s:%d: %s\n", file, NR, why > "/dev/stderr"; bad = 1; exit 1 }
    /^[ \t]*(#|$)/ { next }
    {
      kind = $1; chapter = $2; needs = $3; name = $4
      rest = $0
      for (i = 1; i <= 4; i++) sub(/^[ \t]*[^ \t]+/, "", rest)
      sub(/^[ \t]+/, "", rest); sub(/[ \t]+$/, "", rest)
      if (NF < 4) fail("expected KIND CHAPTER NEEDS NAME [REST], found \"" $0 "\"")
      if ($0 ~ "[][|;\"\047]") fail("an entry holds no quotes, bars, semicolons or brackets")
      n = split(needs, words, ",")
      for (i = 1; i <= n; i++)
        if (words[i] !~ /^(-|cuda|sm90|torch|mpi|gpus[0-9]+)$/)
          fail("unknown need \"" words[i] "\" (the needs are cuda, sm90, torch, mpi, gpusN)")
      if (kind == "chapter") {
        if (chapter in target) fail("chapter " chapter " listed twice")
        if (rest == "") fail("chapter " chapter ": no command that starts it")
        target[chapter] = name; launch[chapter] = rest; own[chapter] = needs
      } else if (kind ~ /^(run|trace|sanitize|figure)$/) {
        if (!(chapter in target)) fail(kind " entry for " chapter ", which has no chapter line above it")
      } else {
        fail("unknown kind \"" kind "\" (the kinds are chapter, run, trace, sanitize, figure)")
      }
      if (kind !~ ("^(" want ")$")) next
      all = own[chapter]
      if (kind != "chapter" && needs != "-") all = (all == "-" ? needs : all "," needs)
      print chapter "|" all "|" name "|" target[chapter] "|" launch[chapter] "|" rest
    }
    END { if (!bad && !NR) { printf "error: %s is empty or missing\n", file > "/dev/stderr"; exit 1 } }
  ' "$chapters_file"
}

# chapters_has_need NEEDS WORD: whether the comma-joined NEEDS hold WORD.
chapters_has_need() { [[ ,$1, == *,$2,* ]]; }

# chapters_gpus_needed NEEDS: the N of gpusN in NEEDS (the largest), else 1.
chapters_gpus_needed() {
  local n=1 w
  IFS=, read -ra words <<< "$1"
  for w in "${words[@]}"; do [[ $w =~ ^gpus([0-9]+)$ ]] && ((BASH_REMATCH[1] > n)) && n=${BASH_REMATCH[1]}; done
  echo "$n"
}

# chapters_command LAUNCH BUILD GPUS ARGS: sets the array `command` to the entry's command line: LAUNCH with {build}
# and {gpus} filled in, then ARGS. mpirun started as root refuses without Open MPI's two variables: they are set then.
chapters_command() {
  local launch=${1//\{build\}/$2}
  launch=${launch//\{gpus\}/$3}
  read -ra command <<< "$launch $4"
  if [ "${command[0]}" = mpirun ] && [ "$(id -u)" -eq 0 ]; then
    command=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "${command[@]}")
  fi
}
