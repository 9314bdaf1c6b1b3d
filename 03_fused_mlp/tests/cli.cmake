# The chapter run by ctest. CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(03_fused_mlp.bad_hidden EXIT 2 REGEX "--hidden: must be an integer from 1 to 2147483647, got 0"
              COMMAND ${CHAPTER_EXE} --hidden 0)
ladder_expect(03_fused_mlp.help_describes_every_option EXIT 0
              REGEX "--batch[^-]*sequences.*--seq[^-]*tokens.*--dim[^-]*model width.*--hidden[^-]*hidden width.*--kernel[^-]*: plain, vec"
              COMMAND ${CHAPTER_EXE} --help)
ladder_expect(03_fused_mlp.no_gpu EXIT 2 REGEX "no CUDA GPU was found"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/03_fused_mlp.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/03_fused_mlp.no_gpu)

# End to end on the GPU (label gpu), at a small shape: the chapter runs, writes one trace, the trace passes the checker.
ladder_chapter_trace(03_fused_mlp.trace COMMAND ${CHAPTER_EXE} --batch 2 --seq 8 --dim 64 --hidden 256 --active 1)
ladder_chapter_trace(03_fused_mlp.trace_graph COMMAND ${CHAPTER_EXE} --batch 2 --seq 8 --dim 64 --hidden 256 --graph)
