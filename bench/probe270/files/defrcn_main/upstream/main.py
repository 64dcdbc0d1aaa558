import os
import torch
from detectron2.utils import comm
from detectron2.engine import launch
from detectron2.checkpoint import DetectionCheckpointer
from defrcn.config import get_cfg, set_global_cfg
from defrcn.evaluation import DatasetEvaluators, verify_results
from defrcn.engine import DefaultTrainer, default_argument_parser, default_setup


class Trainer(DefaultTrainer):

    @classmethod
    def build_evaluator(cls, cfg, dataset_name, output_folder=None):
        from defrcn.evaluation import COCOEvaluator, PascalVOCDetectionEvaluator
        if output_folder is None:
            output_folder = os.path.join(cfg.OUTPUT_DIR, "inference")
        evaluator_list = []
        if "coco" in dataset_name:
            evaluator_list.append(COCOEvaluator(dataset_name, True, output_folder))
        if "voc" in dataset_name:
            return PascalVOCDetectionEvaluator(dataset_name)
        if len(evaluator_list) == 0:
            raise NotImplementedError(
                "no Evaluator for the dataset {} with the type {}".format(dataset_name, "unknown"))
        if len(evaluator_list) == 1:
            return evaluator_list[0]
        return DatasetEvaluators(evaluator_list)


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    if args.opts:
        cfg.merge_from_list(args.opts)
    if args.num_gpus == 0:
        # allow a quick CPU smoke test: python3 main.py --num-gpus 0 --eval-only ...
        cfg.MODEL.DEVICE = "cpu"
    cfg.freeze()
    set_global_cfg(cfg)
    default_setup(cfg, args)
    return cfg


def main(args):
    cfg = setup(args)

    if args.eval_only:
        model = Trainer.build_model(cfg)
        DetectionCheckpointer(model, save_dir=cfg.OUTPUT_DIR).resume_or_load(
            cfg.MODEL.WEIGHTS, resume=args.resume
        )
        res = Trainer.test(cfg, model)
        if comm.is_main_process():
            verify_results(cfg, res)
        return res

    trainer = Trainer(cfg)
    trainer.resume_or_load(resume=args.resume)
    return trainer.train()


def check_gpus(args):
    """Fail early (before spawning) if the requested number of GPUs is not visible."""
    available = torch.cuda.device_count()
    if args.num_gpus > available:
        raise RuntimeError(
            "--num-gpus {} requested but only {} CUDA device(s) visible "
            "(CUDA_VISIBLE_DEVICES={})".format(
                args.num_gpus, available, os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
            )
        )
    if args.num_gpus > 0:
        print("Using {} x {}".format(args.num_gpus, torch.cuda.get_device_name(0)))


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    print("Command Line Args:", args)
    check_gpus(args)
    launch(
        main,
        args.num_gpus,
        num_machines=args.num_machines,
        machine_rank=args.machine_rank,
        dist_url=args.dist_url,
        args=(args,),
    )
