import argparse
import json
import logging
from typing import Tuple

import matplotlib.pyplot as plt
import seaborn as sns
import torch
from eval_tools import time_sync, write_results
from mivolo.data.dataset import build as build_data
from mivolo.model.mi_volo import MiVOLO
from timm.utils import setup_default_logging

_logger = logging.getLogger("inference")
LOG_FREQUENCY = 10


def get_parser():
    parser = argparse.ArgumentParser(description="PyTorch MiVOLO Validation")
    parser.add_argument("--dataset_images", default="", type=str, required=True, help="path to images")
    parser.add_argument("--dataset_annotations", default="", type=str, required=True, help="path to annotations")
    parser.add_argument(
        "--dataset_name",
        default=None,
        type=str,
        required=True,
        choices=["utk", "imdb", "lagenda", "fairface", "adience", "agedb", "cacd"],
        help="dataset name",
    )
    parser.add_argument("--split", default="validation", help="dataset splits separated by comma (default: validation)")
    parser.add_argument("--checkpoint", default="", type=str, required=True, help="path to mivolo checkpoint")

    parser.add_argument("--batch-size", default=64, type=int, help="batch size")
    parser.add_argument(
        "--workers", default=4, type=int, metavar="N", help="number of data loading workers (default: 4)"
    )
    parser.add_argument("--device", default="cuda", type=str, help="Device (accelerator) to use.")
    parser.add_argument("--l-for-cs", type=int, default=5, help="L for CS (cumulative score)")

    parser.add_argument("--half", action="store_true", default=False, help="use half-precision model")
    parser.add_argument(
        "--with-persons", action="store_true", default=False, help="If the model will run with persons, if available"
    )
    parser.add_argument(
        "--disable-faces", action="store_true", default=False, help="If the model will use only persons if available"
    )

    parser.add_argument("--draw-hist", action="store_true", help="Draws the hist of error by age")
    parser.add_argument(
        "--compile",
        type=str,
        default=None,
        const="inductor",
        nargs="?",
        help="Enable compilation w/ specified backend (default: inductor).",
    )
    parser.add_argument("--benchmark", action="store_true", help="Measure throughput and peak memory only")

    return parser


def process_batch(
    mivolo_model: MiVOLO,
    input: torch.tensor,
    target: torch.tensor,
    num_classes_gender: int = 2,
):

    start = time_sync()
    output = mivolo_model.inference(input)
    # target with age == -1 and gender == -1 marks that sample is not valid
    assert not (all(target[:, 0] == -1) and all(target[:, 1] == -1))

    if not mivolo_model.meta.only_age:
        gender_out = output[:, :num_classes_gender]
        gender_target = target[:, 1]
        age_out = output[:, num_classes_gender]
    else:
        age_out = output
        gender_out, gender_target = None, None

    # measure elapsed time
    process_time = time_sync() - start

    age_target = target[:, 0].unsqueeze(1)

    return age_out, age_target, gender_out, gender_target, process_time


def _filter_invalid_target(out: torch.tensor, target: torch.tensor):
    # exclude samples where target gt == -1, that marks sample is not valid
    mask = target != -1
    return out[mask], target[mask]


def postprocess_gender(gender_out: torch.tensor, gender_target: torch.tensor) -> Tuple[torch.tensor, torch.tensor]:
    if gender_target is None:
        return gender_out, gender_target
    return _filter_invalid_target(gender_out, gender_target)


def postprocess_age(age_out: torch.tensor, age_target: torch.tensor, dataset) -> Tuple[torch.tensor, torch.tensor]:
    # Revert _norm_age() operation. Output is 2 float tensors

    age_out, age_target = _filter_invalid_target(age_out, age_target)

    age_out = age_out * (dataset.max_age - dataset.min_age) + dataset.avg_age
    # clamp to 0 because age can be below zero
    age_out = torch.clamp(age_out, min=0)

    if dataset.age_classes is not None:
        # classification case
        age_out = torch.round(age_out)
        if dataset._intervals.device != age_out.device:
            dataset._intervals = dataset._intervals.to(age_out.device)
        age_inds = torch.searchsorted(dataset._intervals, age_out, side="right") - 1
        age_out = age_inds
    else:
        age_target = age_target * (dataset.max_age - dataset.min_age) + dataset.avg_age
    return age_out, age_target


