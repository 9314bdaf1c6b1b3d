#!/usr/bin/env bash
# 06's four modes and PyTorch's seven training steps recorded again (.exp/s8/call_record.sh, a fresh build of the tree
# of call 6): in call 6, torch.compile's forward gelu_mul kernel ran in the slower of Inductor's two launch
# configurations. Then two more processes record torch.compile's step alone, to see which configuration each picks.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
t0=$SECONDS
bash .exp/s8/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=|build ok|torch" $OUT/record_out.txt | cut -c1-120
python3 bench/results/2026-11-29_h200_step_back_to_back/ratios.py $OUT/steps.txt | tee $OUT/ratios.txt
export PYTHONPATH=/tmp/site:$PWD/05_torch_op
for r in 1 2; do
  python3 06_train_mlp/torch_train_step.py --out /tmp/again$r --modes compile > $OUT/compile_again$r.txt 2>&1
  grep -E "^compile" $OUT/compile_again$r.txt | cut -c1-80
done
python3 - <<'PY' | tee $OUT/triton_configs.txt
import json, os, glob
out = os.environ["OUT"]
import tarfile
with tarfile.open(f"{out}/h200.tgz") as t:
    t.extract("h200/torch_06_train_mlp_compile.json", "/tmp/x")
for f in ["/tmp/x/h200/torch_06_train_mlp_compile.json", "/tmp/again1/torch_06_train_mlp_compile.json",
          "/tmp/again2/torch_06_train_mlp_compile.json"]:
    for e in json.load(open(f))["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"].startswith("triton"):
            print(f.split("/")[2], e["name"][:48], e["dur"], e["args"].get("grid"), e["args"].get("block"))
PY
echo "($((SECONDS - t0)) s)"
