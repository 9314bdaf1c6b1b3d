# The `sanitizer` ctests: the `sanitize` lines of chapters.txt, each a chapter run --check-only (no profiler:
# compute-sanitizer and CUPTI do not mix) at small odd shapes, under compute-sanitizer's memcheck (out-of-bounds and
# misaligned accesses), racecheck (shared memory hazards) and synccheck (misused barriers); the line names the tests.
# A chapter whose target this build does not define (no CUDA, 07 without MPI) has none, and an entry that needs sm90
# has none in a build without sm_90 code; on a GPU that is not a Hopper its tests are skipped on the chapter's one line
# saying so ("needs a Hopper GPU").
ladder_chapter_entries(chapter chapter_lines)
ladder_chapter_entries(sanitize sanitized)
ladder_cuda_has_90(has_90)
foreach(entry IN LISTS sanitized)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 chapter)
  list(GET fields 1 needs)
  list(GET fields 2 name)
  list(GET fields 3 args)
  separate_arguments(args UNIX_COMMAND "${args}")
  # The executable: the target its chapter line names.
  set(target "")
  foreach(line IN LISTS chapter_lines)
    if(line MATCHES "^${chapter}\\|[^|]*\\|([^|]*)\\|")
      set(target ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(skip "")
  if(needs MATCHES "sm90")
    if(NOT has_90)
      continue()
    endif()
    set(skip SKIP "needs a Hopper GPU")
  endif()
  if(TARGET ${target})
    ladder_sanitizer_tests(${name} ${skip} COMMAND $<TARGET_FILE:${target}> ${args})
  endif()
endforeach()
