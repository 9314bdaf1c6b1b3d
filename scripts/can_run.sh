# Sourced by scripts/run.sh and scripts/record_traces.sh: which entries of chapters.txt this machine can run.
#   machine_facts BUILD    looks once: the GPUs' compute capabilities (nvidia-smi), whether python3 imports torch,
#                          and which targets BUILD (a configured Ninja build folder) defines
#   why_not NEEDS TARGET   prints, in one line, why an entry with these needs and this target cannot run here;
#                          prints nothing when it can
# `scripts/run.sh --plan` takes the facts from the environment instead (plan_facts), so that its test can ask what
# the climb would do on a machine it is not.
torch_missing="python3 cannot import torch: 'pip install torch --index-url https://download.pytorch.org/whl/cu130' adds it"

machine_facts() {
  facts_build=$1
  gpu_caps=()
  if nvidia-smi -L >/dev/null 2>&1; then
    mapfile -t gpu_caps < <(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' \r')
    # A driver too old to report compute_cap: count the GPUs, capability unknown ("?").
    ((${#gpu_caps[@]})) || mapfile -t gpu_caps < <(nvidia-smi -L | sed 's/.*/?/')
  fi
  # nvidia-smi lists every GPU; the chapters see those CUDA_VISIBLE_DEVICES names (by index, or "?" by UUID).
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    local visible=() seen=() v
    IFS=, read -ra visible <<< "$CUDA_VISIBLE_DEVICES"
    for v in "${visible[@]}"; do
      if [[ $v =~ ^[0-9]+$ ]]; then ((v < ${#gpu_caps[@]})) && seen+=("${gpu_caps[v]}"); else seen+=("?"); fi
    done
    gpu_caps=("${seen[@]}")
  fi
  torch_why=""
  python3 -c 'import torch' 2>/dev/null || torch_why=$torch_missing
  unbuilt=()  # targets asked about are looked up in BUILD (target_defined)
  cuda_built=1
  [ ! -f "$facts_build/CMakeCache.txt" ] || grep -q '^LADDER_HAVE_CUDA:INTERNAL=ON' "$facts_build/CMakeCache.txt" ||
    cuda_built=0
}

# LADDER_PLAN_GPUS: the GPUs' compute capabilities, space-separated ("9.0 9.0"; empty for none); LADDER_PLAN_TORCH:
# 1 or 0; LADDER_PLAN_UNBUILT: targets the build would not define (07_tp_mlp without MPI). Each one unset is this
# machine's (LADDER_PLAN_UNBUILT: none, the plan assumes every target is built).
plan_facts() {
  if [ -n "${LADDER_PLAN_GPUS+set}" ] && [ -n "${LADDER_PLAN_TORCH:-}" ]; then gpu_caps=() torch_why="" cuda_built=1
  else machine_facts "$1"; fi
  [ -z "${LADDER_PLAN_GPUS+set}" ] || read -ra gpu_caps <<< "$LADDER_PLAN_GPUS"
  case ${LADDER_PLAN_TORCH:-} in
    1) torch_why="" ;;
    0) torch_why=$torch_missing ;;
    "") ;;
    *) echo "error: LADDER_PLAN_TORCH is 1 or 0, not '$LADDER_PLAN_TORCH'" >&2; return 1 ;;
  esac
  read -ra unbuilt <<< "${LADDER_PLAN_UNBUILT:-}"
  facts_build="" cuda_built=1
}

target_defined() {
  local t
  for t in "${unbuilt[@]}"; do [ "$t" != "$1" ] || return 1; done
  [ -z "$facts_build" ] || [ ! -f "$facts_build/build.ninja" ] || ninja -C "$facts_build" -t query "$1" >/dev/null 2>&1
}

# "9.0" -> "sm_90"
sm_name() { [ "$1" = "?" ] && echo "of unknown compute capability" || echo "sm_${1/./}"; }

why_not() {
  local needs=$1 target=$2 n
  if chapters_has_need "$needs" cuda; then
    if ((${#gpu_caps[@]} == 0)); then echo "no NVIDIA GPU on this machine (nvidia-smi lists none)"; return; fi
    if [[ ${gpu_caps[0]} != "?" ]] && awk -v c="${gpu_caps[0]}" 'BEGIN { exit !(c < 8.0) }'; then
      echo "needs a GPU from sm_80 (A100) on; GPU 0 is $(sm_name "${gpu_caps[0]}")"; return
    fi
    if chapters_has_need "$needs" sm90 && [[ ${gpu_caps[0]} != "9.0" ]]; then
      echo "needs an sm_90 GPU (H100, H200); GPU 0 is $(sm_name "${gpu_caps[0]}")"; return
    fi
  fi
  n=$(chapters_gpus_needed "$needs")
  if ((${#gpu_caps[@]} < n)); then
    echo "needs $n GPUs (mpirun -np $n); this machine has ${#gpu_caps[@]}"; return
  fi
  if chapters_has_need "$needs" torch && [ -n "$torch_why" ]; then echo "$torch_why"; return; fi
  if chapters_has_need "$needs" cuda && ((cuda_built == 0)); then
    echo "not built: this build has no CUDA (no nvcc was found, or LADDER_CUDA is OFF; the configure step said which)"
    return
  fi
  if ! target_defined "$target"; then
    if chapters_has_need "$needs" mpi; then
      echo "not built: it needs MPI and NCCL (the configure step says which is missing; scripts/setup.sh installs" \
        "both where apt works)"
    else
      echo "not built: the build defines no target $target"
    fi
  fi
}
