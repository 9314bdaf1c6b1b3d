# The chapter run by ctest. CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(04_epilogue_mlp.bad_hidden EXIT 2 REGEX "--hidden: must be an integer from 1 to 2147483647, got 0"
              COMMAND ${CHAPTER_EXE} --hidden 0)
ladder_expect(04_epilogue_mlp.help_describes_every_option EXIT 0
              REGEX "--batch[^-]*sequences.*--seq[^-]*tokens.*--dim[^-]*model width.*--hidden[^-]*hidden width.*--kernel[^-]*: teach, pingpong, coop, overlap, fast"
              COMMAND ${CHAPTER_EXE} --help)
# Usage errors come before any GPU work, so they are the same on a machine without one (GPUs hidden here).
ladder_expect(04_epilogue_mlp.bad_kernel EXIT 2 REGEX "no geglu_gemm variant named 'fastest' \\(have: teach, pingpong"
              COMMAND ${nogpu} ${CHAPTER_EXE} --kernel fastest)
ladder_expect(04_epilogue_mlp.dim_breaks_tma_rule EXIT 2
              REGEX "dim = 100 is not a multiple of 8: TMA needs every row of x, w_gate and w_up to start on a 16-byte"
              COMMAND ${nogpu} ${CHAPTER_EXE} --dim 100)
ladder_expect(04_epilogue_mlp.hidden_breaks_tma_rule EXIT 2 REGEX "hidden = 3070 is not a multiple of 8"
              COMMAND ${nogpu} ${CHAPTER_EXE} --hidden 3070)
ladder_expect(04_epilogue_mlp.no_gpu EXIT 2 REGEX "no CUDA GPU was found"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/04_epilogue_mlp.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/04_epilogue_mlp.no_gpu)

# End to end on the GPU (label gpu), at small odd shapes: the chapter runs, writes one trace, the trace passes the
# checker. On a GPU that is not a Hopper the chapter exits 2 with its one line, and these report "skipped".
ladder_chapter_trace(04_epilogue_mlp.trace COMMAND ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 200 --active 1)
ladder_chapter_trace(04_epilogue_mlp.trace_graph
                     COMMAND ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 200 --graph)
if(BUILD_TESTING)
  set_tests_properties(04_epilogue_mlp.trace 04_epilogue_mlp.trace_graph
                       PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;this rung needs a Hopper GPU")
endif()
