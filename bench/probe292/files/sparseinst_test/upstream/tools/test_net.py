import os
import sys
# pin the benchmark to a single card before torch initialises CUDA;
# pick another one with e.g. `GPU=3 python tools/test_net.py ...`
os.environ.setdefault("CUDA_VISIBLE_DEVICES", os.environ.get("GPU", "0"))
sys.path.append(".")
import argparse
import time
import tqdm
import numpy as np

import torch
import torch.nn.functional as F

from detectron2.config import get_cfg
from detectron2.modeling import build_model
from detectron2.structures import ImageList, Instances, BitMasks
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.data import MetadataCatalog, build_detection_test_loader
from detectron2.evaluation import COCOEvaluator, print_csv_format
from detectron2.evaluation.evaluator import inference_context
from detectron2.utils.logger import setup_logger

from sparseinst import add_sparse_inst_config, COCOMaskEvaluator


device = torch.device('cuda:0')
dtype = torch.float32

__all__ = ["test_sparseinst_speed"]

pixel_mean = torch.Tensor([123.675, 116.280, 103.530]).to(device).view(3, 1, 1)
pixel_std = torch.Tensor([58.395, 57.120, 57.375]).to(device).view(3, 1, 1)


@torch.jit.script
def normalizer(x, mean, std): return (x - mean) / std


def synchronize():
    torch.cuda.synchronize()


def process_batched_inputs(batched_inputs):
    images = [x["image"].to(device) for x in batched_inputs]
    images = [normalizer(x, pixel_mean, pixel_std) for x in images]
    images = ImageList.from_tensors(images, 32)
    ori_size = (batched_inputs[0]["height"], batched_inputs[0]["width"])
    return images.tensor, images.image_sizes[0], ori_size


def postprocess(result, ori_size):
    pred_scores, pred_masks = result[0], result[1]
    results = Instances(ori_size)
    if pred_scores.numel() == 0:
        results.pred_masks = pred_masks.new_zeros((0,) + tuple(ori_size)).bool()
        results.scores = pred_scores
        results.pred_classes = result[2]
        return results
    mask_pred = F.interpolate(pred_masks.unsqueeze(0), size=ori_size, mode="bilinear", align_corners=False)[0]
    mask_pred = mask_pred > 0.45
    results.pred_masks = mask_pred
    results.scores = pred_scores
    results.pred_classes = result[2]
    results.pred_boxes = BitMasks(mask_pred).get_bounding_boxes()
    return results


@torch.no_grad()
def test_sparseinst_speed(cfg, fp16=False):
    model = build_model(cfg)
    model.eval()
    model.to(device)
    print(model)

    checkpointer = DetectionCheckpointer(model)
    _ = checkpointer.load(cfg.MODEL.WEIGHTS)

    torch.backends.cudnn.enable = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    if fp16:
        print("using fp16")
        model.half()

    output_folder = os.path.join(cfg.OUTPUT_DIR, "inference")
    dataset_name = cfg.DATASETS.TEST[0]
    evaluator = COCOMaskEvaluator(dataset_name, ("segm",), False, output_folder)
    evaluator.reset()
    model.to(device)
    data_loader = build_detection_test_loader(cfg, dataset_name)
    durations = []

    with inference_context(model):
        for idx, inputs in enumerate(tqdm.tqdm(data_loader)):
            images, resized_size, ori_size = process_batched_inputs(inputs)
            if fp16:
                images = images.to(torch.float16)

            synchronize()
            start_time = time.perf_counter()
            output = model.inference_on_tensor(images, resized_size)
            synchronize()
            end = time.perf_counter() - start_time

            durations.append(end)
            result = postprocess(output, ori_size)
            evaluator.process(inputs, [{"instances": result.to(torch.device("cpu"))}])

    results = evaluator.evaluate()
    print_csv_format(results)

    latency = np.mean(durations[100:])
    fps = 1.0 / latency
    mem_mb = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0
    print("speed: {:.4f}s FPS: {:.2f} peak mem: {:.0f}MB ({})".format(
        latency, fps, mem_mb, torch.cuda.get_device_name(0)))
    return results


def setup(args):
    """
    Create configs and perform basic setups.
    """
    cfg = get_cfg()
    add_sparse_inst_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    setup_logger(output=cfg.OUTPUT_DIR, name="sparseinst")
    return cfg


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description="SparseInst speed test on a single GPU")
    parser.add_argument("--config-file", default="", metavar="FILE", help="path to config file")
    parser.add_argument("--fp16", action="store_true", help="support fp16 for inference")
    parser.add_argument(
        "opts",
        help="Modify config options using the command-line",
        default=None,
        nargs=argparse.REMAINDER,
    )
    args = parser.parse_args()
    print("Command Line Args:", args)
    cfg = setup(args)
    test_sparseinst_speed(cfg, fp16=args.fp16)
