"""Each step's GPU busy over torch.compile's, step by step, from a steps.txt that call_record.sh wrote (the
`ladder-trace summary --steps` lines of every trace of one call): python3 ratios.py call4_steps.txt"""
import re
import sys

busy, name = {}, None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        name = line.split()[1].removesuffix(".json")
        busy[name] = []
    elif "ProfilerStep#" in line:
        busy[name].append(float(re.findall(r"([\d.]+)us", line)[1]))  # wall, then GPU busy
compile_ = busy["torch_06_train_mlp_compile"]
for name in ("06_train_mlp_epilogue", "torch_06_train_mlp_ladder", "torch_06_train_mlp_ladder_compile",
             "torch_06_train_mlp_liger", "torch_06_train_mlp_liger_compile"):
    print(f"{name:<36} / torch.compile: " + " / ".join(f"{a / b:.4f}" for a, b in zip(busy[name], compile_)))
