# The chapter run by ctest. CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
# The variants this build has (add_chapter sets LADDER_HAVE_SM90A): the Hopper ones only with sm_90a code.
set(variants "portable")
if(LADDER_HAVE_SM90A)
  set(variants "teach, pingpong, coop, overlap, fast, portable")
endif()
ladder_expect(04_epilogue_mlp.bad_hidden EXIT 2 REGEX "--hidden: must be an integer from 1 to 2147483647, got 0"
              COMMAND ${CHAPTER_EXE} --hidden 0)
ladder_expect(04_epilogue_mlp.help_describes_every_option EXIT 0
              REGEX "--batch[^-]*sequences.*--seq[^-]*tokens.*--dim[^-]*model width.*--hidden[^-]*hidden width.*--kernel[^-]*: ${variants}\n"
              COMMAND ${CHAPTER_EXE} --help)
# Usage errors come before any GPU work, so they are the same on a machine without one (GPUs hidden here).
ladder_expect(04_epilogue_mlp.bad_kernel EXIT 2 REGEX "no geglu_gemm variant named 'fastest' \\(have: ${variants}\\)"
              COMMAND ${nogpu} ${CHAPTER_EXE} --kernel fastest)
ladder_expect(04_epilogue_mlp.dim_breaks_shape_rule EXIT 2
              REGEX "dim = 100 is not a multiple of 8: the kernels copy 16 bytes at a time \\(TMA, cp.async\\), so every row of x, w_gate and w_up must start on a 16-byte"
              COMMAND ${nogpu} ${CHAPTER_EXE} --dim 100)
ladder_expect(04_epilogue_mlp.hidden_breaks_shape_rule EXIT 2 REGEX "hidden = 3070 is not a multiple of 8"
              COMMAND ${nogpu} ${CHAPTER_EXE} --hidden 3070)
ladder_expect(04_epilogue_mlp.no_gpu EXIT 2 REGEX "no CUDA GPU was found"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/04_epilogue_mlp.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/04_epilogue_mlp.no_gpu)

# A Hopper variant on a GPU that is not a Hopper: one line, exit 2, before any trace (label gpu; "skipped" on an sm_90
# GPU, which runs it, and without a GPU).
if(LADDER_HAVE_SM90A)
  ladder_expect(04_epilogue_mlp.hopper_variant_elsewhere EXIT 2 LABEL gpu
                REGEX "the fast variant needs a Hopper GPU \\(sm_90: wgmma and TMA. this one is sm_[0-9]+\\). --kernel portable runs here"
                COMMAND ${CHAPTER_EXE} --kernel fast --check-only)
  if(BUILD_TESTING)
    set_tests_properties(04_epilogue_mlp.hopper_variant_elsewhere
                         PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;geglu_gemm variant: fast")
  endif()
endif()

# End to end on the GPU (label gpu), at small odd shapes: the chapter runs (the GPU's default variant, and portable),
# writes one trace, the trace passes the checker. Every GPU from sm_80 on runs them.
ladder_chapter_trace(04_epilogue_mlp.trace COMMAND ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 200 --active 1)
ladder_chapter_trace(04_epilogue_mlp.trace_graph
                     COMMAND ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 200 --graph)
ladder_chapter_trace(04_epilogue_mlp.trace_portable
                     COMMAND ${CHAPTER_EXE} --batch 3 --seq 5 --dim 64 --hidden 200 --active 1 --kernel portable)