def benchmark(model: MiVOLO, batch_size: int, device: str, steps: int = 100):
    _logger.info(f"Benchmarking on {torch.cuda.get_device_name(0)} with batch size {batch_size}")
    model.warmup(batch_size)
    torch.cuda.reset_peak_memory_stats()

    c, h, w = model.data_config["input_size"]
    in_chans = 6 if model.meta.with_persons_model else c
    dummy = torch.randn((batch_size, in_chans, h, w), device=device)

    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    start_event.record()
    for _ in range(steps):
        model.inference(dummy)
    end_event.record()
    torch.cuda.synchronize()
    elapsed_ms = start_event.elapsed_time(end_event)

    fps = steps * batch_size / (elapsed_ms / 1000.0)
    peak_mem = torch.cuda.max_memory_allocated() / 2 ** 20
    _logger.info(f"Throughput: {fps:.1f} img/s, latency {elapsed_ms / steps:.2f} ms/batch, peak mem {peak_mem:.0f} MB")
    return {"fps": fps, "ms_per_batch": elapsed_ms / steps, "peak_mem_mb": peak_mem}


def validate(args):

    mivolo_model = MiVOLO(
        args.checkpoint,
        args.device,
        half=args.half,
        use_persons=args.with_persons,
        disable_faces=args.disable_faces,
        verbose=True,
        torchcompile=args.compile,
    )

    if args.benchmark:
        stats = benchmark(mivolo_model, args.batch_size, args.device)
        print(json.dumps(stats, indent=2))
        return

    dataset, data_loader = build_data(
        name=args.dataset_name,
        images_path=args.dataset_images,
        annotations_path=args.dataset_annotations,
        split=args.split,
        mivolo_model=mivolo_model,  # to get meta information from model
        workers=args.workers,
        batch_size=args.batch_size,
    )

    d_stat = Metrics(args.l_for_cs, args.draw_hist, dataset.age_classes)

    # warmup, reduce variability of first batch time, especially for comparing torchscript models
    mivolo_model.warmup(args.batch_size)

    preproc_end = time_sync()
    for batch_idx, (input, target) in enumerate(data_loader):

        preprocess_time = time_sync() - preproc_end
        # get output and calculate loss
        age_out, age_target, gender_out, gender_target, process_time = process_batch(
            mivolo_model, input, target, mivolo_model.meta.num_classes_gender
        )

        gender_out, gender_target = postprocess_gender(gender_out, gender_target)
        age_out, age_target = postprocess_age(age_out, age_target, dataset)

        d_stat.update_gender_accuracy(gender_out, gender_target)
        if d_stat.is_regression:
            d_stat.update_regression_age_metrics(age_out, age_target)
        else:
            d_stat.update_age_accuracy(age_out, age_target)
        d_stat.update_time(process_time, preprocess_time, input.shape[0])

        if batch_idx % LOG_FREQUENCY == 0:
            _logger.info(
                "Test: [{0:>4d}/{1}]  " "{2}".format(batch_idx, len(data_loader), d_stat.get_info_str(input.size(0)))
            )

        preproc_end = time_sync()

    # model info
    results = dict(
        model=args.checkpoint,
        dataset_name=args.dataset_name,
        param_count=round(mivolo_model.param_count / 1e6, 2),
        img_size=data_loader.dataset.target_size,
        use_faces=mivolo_model.meta.use_face_crops,
        use_persons=mivolo_model.meta.use_person_crops,
        in_chans=mivolo_model.meta.in_chans,
        batch=args.batch_size,
    )
    # metrics info
    results.update(d_stat.get_result())
    return results


