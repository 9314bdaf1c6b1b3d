#!/usr/bin/env bash
# 06's four modes and PyTorch's seven training steps recorded again on this machine (call_record.sh, a fresh build),
# to see the step's ratio to torch.compile on a second H200; the traces stay here, the committed set is unchanged.
bash .exp/s8/call_record.sh > $OUT/record_out.txt 2>&1; grep -E "^ladder|^compile|^eager|^liger|rc=|build ok|torch|GPU|[0-9] MHz" $OUT/record_out.txt | cut -c1-100
python3 bench/results/2026-11-29_h200_step_back_to_back/ratios.py $OUT/steps.txt | tee $OUT/ratios.txt
