set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(01_matmul_add.bad_size EXIT 2 REGEX "--size" COMMAND ${CHAPTER_EXE} --size 0)
ladder_expect(01_matmul_add.bad_dtype EXIT 2 REGEX "--dtype" COMMAND ${CHAPTER_EXE} --dtype fp8)
ladder_expect(01_matmul_add.bad_kernel EXIT 2 REGEX "--kernel: no add variant named 'nope'"
              COMMAND ${nogpu} ${CHAPTER_EXE} --kernel nope)
ladder_expect(01_matmul_add.no_gpu EXIT 2 REGEX "no CUDA GPU was found" COMMAND ${nogpu} ${CHAPTER_EXE})
