# The chapter run by ctest. CUDA_VISIBLE_DEVICES= hides every GPU, so the no-GPU test also runs on a GPU machine.
set(nogpu ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES=)
ladder_expect(06_train_mlp.bad_hidden EXIT 2 REGEX "--hidden: must be an integer from 1 to 2147483647, got 0"
              COMMAND ${CHAPTER_EXE} --hidden 0)
ladder_expect(06_train_mlp.unknown_mode EXIT 2
              REGEX "--mode: unknown mode 'fast'. the modes are eager, fused, epilogue and recompute"
              COMMAND ${nogpu} ${CHAPTER_EXE} --mode fast)
ladder_expect(06_train_mlp.epilogue_refuses_hidden_13 EXIT 2 REGEX "--mode epilogue: .*hidden = 13 must be multiples of 8"
              COMMAND ${nogpu} ${CHAPTER_EXE} --mode epilogue --hidden 13)
ladder_expect(06_train_mlp.recompute_refuses_hidden_13 EXIT 2
              REGEX "--mode recompute: hidden = 13 .*multiple of 8"
              COMMAND ${nogpu} ${CHAPTER_EXE} --mode recompute --hidden 13)
ladder_expect(06_train_mlp.sizes_too_large EXIT 2
              REGEX "^error: --batch 2147483647 --seq 2147483647 --dim 768 --hidden 3072: the step's tensors would take [0-9.e+]+ bytes, more than int64 counts"
              COMMAND ${nogpu} ${CHAPTER_EXE} --batch 2147483647 --seq 2147483647)
ladder_expect(06_train_mlp.graph_refused EXIT 2
              REGEX "^error: --graph: 06_train_mlp replays no CUDA graph \\([^\n]*\\)\n$"
              COMMAND ${nogpu} ${CHAPTER_EXE} --graph)
ladder_expect(06_train_mlp.help_describes_every_option EXIT 0
              REGEX "--batch[^-]*sequences.*--seq[^-]*tokens.*--dim[^-]*model width.*--hidden[^-]*hidden width.*--mode[^-]*eager"
              COMMAND ${CHAPTER_EXE} --help)
ladder_expect(06_train_mlp.no_gpu EXIT 2 REGEX "no CUDA GPU was found"
              ABSENT ${CMAKE_BINARY_DIR}/test-traces/06_train_mlp.no_gpu
              COMMAND ${nogpu} ${CHAPTER_EXE} --trace-dir ${CMAKE_BINARY_DIR}/test-traces/06_train_mlp.no_gpu)

# On the GPU (label gpu): every mode against the CPU reference at odd shapes, and end to end with a checked trace.
# epilogue's only in a build with sm_90a code (add_chapter sets LADDER_HAVE_SM90A); on a GPU that is not a Hopper the
# chapter refuses that mode in one line ("needs a Hopper GPU", exit 2), and its tests are skipped on that line.
set(hopper_modes "")
if(LADDER_HAVE_SM90A)
  set(hopper_modes epilogue)
endif()
foreach(mode eager fused)
  ladder_expect(06_train_mlp.check_${mode}_odd EXIT 0 LABEL gpu REGEX "check dW_down: .*all 312 values finite"
                COMMAND ${CHAPTER_EXE} --batch 1 --seq 37 --dim 24 --hidden 13 --mode ${mode} --check-only)
endforeach()
foreach(mode ${hopper_modes} recompute)
  ladder_expect(06_train_mlp.check_${mode}_odd EXIT 0 LABEL gpu REGEX "check dW_down: .*all 1920 values finite"
                COMMAND ${CHAPTER_EXE} --batch 1 --seq 37 --dim 24 --hidden 80 --mode ${mode} --check-only)
endforeach()
foreach(mode eager fused ${hopper_modes} recompute)
  ladder_chapter_trace(06_train_mlp.trace_${mode}
                       COMMAND ${CHAPTER_EXE} --batch 2 --seq 8 --dim 64 --hidden 256 --mode ${mode} --active 1)
endforeach()
if(hopper_modes)
  set_tests_properties(06_train_mlp.check_epilogue_odd 06_train_mlp.trace_epilogue
                       PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA GPU was found;--mode epilogue: .*needs a Hopper GPU")
endif()
