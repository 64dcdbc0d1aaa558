"""
Quick inference with the emotion2vec+ checkpoints released through FunASR / ModelScope.

    python funasr_demo.py --wav test.wav
    python funasr_demo.py --wav_scp wav.scp --output_dir outputs --model iic/emotion2vec_plus_base

The 9-class head predicts: angry, disgusted, fearful, happy, neutral, other, sad, surprised, unknown.
"""
import argparse
import json
import os

import numpy as np
import torch
from funasr import AutoModel


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="iic/emotion2vec_plus_large",
                        help="emotion2vec_plus_large | emotion2vec_plus_base | emotion2vec_plus_seed | emotion2vec_base")
    parser.add_argument("--hub", default="ms", choices=["ms", "hf"], help="modelscope or huggingface")
    parser.add_argument("--wav", default=None)
    parser.add_argument("--wav_scp", default=None)
    parser.add_argument("--output_dir", default="./outputs")
    parser.add_argument("--granularity", default="utterance", choices=["utterance", "frame"])
    parser.add_argument("--extract_embedding", action="store_true",
                        help="also dump the 768/1024-d embedding next to the scores")
    parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    return parser.parse_args()


def main():
    args = get_args()
    model = AutoModel(model=args.model, hub=args.hub, device=args.device, disable_update=True)

    inputs = args.wav if args.wav is not None else args.wav_scp
    if inputs is None:
        inputs = f"{model.model_path}/example/test.wav"

    res = model.generate(
        inputs,
        output_dir=args.output_dir,
        granularity=args.granularity,
        extract_embedding=args.extract_embedding,
    )

    os.makedirs(args.output_dir, exist_ok=True)
    summary = []
    for item in res:
        scores = np.asarray(item["scores"])
        best = int(scores.argmax())
        summary.append({"key": item["key"], "label": item["labels"][best], "score": float(scores[best])})
        print(f'{item["key"]}\t{item["labels"][best]}\t{scores[best]:.3f}')

    with open(os.path.join(args.output_dir, "summary.json"), "w") as f:
        json.dump(summary, f, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    main()
