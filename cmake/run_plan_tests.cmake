# What scripts/run.sh --plan says the climb would run and skip (label cpu) on machines described by the LADDER_PLAN_*
# variables (scripts/can_run.sh): no GPU, a GPU too old, one H100 without torch, two A100s without MPI, two H100s with
# torch; each checks the plan's commands and its last lines. And a list with a need no script knows is refused.
if(NOT BUILD_TESTING)
  return()
endif()
set(planted ${PROJECT_SOURCE_DIR}/cmake/tests/chapters)
ladder_expect(run.plan_refuses_unknown_need EXIT 1
              REGEX "^error: [^\n]*bad_need.txt:3: unknown need \"gpu\" [^\n]*\n$"
              COMMAND ${CMAKE_COMMAND} -E env LADDER_CHAPTERS=${planted}/bad_need.txt LADDER_PLAN_GPUS=9.0
                      LADDER_PLAN_TORCH=1 bash ${PROJECT_SOURCE_DIR}/scripts/run.sh --plan)

# run_plan(NAME "GPUS" TORCH "UNBUILT" REGEX): scripts/run.sh --plan on that machine must print REGEX.
function(run_plan name gpus torch unbuilt regex)
  ladder_no_stray_arguments(run_plan ${name} ${ARGN})
  ladder_expect(run.plan_${name} EXIT 0 REGEX "${regex}"
                COMMAND ${CMAKE_COMMAND} -E env "LADDER_PLAN_GPUS=${gpus}" LADDER_PLAN_TORCH=${torch}
                        "LADDER_PLAN_UNBUILT=${unbuilt}" bash ${PROJECT_SOURCE_DIR}/scripts/run.sh --plan)
endfunction()
# Every chapter of the list, as the skipped line names them; the regexes below leave room for chapters after 07.
ladder_chapter_entries(chapter chapter_lines)
set(all "")
foreach(line IN LISTS chapter_lines)
  string(REGEX REPLACE "\\|.*" "" chapter "${line}")
  string(APPEND all ", ${chapter}")
endforeach()
string(SUBSTRING "${all}" 2 -1 all)
set(h100 "traces/reference/h100")
set(ran_01_04 "01_matmul_add \\(2 runs\\), 02_linear, 03_simple_mlp, 03_fused_mlp, 04_epilogue_mlp")
# No GPU: every rung's committed summary, 05 to 07 included, and one last line saying why none ran.
string(CONCAT regex "No NVIDIA GPU was found.*${h100}/01_matmul_add_size64.json.*${h100}/04_epilogue_mlp.json.*"
       "${h100}/05_ladder.json.*${h100}/06_train_mlp_eager.json.*${h100}/06_train_mlp_recompute.json.*"
       "${h100}/07_tp_mlp_tp_b64_s128_d768_h3072_np2 ====.*"
       "${h100}/07_tp_mlp_overlap_b64_s128_d768_h3072_np2 ====\n.*\n"
       "would run: nothing\nskipped: ${all}: no NVIDIA GPU on this machine \\(nvidia-smi lists none\\)[^\n]*\n$")
run_plan(no_gpu "" 1 "" "${regex}")
run_plan(sm75 "7.5" 1 "" "would run: nothing\nskipped: ${all}: needs a GPU from sm_80 \\(A100\\) on. GPU 0 is sm_75[^\n]*\n$")
string(CONCAT regex "==== build/01_matmul_add --size 64 --warmup ====.*"
       "==== 05_torch_op: 05_ladder skipped: python3 cannot import torch[^\n]*\n\n==== ${h100}/05_ladder.json ====.*"
       "==== build/06_train_mlp [^\n]*--mode epilogue ====.*"
       "==== 07_tp_mlp: 07_tp_mlp_tp_b64_s128_d768_h3072_np2 skipped: needs 2 GPUs.*"
       "would run: ${ran_01_04}, 06_train_mlp \\(4 runs\\)[^\n]*\n"
       "skipped: 05_torch_op: python3 cannot import torch: 'pip install torch --index-url "
       "https://download.pytorch.org/whl/cu130' adds it[^\n]*\n"
       "skipped: 07_tp_mlp: needs 2 GPUs \\(mpirun -np 2\\). this machine has 1[^\n]*\n$")
run_plan(one_h100_no_torch "9.0" 0 "" "${regex}")
string(CONCAT regex "==== build/06_train_mlp [^\n]*--mode recompute ====.*"
       "would run: ${ran_01_04}, 05_torch_op, 06_train_mlp \\(3 runs\\)[^\n]*\n"
       "skipped: 06_train_mlp_epilogue: needs an sm_90 GPU \\(H100, H200\\). GPU 0 is sm_80[^\n]*\n"
       "skipped: 07_tp_mlp: not built: it needs MPI and NCCL[^\n]*\n$")
run_plan(two_a100_no_mpi "8.0 8.0" 1 "07_tp_mlp" "${regex}")
string(CONCAT regex "==== python3 05_torch_op/profile_mlp.py ====.*"
       "==== [^\n]*mpirun -np 2 build/07_tp_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --mode tp ====\n.*"
       "==== [^\n]*mpirun -np 2 build/07_tp_mlp [^\n]* --mode overlap ====\n.*\n"
       "would run: ${ran_01_04}, 05_torch_op, 06_train_mlp \\(4 runs\\), 07_tp_mlp \\(2 runs\\)[^\n]*\n$")
run_plan(two_h100_torch "9.0 9.0" 1 "" "${regex}")
