"""
Evaluate CTVIS on long-video benchmarks (OVIS / YouTube-VIS 2022 long videos).

Differences from detectron2's ``inference_on_dataset``:
  * the model is run clip-by-clip with the tracker memory carried across clips,
  * per-video timing and peak memory are logged,
  * the CUDA caching allocator is flushed after every video (OVIS has videos with 200+ frames
    at 720p; without it fragmentation OOMs on 24GB cards after ~100 videos).

    python tools/test_long_video.py --config-file configs/ovis/CTVIS_R50.yaml \
        --num-gpus 4 MODEL.WEIGHTS work_dirs/ctvis_r50_ovis/model_final.pth
"""
import datetime
import logging
import os
import sys
import time
from collections import OrderedDict, abc
from contextlib import ExitStack, contextmanager

import torch
from torch import nn

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import detectron2.utils.comm as comm
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.engine import default_argument_parser, default_setup, launch
from detectron2.evaluation import DatasetEvaluators, print_csv_format
from detectron2.modeling import build_model
from detectron2.projects.deeplab import add_deeplab_config
from detectron2.utils.comm import get_world_size
from detectron2.utils.logger import log_every_n_seconds, setup_logger

from mask2former import add_maskformer2_config
from ctvis import add_ctvis_config
from ctvis.data import YTVISDatasetMapper, YTVISEvaluator, build_detection_test_loader
from ctvis.utils.memory import retry_if_oom_on_cpu


@contextmanager
def inference_context(model):
    training_mode = model.training
    model.eval()
    yield
    model.train(training_mode)


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def inference_on_long_videos(model, data_loader, evaluator, clip_len=None, flush_every=1):
    num_devices = get_world_size()
    logger = logging.getLogger(__name__)
    logger.info("Start inference on {} videos".format(len(data_loader)))

    total = len(data_loader)  # inference data loader must have a fixed length
    if evaluator is None:
        evaluator = DatasetEvaluators([])
    if isinstance(evaluator, abc.MutableSequence):
        evaluator = DatasetEvaluators(evaluator)
    evaluator.reset()

    num_warmup = min(5, total - 1)
    start_time = time.perf_counter()
    total_data_time = 0
    total_compute_time = 0
    total_eval_time = 0
    with ExitStack() as stack:
        if isinstance(model, nn.Module):
            stack.enter_context(inference_context(model))
        stack.enter_context(torch.no_grad())

        start_data_time = time.perf_counter()
        for idx, inputs in enumerate(data_loader):
            total_data_time += time.perf_counter() - start_data_time
            if idx == num_warmup:
                start_time = time.perf_counter()
                total_data_time = 0
                total_compute_time = 0
                total_eval_time = 0

            num_frames = len(inputs[0]["image"])
            torch.cuda.reset_peak_memory_stats()
            start_compute_time = time.perf_counter()
            if clip_len is not None:
                inputs[0]["clip_len"] = clip_len
            outputs = retry_if_oom_on_cpu(model)(inputs)
            _sync()
            total_compute_time += time.perf_counter() - start_compute_time

            start_eval_time = time.perf_counter()
            evaluator.process(inputs, outputs)
            total_eval_time += time.perf_counter() - start_eval_time

            peak_mb = torch.cuda.max_memory_allocated() / (1024 ** 2)
            del outputs
            if flush_every > 0 and (idx + 1) % flush_every == 0:
                torch.cuda.empty_cache()

            iters_after_start = idx + 1 - num_warmup * int(idx >= num_warmup)
            data_seconds_per_iter = total_data_time / iters_after_start
            compute_seconds_per_iter = total_compute_time / iters_after_start
            eval_seconds_per_iter = total_eval_time / iters_after_start
            total_seconds_per_iter = (time.perf_counter() - start_time) / iters_after_start
            if idx >= num_warmup * 2 or compute_seconds_per_iter > 5:
                eta = datetime.timedelta(seconds=int(total_seconds_per_iter * (total - idx - 1)))
                log_every_n_seconds(
                    logging.INFO,
                    (
                        f"Inference done {idx + 1}/{total}. "
                        f"Video length: {num_frames}. "
                        f"Peak mem: {peak_mb:.0f}MB. "
                        f"Dataloading: {data_seconds_per_iter:.4f} s/iter. "
                        f"Inference: {compute_seconds_per_iter:.4f} s/iter. "
                        f"Eval: {eval_seconds_per_iter:.4f} s/iter. "
                        f"Total: {total_seconds_per_iter:.4f} s/iter. "
                        f"ETA={eta}"
                    ),
                    n=5,
                )
            start_data_time = time.perf_counter()

    # Measure the time only for this worker (before the synchronization barrier)
    total_time = time.perf_counter() - start_time
    total_time_str = str(datetime.timedelta(seconds=total_time))
    # NOTE this format is parsed by grep
    logger.info(
        "Total inference time: {} ({:.6f} s / iter per device, on {} devices)".format(
            total_time_str, total_time / (total - num_warmup), num_devices
        )
    )
    total_compute_time_str = str(datetime.timedelta(seconds=int(total_compute_time)))
    logger.info(
        "Total inference pure compute time: {} ({:.6f} s / iter per device, on {} devices)".format(
            total_compute_time_str, total_compute_time / (total - num_warmup), num_devices
        )
    )

    results = evaluator.evaluate()
    # An evaluator may return None when not in main process.
    # Replace it by an empty dict instead to make it easier for downstream code to handle
    if results is None:
        results = {}
    return results


def setup(args):
    cfg = get_cfg()
    add_deeplab_config(cfg)
    add_maskformer2_config(cfg)
    add_ctvis_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    default_setup(cfg, args)
    setup_logger(output=cfg.OUTPUT_DIR, distributed_rank=comm.get_rank(), name="ctvis")
    return cfg


def main(args):
    cfg = setup(args)
    logger = logging.getLogger("ctvis")

    model = build_model(cfg)
    logger.info("Model on {}: {} ({})".format(
        cfg.MODEL.DEVICE, type(model).__name__,
        torch.cuda.get_device_name() if cfg.MODEL.DEVICE.startswith("cuda") else "cpu"))
    DetectionCheckpointer(model, save_dir=cfg.OUTPUT_DIR).resume_or_load(cfg.MODEL.WEIGHTS, resume=False)

    results = OrderedDict()
    for dataset_name in cfg.DATASETS.TEST:
        data_loader = build_detection_test_loader(
            cfg, dataset_name, mapper=YTVISDatasetMapper(cfg, is_train=False)
        )
        output_folder = os.path.join(cfg.OUTPUT_DIR, "inference", dataset_name)
        os.makedirs(output_folder, exist_ok=True)
        evaluator = YTVISEvaluator(dataset_name, cfg, True, output_folder)
        results[dataset_name] = inference_on_long_videos(
            model, data_loader, evaluator,
            clip_len=cfg.TEST.CLIP_LEN if cfg.TEST.CLIP_LEN > 0 else None,
        )
        if comm.is_main_process():
            print_csv_format(results[dataset_name])
    return results


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    print("Command Line Args:", args)
    launch(
        main,
        args.num_gpus,
        num_machines=args.num_machines,
        machine_rank=args.machine_rank,
        dist_url=args.dist_url,
        args=(args,),
    )