class Metrics:
    def __init__(self, l_for_cs, draw_hist, age_classes=None):
        self.batch_time = AverageMeter()
        self.preprocess_time = AverageMeter()
        self.losses = AverageMeter()
        self.top1_m_gender = AverageMeter()
        self.top1_m_age = AverageMeter()

        if age_classes is None:
            self.is_regression = True
            self.av_csl = AverageMeter()
            self.max_error = AverageMeter()
            self.per_age_error = defaultdict(list)
            self.l_for_cs = l_for_cs
        else:
            self.is_regression = False

        self.draw_hist = draw_hist

    def update_regression_age_metrics(self, age_out, age_target):
        batch_size = age_out.size(0)

        age_abs_err = torch.abs(age_out - age_target)
        age_acc1 = torch.sum(age_abs_err) / age_out.shape[0]
        age_csl = cumulative_score(age_out, age_target, self.l_for_cs)
        me = cumulative_error(age_out, age_target, 20)

        self.top1_m_age.update(age_acc1.item(), batch_size)
        self.av_csl.update(age_csl.item(), batch_size)
        self.max_error.update(me.item(), batch_size)

        if self.draw_hist:
            for i in range(age_out.shape[0]):
                self.per_age_error[int(age_target[i].item())].append(age_abs_err[i].item())

    def update_age_accuracy(self, age_out, age_target):
        batch_size = age_out.size(0)
        if batch_size == 0:
            return
        correct = torch.sum(age_out == age_target)
        age_accuracy = correct * 100.0 / batch_size
        self.top1_m_age.update(age_accuracy.item(), batch_size)

    def update_gender_accuracy(self, gender_out, gender_target):
        if gender_out is None or gender_out.size(0) == 0:
            return
        batch_size = gender_out.size(0)
        gender_out = gender_out.argmax(dim=-1)
        correct = torch.sum(gender_out == gender_target)
        gender_accuracy = correct * 100.0 / batch_size
        self.top1_m_gender.update(gender_accuracy.item(), batch_size)

    def update_time(self, process_time, preprocess_time, batch_size):
        self.preprocess_time.update(preprocess_time, batch_size)
        self.batch_time.update(process_time, batch_size)

    def get_info_str(self, batch_size):
        avg_time = (self.preprocess_time.sum + self.batch_time.sum) / self.batch_time.count
        cur_time = self.batch_time.val + self.preprocess_time.val
        middle_info = (
            "Time: {cur_time:.3f}s ({avg_time:.3f}s, {rate_avg:>7.2f}/s)  "
            "Gender Acc: {top1gender.val:>7.2f} ({top1gender.avg:>7.4f})  ".format(
                cur_time=cur_time,
                avg_time=avg_time,
                rate_avg=batch_size / avg_time,
                top1gender=self.top1_m_gender,
            )
        )

        if self.is_regression:
            age_info = "Age CS@{l_for_cs}: {csl.val:>7.4f} ({csl.avg:>7.4f})  " "Age MAE: {mae.val:>7.4f} ({mae.avg:>7.4f})".format(
                csl=self.av_csl, l_for_cs=self.l_for_cs, mae=self.top1_m_age
            )
        else:
            age_info = "Age Acc: {top1age.val:>7.2f} ({top1age.avg:>7.4f})".format(top1age=self.top1_m_age)

        return middle_info + age_info

    def get_result(self):
        age_top1a = self.top1_m_age.avg
        gender_top1 = self.top1_m_gender.avg if self.top1_m_gender.count > 0 else None

        mean_per_image_time = self.batch_time.sum / self.batch_time.count
        results = dict(
            mean_inference_time=mean_per_image_time * 1e3,
            gender_top1=round(gender_top1, 4) if gender_top1 is not None else None,
        )

        if self.is_regression:
            results.update(
                dict(
                    agetop1=round(age_top1a, 4),
                    max_error=self.max_error.avg,
                    csl=round(self.av_csl.avg, 4),
                )
            )
        else:
            results.update(dict(agetop1=round(age_top1a, 4)))

        if self.draw_hist and self.is_regression:
            means = [(age, sum(errs) / len(errs)) for age, errs in sorted(self.per_age_error.items())]
            ages, errs = zip(*means) if means else ([], [])
            plt.figure(figsize=(12, 4))
            sns.barplot(x=list(ages), y=list(errs))
            plt.savefig("age_error.png")

        return results


def main():
    parser = get_parser()
    setup_default_logging()
    args = parser.parse_args()

    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.benchmark = True

    status = validate(args)
    if status is not None:
        write_results("valid_results.csv", status)


if __name__ == "__main__":
    from collections import defaultdict

    from mivolo.data.misc import cumulative_error, cumulative_score
    from timm.utils import AverageMeter

    main()
