# The `sanitizer` ctests: every chapter once, --check-only (no profiler: compute-sanitizer and CUPTI do not mix) at
# small odd shapes, under compute-sanitizer's memcheck (out-of-bounds and misaligned accesses), racecheck (shared
# memory hazards) and synccheck (misused barriers). Chapter 04 twice: its default variant on this GPU, and portable.
# Chapter 06 in the three modes with kernels of their own (eager's gelu_backward and add, fused's gelu_mul_backward,
# epilogue's dgated_gemm), at 37 rows, dim 24 (one k-tile) and hidden 80 (a part tile).
set(odd_mlp "--batch 3 --seq 5 --dim 64 --hidden 200 --seed 1 --check-only")
set(sanitized
    "01_matmul_add|--size 77 --dtype bf16 --check-only"
    "02_linear|--batch 3 --in-dim 24 --out-dim 40 --check-only"
    "03_simple_mlp|${odd_mlp}"
    "03_fused_mlp|${odd_mlp}"
    "04_epilogue_mlp|${odd_mlp}"
    "04_epilogue_mlp|${odd_mlp} --kernel portable"
    "06_train_mlp|--batch 1 --seq 37 --dim 24 --hidden 80 --seed 1 --check-only --mode eager"
    "06_train_mlp|--batch 1 --seq 37 --dim 24 --hidden 80 --seed 1 --check-only --mode fused"
    "06_train_mlp|--batch 1 --seq 37 --dim 24 --hidden 80 --seed 1 --check-only --mode epilogue")
foreach(entry IN LISTS sanitized)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 chapter)
  list(GET parts 1 args)
  separate_arguments(args UNIX_COMMAND "${args}")
  set(name sanitize.${chapter})
  if(args MATCHES "portable")
    set(name sanitize.${chapter}_portable)
  elseif(args MATCHES "--mode;([a-z]+)")
    set(name sanitize.${chapter}_${CMAKE_MATCH_1})
  endif()
  if(TARGET ${chapter})
    ladder_sanitizer_tests(${name} COMMAND $<TARGET_FILE:${chapter}> ${args})
  endif()
endforeach()
