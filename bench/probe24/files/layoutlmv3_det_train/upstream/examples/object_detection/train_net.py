#!/usr/bin/env python
# --------------------------------------------------------------------------------
# LayoutLMv3 + Cascade Mask R-CNN for document layout analysis (PubLayNet),
# built on detectron2. Based on detectron2/tools/train_net.py.
# --------------------------------------------------------------------------------
import logging
import os
from collections import OrderedDict

import torch
import detectron2.utils.comm as comm
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.data.datasets import register_coco_instances
from detectron2.engine import (AMPTrainer, DefaultTrainer, SimpleTrainer,
                               default_argument_parser, default_setup, hooks, launch)
from detectron2.evaluation import COCOEvaluator, verify_results
from detectron2.modeling import GeneralizedRCNNWithTTA

from ditod import add_vit_config, MyDetectionCheckpointer, MyTrainer

logger = logging.getLogger("detectron2")


class Trainer(MyTrainer):
    """Adds AMP via detectron2's AMPTrainer and a COCO evaluator."""

    def __init__(self, cfg):
        super().__init__(cfg)
        model = self.build_model(cfg)
        optimizer = self.build_optimizer(cfg, model)
        data_loader = self.build_train_loader(cfg)
        model = self.create_ddp_model(model, broadcast_buffers=False)
        self._trainer = (AMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(
            model, data_loader, optimizer)

    @classmethod
    def build_evaluator(cls, cfg, dataset_name, output_folder=None):
        if output_folder is None:
            output_folder = os.path.join(cfg.OUTPUT_DIR, "inference")
        return COCOEvaluator(dataset_name, output_dir=output_folder)

    @staticmethod
    def create_ddp_model(model, broadcast_buffers=False):
        if comm.get_world_size() == 1:
            return model
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(
            model, device_ids=[comm.get_local_rank()], broadcast_buffers=broadcast_buffers,
            find_unused_parameters=True)

    @classmethod
    def test_with_TTA(cls, cfg, model):
        logger.info("Running inference with test-time augmentation ...")
        model = GeneralizedRCNNWithTTA(cfg, model)
        evaluators = [
            cls.build_evaluator(cfg, name, output_folder=os.path.join(cfg.OUTPUT_DIR, "inference_TTA"))
            for name in cfg.DATASETS.TEST
        ]
        res = cls.test(cfg, model, evaluators)
        return OrderedDict({k + "_TTA": v for k, v in res.items()})


def setup(args):
    """Create configs and perform basic setups."""
    cfg = get_cfg()
    # add_coat_config(cfg)
    add_vit_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    if not torch.cuda.is_available():
        cfg.MODEL.DEVICE = "cpu"
    else:
        cfg.MODEL.DEVICE = "cuda"
    cfg.freeze()
    default_setup(cfg, args)
    return cfg


def register_publaynet(data_dir):
    for split in ("train", "val"):
        register_coco_instances(
            f"publaynet_{split}", {},
            os.path.join(data_dir, f"{split}.json"),
            os.path.join(data_dir, split))


def main(args):
    register_publaynet(args.data_dir)
    cfg = setup(args)

    if args.eval_only:
        model = MyTrainer.build_model(cfg)
        MyDetectionCheckpointer(model, save_dir=cfg.OUTPUT_DIR).resume_or_load(
            cfg.MODEL.WEIGHTS, resume=args.resume)
        res = MyTrainer.test(cfg, model)
        if cfg.TEST.AUG.ENABLED:
            res.update(Trainer.test_with_TTA(cfg, model))
        if comm.is_main_process():
            verify_results(cfg, res)
        return res

    trainer = Trainer(cfg)
    trainer.resume_or_load(resume=args.resume)
    if cfg.TEST.AUG.ENABLED:
        trainer.register_hooks(
            [hooks.EvalHook(0, lambda: trainer.test_with_TTA(cfg, trainer.model))])
    if comm.is_main_process():
        torch.cuda.reset_peak_memory_stats()
    out = trainer.train()
    if comm.is_main_process():
        logger.info("peak memory: %.0f MB", torch.cuda.max_memory_allocated() / 2**20)
    return out


if __name__ == "__main__":
    parser = default_argument_parser()
    parser.add_argument("--debug", action="store_true", help="enable debug mode")
    parser.add_argument("--data_dir", default="data/publaynet", help="PubLayNet root")
    args = parser.parse_args()
    print("Command Line Args:", args)

    if args.debug:
        import debugpy
        print("Enabling attach starts.")
        debugpy.listen(address=('0.0.0.0', 9310))
        debugpy.wait_for_client()
        print("Enabling attach ends.")

    # one process per GPU; detectron2's launch() spawns them and sets up NCCL
    launch(
        main,
        args.num_gpus,
        num_machines=args.num_machines,
        machine_rank=args.machine_rank,
        dist_url=args.dist_url,
        args=(args,),
    )
