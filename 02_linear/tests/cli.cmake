# Bad input, checked by running the chapter itself: each must print one clear line and exit 2 before any GPU work.
# CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs (and means the same) on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(02_linear.bad_batch EXIT 2 REGEX "--batch" COMMAND ${CHAPTER_EXE} --batch 0)
ladder_expect(02_linear.bad_in_dim EXIT 2 REGEX "--in_dim" COMMAND ${CHAPTER_EXE} --in_dim -3)
ladder_expect(02_linear.bad_out_dim EXIT 2 REGEX "--out_dim" COMMAND ${CHAPTER_EXE} --out_dim x)
ladder_expect(02_linear.bad_schedule EXIT 2 REGEX "--active" COMMAND ${CHAPTER_EXE} --active 0)
ladder_expect(02_linear.no_gpu EXIT 2 REGEX "no CUDA GPU was found" COMMAND ${nogpu} ${CHAPTER_EXE})
ladder_expect(02_linear.unwritable_trace_dir EXIT 2 REGEX "--trace-dir: cannot create folder"
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir /dev/null/traces)
# Needs a GPU: a shape that cannot fit is a clear error, not a crash.
ladder_expect(02_linear.too_large EXIT 1 REGEX "GiB but the GPU has only" LABEL gpu
              COMMAND ${CHAPTER_EXE} --batch 2000000000 --in_dim 1000000 --trace-dir ${CMAKE_BINARY_DIR}/test-traces)
