#!/bin/bash
# Evaluate a TrOCR checkpoint on the IAM test lines and report CER.
export DATA=/path/to/data
export MODEL=/path/to/model
export RESULT_PATH=/path/to/result
export BSZ=16

$(which fairseq-generate) \
        --data-type STR --user-dir ./ --task text_recognition --input-size 384 \
        --beam 10 --scoring cer2 --gen-subset test --batch-size ${BSZ} \
        --path ${MODEL} --results-path ${RESULT_PATH} --preprocess DA2 \
        --bpe gpt2 --dict-path-or-url https://layoutlm.blob.core.windows.net/trocr/dictionaries/gpt2_with_mask.dict.txt \
        --fp16 \
        ${DATA}

# summarise the hypothesis file: one CER line for the paper table
python - <<'PYEOF'
import os, re
res = os.environ["RESULT_PATH"]
for fn in os.listdir(res):
    if fn.startswith("generate-") and fn.endswith(".txt"):
        with open(os.path.join(res, fn)) as f:
            tail = f.read().splitlines()[-1]
        m = re.search(r"cer2?: ([0-9.]+)", tail, re.I)
        print(fn, m.group(1) if m else tail)
PYEOF
