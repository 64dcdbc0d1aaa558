import ast
import json
import os
import re
import time

import numpy as np
import torch
import torch.distributed as dist
import tqdm

from utils.utils import (AverageMeter, Summary, dict_to_cuda, gather_results,
                         pointinbbox, print_rank0)


def broadcast_value(value, src=0, local_args=None):
    tensor = torch.tensor([value], dtype=torch.float32).to(f"cuda:{local_args.local_rank}")
    dist.broadcast(tensor, src=src)
    return tensor.item()


def get_bbox(bbox, img_size, xy_int):
    x1, y1, w, h = bbox
    weight, height = img_size

    # x1y1wh to x1y1x2y2
    bbox = [x1, y1, x1 + w, y1 + h]

    # normalisation
    if not xy_int:
        bbox = [bbox[0] / weight, bbox[1] / height, bbox[2] / weight, bbox[3] / height]
    return bbox


def parse_point(text):
    """Model answers are either "[0.41, 0.77]" or "(0.41,0.77)"; ints are treated as 0-1000 scale."""
    try:
        value = ast.literal_eval(text.strip())
    except Exception:
        floats = re.findall(r"-?\d+\.?\d*", text)
        value = [float(x) for x in floats]
    if isinstance(value, dict):
        value = value.get("position", value.get("click_point"))
    value = list(value)
    if len(value) == 4:
        value = [(value[0] + value[2]) / 2, (value[1] + value[3]) / 2]
    if all(isinstance(v, int) for v in value) and max(value) > 1:
        value = [v / 1000 for v in value]
    return value[:2]


def calculate_screenspot_metrics(results):
    metrics = {}
    for type in ["mobile", "web", "desktop"]:
        for kind in ["text", "icon"]:
            subset = [r for r in results if r["split"] == type and r["data_type"] == kind]
            key = f"{type}_{kind}"
            metrics[key] = sum(r["correct"] for r in subset) / max(len(subset), 1)
    metrics["average"] = float(np.mean([v for v in metrics.values()]))
    return metrics


@torch.no_grad()
def validate_screenspot(val_loader, model_engine, processor, epoch, global_step, writer, args, media=True):
    model_engine.eval()

    answers_unique = []
    generated_texts_unique = []
    outputs_unique = []

    global_rank = dist.get_rank() if dist.is_initialized() else 0
    latency = AverageMeter("Latency", ":6.3f", Summary.AVERAGE)

    for i, input_dict in enumerate(tqdm.tqdm(val_loader, disable=global_rank != 0)):
        torch.cuda.empty_cache()
        meta = input_dict.pop("meta_data")[0]
        input_dict = dict_to_cuda(input_dict)

        if args.precision == "fp16":
            input_dict["pixel_values"] = input_dict["pixel_values"].half()
        elif args.precision == "bf16":
            input_dict["pixel_values"] = input_dict["pixel_values"].bfloat16()
        else:
            input_dict["pixel_values"] = input_dict["pixel_values"].float()

        torch.cuda.synchronize()  # the H2D copies in dict_to_cuda are non_blocking
        tic = time.time()
        generate_ids = model_engine.generate(
            **input_dict,
            max_new_tokens=128,
            eos_token_id=processor.tokenizer.eos_token_id,
            do_sample=False,
        )
        torch.cuda.synchronize()
        latency.update(time.time() - tic)

        generate_ids = generate_ids[:, input_dict["input_ids"].shape[1]:]
        generated_texts = processor.batch_decode(
            generate_ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
        )[0]

        answers_unique.append(meta["bbox"])
        generated_texts_unique.append(generated_texts)
        outputs_unique.append({
            "split": meta["split"],
            "data_type": meta["data_type"],
            "anno_id": meta["id"],
            "img_path": meta["img_url_abs"],
            "instruction": meta["task"],
            "sentence": generated_texts,
            "bbox": meta["bbox"],
        })

    for i, (pred, gt) in enumerate(zip(generated_texts_unique, answers_unique)):
        try:
            pred_point = parse_point(pred)
            correct = pointinbbox(pred_point, gt)
        except Exception:
            pred_point = None
            correct = False
        outputs_unique[i]["pred"] = pred_point
        outputs_unique[i]["correct"] = bool(correct)

    results = gather_results(outputs_unique)
    latency.all_reduce()

    score = 0.0
    if global_rank == 0:
        metrics = calculate_screenspot_metrics(results)
        score = metrics["average"]
        save_dir = os.path.join(args.log_dir, "eval")
        os.makedirs(save_dir, exist_ok=True)
        with open(os.path.join(save_dir, f"screenspot_epoch{epoch}_step{global_step}.json"), "w") as f:
            json.dump({"metrics": metrics, "results": results}, f, indent=2)
        for k, v in metrics.items():
            print_rank0(f"[screenspot] {k}: {v:.4f}")
            if writer is not None:
                writer.add_scalar(f"val/{k}", v, epoch)
        print_rank0(f"[screenspot] avg latency per sample: {latency.avg:.3f}s")

    if dist.is_initialized():
        score = broadcast_value(score, src=0, local_args=args)
    model_engine.train()
    return score
