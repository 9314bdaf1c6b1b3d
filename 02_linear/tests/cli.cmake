# Bad input, checked by running the chapter itself: each must print one clear line and exit 2 before any GPU work.
# CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs (and means the same) on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(02_linear.bad_batch EXIT 2 REGEX "--batch: must be an integer from 1 to 2147483647, got 0"
              COMMAND ${CHAPTER_EXE} --batch 0)
ladder_expect(02_linear.bad_batch_float EXIT 2 REGEX "^error: --batch: must be an integer from 1 to 2147483647, got 1e9\n$"
              COMMAND ${CHAPTER_EXE} --batch 1e9)
ladder_expect(02_linear.bad_in_dim EXIT 2 REGEX "^error: --in_dim: must be an integer from 1 to 2147483647, got -3\n$"
              COMMAND ${CHAPTER_EXE} --in_dim -3)
ladder_expect(02_linear.bad_out_dim EXIT 2 REGEX "--out-dim" COMMAND ${CHAPTER_EXE} --out-dim x)
ladder_expect(02_linear.bad_schedule EXIT 2 REGEX "^error: --active: must be an integer from 1 to 1000, got 0\n$"
              COMMAND ${CHAPTER_EXE} --active 0)
ladder_expect(02_linear.negative_seed EXIT 2 REGEX "--seed: must be an integer from 0 to 18446744073709551615, got -1"
              COMMAND ${CHAPTER_EXE} --seed -1)
ladder_expect(02_linear.help_after_bad_option EXIT 0 REGEX "--in-dim" COMMAND ${CHAPTER_EXE} --batch 0 --help)
ladder_expect(02_linear.help_names_the_program EXIT 0 REGEX "^[^\n]*\nUsage: [^\n]*/02_linear \\[OPTIONS\\]"
              COMMAND ${CHAPTER_EXE} --help)
# The blog's --in_dim/--out_dim still parse (the run then stops at the missing GPU, not at the options).
ladder_expect(02_linear.underscore_aliases EXIT 2 REGEX "no CUDA GPU was found"
              COMMAND ${nogpu} ${CHAPTER_EXE} --in_dim 16 --out_dim 8)
ladder_expect(02_linear.no_gpu EXIT 2 REGEX "^error: no CUDA GPU was found\\. [^\n]*/traces/reference/h100/: see this chapter's with [^\n]*/tools/ladder-trace timeline [^\n]*/02_linear\\.json\n$"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/02_linear.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/02_linear.no_gpu)
ladder_expect(02_linear.unwritable_trace_dir EXIT 2 REGEX "--trace-dir: cannot create folder"
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir /dev/null/traces)
# Needs a GPU: a shape that cannot fit is a clear error, not a crash.
ladder_expect(02_linear.too_large EXIT 1 REGEX "GiB but the GPU has only" LABEL gpu
              COMMAND ${CHAPTER_EXE} --batch 2000000000 --in_dim 1000000 --trace-dir ${CMAKE_BINARY_DIR}/test-traces)

# End to end on the GPU (label gpu): the chapter runs, writes one trace, and the trace passes the checker.
ladder_chapter_trace(02_linear.trace COMMAND ${CHAPTER_EXE} --active 1)
ladder_chapter_trace(02_linear.trace_graph COMMAND ${CHAPTER_EXE} --graph)
# Odd sizes, checked against the CPU without the profiler.
ladder_expect(02_linear.check_odd EXIT 0 REGEX "check: .* within" LABEL gpu
              COMMAND ${CHAPTER_EXE} --batch 3 --in-dim 24 --out-dim 40 --check-only)
