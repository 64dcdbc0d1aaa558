# Copyright (c) Aishwarya Kamath & Nicolas Carion. Licensed under the Apache License 2.0. All Rights Reserved
"""Evaluate a pretrained MDETR CLEVR model on the CLEVR (or CoGenT) question-answering split
and dump the predicted answers in the format expected by the official leaderboard."""
import argparse
import json
import os
import sys
import time
from functools import partial
from pathlib import Path

import torch
from torch.utils.data import DataLoader, SequentialSampler
from tqdm import tqdm

sys.path.append(str(Path(__file__).resolve().parent.parent))

import util.misc as utils
from datasets.clevr import ClevrQuestion, make_clevr_transforms
from models import build_model


def get_args_parser():
    parser = argparse.ArgumentParser("CLEVR question answering evaluation", add_help=False)
    parser.add_argument("--batch_size", default=64, type=int)
    parser.add_argument("--clevr_img_path", type=str, required=True)
    parser.add_argument("--clevr_ann_path", type=str, required=True)
    parser.add_argument("--split", default="val", choices=("val", "test", "valA", "valB", "testA", "testB"))
    parser.add_argument("--checkpoint", type=str, required=True)
    parser.add_argument("--output_dir", default="clevr_predictions")
    parser.add_argument("--num_workers", default=8, type=int)
    parser.add_argument("--benchmark", action="store_true", help="report images/s instead of writing predictions")
    return parser


def load_model(checkpoint_path):
    checkpoint = torch.load(checkpoint_path, map_location="cpu")
    model_args = checkpoint["args"]
    model_args.device = "cuda"
    model, _, _, _, _ = build_model(model_args)
    model.load_state_dict(checkpoint["model_ema"] if checkpoint.get("model_ema") else checkpoint["model"])
    model = model.cuda()
    model.eval()
    return model, model_args


@torch.no_grad()
def main(args):
    model, model_args = load_model(args.checkpoint)
    print(f"Loaded checkpoint from {args.checkpoint}; split_qa_heads={model_args.split_qa_heads}")

    with open(os.path.join(args.clevr_ann_path, "clevr_answer_dict.json")) as f:
        answer2id = json.load(f)
    id2answer = {v: k for k, v in answer2id.items()}

    dataset = ClevrQuestion(
        args.clevr_img_path + f"/{args.split}",
        os.path.join(args.clevr_ann_path, f"{args.split}.json"),
        make_clevr_transforms("val"),
    )
    loader = DataLoader(
        dataset,
        args.batch_size,
        sampler=SequentialSampler(dataset),
        drop_last=False,
        collate_fn=partial(utils.collate_fn, False),
        num_workers=args.num_workers,
        pin_memory=True,
    )

    predictions = {}
    n_images = 0
    start = time.time()
    for batch_dict in tqdm(loader):
        samples = batch_dict["samples"].to("cuda", non_blocking=True)
        targets = batch_dict["targets"]
        captions = [t["caption"] for t in targets]

        memory_cache = model(samples, captions, encode_and_save=True)
        outputs = model(samples, captions, encode_and_save=False, memory_cache=memory_cache)

        answer_types = outputs["pred_answer_type"].argmax(-1)
        answer_binary = (outputs["pred_answer_binary"].sigmoid() > 0.5).long()
        answer_attr = outputs["pred_answer_attr"].argmax(-1)
        answer_reg = outputs["pred_answer_reg"].argmax(-1)

        for i, t in enumerate(targets):
            if answer_types[i] == 0:
                ans = "yes" if answer_binary[i].item() == 1 else "no"
            elif answer_types[i] == 1:
                ans = id2answer[answer_attr[i].item()]
            else:
                ans = str(answer_reg[i].item())
            predictions[t["questionId"]] = ans
        n_images += len(targets)

    if args.benchmark:
        torch.cuda.synchronize()
        elapsed = time.time() - start
        print(f"{n_images} questions in {elapsed:.1f}s ({n_images / elapsed:.1f} q/s)")
        return

    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    out_file = os.path.join(args.output_dir, f"clevr_{args.split}_predictions.txt")
    with open(out_file, "w") as f:
        for qid in sorted(predictions.keys()):
            f.write(predictions[qid] + "\n")
    print(f"Wrote {len(predictions)} answers to {out_file}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("CLEVR evaluation", parents=[get_args_parser()])
    args = parser.parse_args()
    main(args)
