# Copyright 2024 THU-BPM MarkLLM.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# =========================================================================
# test_method.py
# Description: Smoke test for every watermark algorithm: generate a
#              watermarked and an unwatermarked text and run detection.
# =========================================================================

import sys
import gc
import time
import torch
from watermark.auto_watermark import AutoWatermark
from utils.transformers_config import TransformersConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaTokenizer

ALGORITHMS = ['KGW', 'Unigram', 'SWEET', 'UPV', 'EWD', 'SIR', 'XSIR', 'DiPmark', 'Unbiased',
              'SynthID', 'EXP', 'EXPEdit', 'EXPGumbel', 'ITSEdit', 'PF', 'TS', 'SemStamp', 'KSEMSTAMP']

# Device
device = "cuda" if torch.cuda.is_available() else "cpu"


def build_transformers_config(algorithm_name):
    """OPT-1.3b for everything except the methods trained against llama vocab."""
    if algorithm_name in ['TS']:
        model_path = 'meta-llama/Llama-2-7b-hf'
        tokenizer = LlamaTokenizer.from_pretrained(model_path)
        model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16).to(device)
        vocab_size = 32000
    else:
        model_path = 'facebook/opt-1.3b'
        tokenizer = AutoTokenizer.from_pretrained(model_path)
        model = AutoModelForCausalLM.from_pretrained(model_path).to(device)
        vocab_size = 50272

    return TransformersConfig(model=model,
                              tokenizer=tokenizer,
                              vocab_size=vocab_size,
                              device=device,
                              max_new_tokens=200,
                              min_length=230,
                              do_sample=True,
                              no_repeat_ngram_size=4)


def test_algorithm(algorithm_name):
    # Check algorithm name
    assert algorithm_name in ALGORITHMS, f"unknown algorithm {algorithm_name}"

    transformers_config = build_transformers_config(algorithm_name)

    # Load watermark algorithm
    myWatermark = AutoWatermark.load(f'{algorithm_name}', algorithm_config=f'config/{algorithm_name}.json', transformers_config=transformers_config)

    # Prompt
    prompt = 'Good Morning.'

    start = time.time()
    # Generate and detect
    watermarked_text = myWatermark.generate_watermarked_text(prompt)
    detect_result = myWatermark.detect_watermark(watermarked_text)
    print(watermarked_text)
    print(detect_result)

    unwatermarked_text = myWatermark.generate_unwatermarked_text(prompt)
    detect_result = myWatermark.detect_watermark(unwatermarked_text)
    print(unwatermarked_text)
    print(detect_result)
    print(f"[{algorithm_name}] done in {time.time() - start:.1f}s on {device}")

    del myWatermark, transformers_config
    gc.collect()
    torch.cuda.empty_cache()


def test_all():
    failed = []
    for name in ALGORITHMS:
        try:
            test_algorithm(name)
        except Exception as e:  # keep going, report at the end
            print(f"[{name}] FAILED: {e}")
            failed.append(name)
    print(f"{len(ALGORITHMS) - len(failed)}/{len(ALGORITHMS)} algorithms passed")
    if failed:
        print("failed:", ", ".join(failed))
        sys.exit(1)


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print("Usage: python test_method.py [algorithm_name|all]")
        sys.exit(1)

    algorithm_name = sys.argv[1]
    if algorithm_name == 'all':
        test_all()
    else:
        test_algorithm(algorithm_name)
