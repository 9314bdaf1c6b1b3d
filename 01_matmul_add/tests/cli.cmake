# Bad input, checked by running the chapter itself: each must print one clear line and exit 2 before any GPU work.
# CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU tests also run (and mean the same) on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(01_matmul_add.bad_size EXIT 2 REGEX "--size: must be an integer from 1 to 1048576, got 0"
              COMMAND ${CHAPTER_EXE} --size 0)
ladder_expect(01_matmul_add.bad_dtype EXIT 2 REGEX "--dtype" COMMAND ${CHAPTER_EXE} --dtype fp8)
ladder_expect(01_matmul_add.bad_kernel EXIT 2 REGEX "--kernel: no add variant named 'nope'"
              COMMAND ${nogpu} ${CHAPTER_EXE} --kernel nope)
ladder_expect(01_matmul_add.help_lists_kernels EXIT 0 REGEX "--kernel[^-]*variant of the add kernel: plain"
              COMMAND ${CHAPTER_EXE} --help)
# The no-GPU message says so plainly, points at the reference traces by a path that works from here, and leaves no
# trace folder behind.
ladder_expect(01_matmul_add.no_gpu EXIT 2
              REGEX "^error: no CUDA GPU was found\\. The traces we recorded on an H100[^\n]* are in /[^\n]*/traces/reference/h100/: see this chapter's with [^\n]*/tools/ladder-trace timeline /[^\n]*/traces/reference/h100/01_matmul_add_size4096\\.json\n$"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/01_matmul_add.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/01_matmul_add.no_gpu)

# End to end on the GPU (label gpu): the chapter runs, writes one trace, and the trace passes the checker.
ladder_chapter_trace(01_matmul_add.trace_size64 COMMAND ${CHAPTER_EXE} --size 64 --active 1)
ladder_chapter_trace(01_matmul_add.trace_size4096 COMMAND ${CHAPTER_EXE} --size 4096 --active 1)
ladder_chapter_trace(01_matmul_add.trace_size64_graph COMMAND ${CHAPTER_EXE} --size 64 --graph)
# Odd shapes, each kernel variant and dtype, checked against the CPU (no profiler).
ladder_expect(01_matmul_add.check_odd_bf16 EXIT 0 REGEX "check: .* within" LABEL gpu
              COMMAND ${CHAPTER_EXE} --size 77 --dtype bf16 --check-only)
