import argparse
import os
import shutil
import time
from datetime import datetime

import numpy as np
import torch
import torch.distributed as dist
from mmcv import Config
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils import data
from tqdm import tqdm

import methods
from utils import builder, configurator, io, misc, ops, pipeline, pt_utils, recorder

LOGGER = recorder.get_logger()


def parse_config():
    parser = argparse.ArgumentParser("Training and evaluation script")
    parser.add_argument("--config", default="./configs/zoomnet/zoomnet.py", type=str)
    parser.add_argument("--datasets-info", default="./configs/_base_/dataset/dataset_configs.json", type=str)
    parser.add_argument("--model-name", type=str)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--load-from", type=str)
    parser.add_argument("--save-path", type=str)
    parser.add_argument("--minmax-results", action="store_true")
    parser.add_argument("--info", type=str)
    parser.add_argument("--profile", action="store_true", help="dump a profiler trace of the first steps")
    # filled in by torch.distributed.launch / torchrun
    parser.add_argument("--local_rank", "--local-rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args = parser.parse_args()

    config = Config.fromfile(args.config)
    config.merge_from_dict(vars(args))

    with open(args.datasets_info, encoding="utf-8", mode="r") as f:
        import json

        datasets_info = json.load(f)

    tr_paths = {}
    for tr_dataset in config.datasets.train.path:
        if tr_dataset not in datasets_info:
            raise KeyError(f"{tr_dataset} not in {args.datasets_info}!!!")
        tr_paths[tr_dataset] = datasets_info[tr_dataset]
    config.datasets.train.path = tr_paths

    te_paths = {}
    for te_dataset in config.datasets.test.path:
        if te_dataset not in datasets_info:
            raise KeyError(f"{te_dataset} not in {args.datasets_info}!!!")
        te_paths[te_dataset] = datasets_info[te_dataset]
    config.datasets.test.path = te_paths

    config.proj_root = os.path.dirname(os.path.abspath(__file__))
    config.exp_name = misc.construct_exp_name(model_name=args.model_name, cfg=config)
    if args.info:
        config.exp_name += f"_{args.info}"
    if args.save_path is not None:
        if os.path.exists(args.save_path):
            if len(os.listdir(args.save_path)) != 0:
                raise ValueError(f"--save-path is not an empty folder.")
        else:
            print(f"{args.save_path} does not exist, create it.")
            os.makedirs(args.save_path)
        config.path = misc.construct_path(output_dir=args.save_path, exp_name=config.exp_name)
    else:
        config.path = misc.construct_path(output_dir=os.path.join(config.proj_root, "output"), exp_name=config.exp_name)
    return config


def init_distributed(cfg):
    """One process per GPU. WORLD_SIZE > 1 only when started through torchrun."""
    cfg.world_size = int(os.environ.get("WORLD_SIZE", 1))
    cfg.distributed = cfg.world_size > 1
    cfg.local_rank = int(os.environ.get("LOCAL_RANK", cfg.local_rank))
    if cfg.distributed:
        torch.cuda.set_device(cfg.local_rank)
        dist.init_process_group(backend=cfg.dist_params.backend, init_method="env://")
        cfg.rank = dist.get_rank()
    else:
        cfg.rank = 0
    # `device` comes from the config file ("cuda" by default), one device per process
    cfg.device = f"{cfg.device}:{cfg.local_rank}"
    return cfg


def is_main_process(cfg):
    return cfg.rank == 0


def test_once(
    model,
    data_loader,
    save_path,
    tta_setting,
    clip_range=None,
    show_bar=False,
    desc="[TE]",
    to_minmax=False,
):
    model.is_training = False
    cal_total_seg_metrics = recorder.CalTotalMetric()

    pgr_bar = enumerate(data_loader)
    if show_bar:
        pgr_bar = tqdm(pgr_bar, total=len(data_loader), ncols=79, desc=desc)
    for batch_id, batch in pgr_bar:
        batch_images = misc.to_device(batch["data"], device=model.device)
        if tta_setting.enable:
            logits = pipeline.test_aug(
                model=model, data=batch_images, strategy=tta_setting.strategy, reducation=tta_setting.reduction
            )
        else:
            logits = model(data=batch_images)
        probs = logits.sigmoid().squeeze(1).cpu().detach().numpy()

        for i, pred in enumerate(probs):
            mask_path = batch["info"]["mask_path"][i]
            mask_array = io.read_gray_array(mask_path, dtype=np.uint8)
            mask_h, mask_w = mask_array.shape

            pred = ops.resize(pred, height=mask_h, width=mask_w)

            if clip_range is not None:
                pred = ops.clip_to_normalize(pred, clip_range=clip_range)

            if save_path:  # 这里的save_path包含了数据集名字
                ops.save_array_as_image(data_array=pred, save_name=os.path.basename(mask_path), save_dir=save_path, to_minmax=to_minmax)

            pred = (pred * 255).astype(np.uint8)
            cal_total_seg_metrics.step(pred, mask_array, mask_path)
    fixed_seg_results = cal_total_seg_metrics.get_results()
    return fixed_seg_results


@torch.no_grad()
def testing(model, cfg):
    pred_save_path = None
    for data_name, data_path, loader in pipeline.get_te_loader(cfg):
        if cfg.save_results:
            pred_save_path = os.path.join(cfg.path.save, data_name)
            LOGGER.info(f"Results will be saved into {pred_save_path}")
        seg_results = test_once(
            model=model,
            save_path=pred_save_path,
            data_loader=loader,
            tta_setting=cfg.test.tta,
            clip_range=cfg.test.clip_range,
            show_bar=cfg.test.get("show_bar", False),
            to_minmax=cfg.get("minmax_results", False),
        )
        LOGGER.info(f"Results on the testset({data_name}:{data_path['root']}): {misc.mapping_to_str(data_path)}")
        LOGGER.info(f"\t{seg_results}")
        cfg.excel_logger(row_data=seg_results, dataset_name=data_name, method_name=cfg.exp_name)


def profile_steps(model, batch_data, cfg, num_steps=6):
    """Trace a few forward/backward steps; view with `tensorboard --logdir <pth_log>/profile`."""
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    trace_dir = os.path.join(cfg.path.pth_log, "profile")
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=num_steps - 2),
        on_trace_ready=tensorboard_trace_handler(trace_dir),
        record_shapes=True,
        profile_memory=True,
    ) as prof:
        for _ in range(num_steps):
            outputs = model(data=batch_data, iter_percentage=0.0, curr=dict(iter=0, epoch=0))
            outputs["loss"].backward()
            model.zero_grad(set_to_none=True)
            prof.step()
    LOGGER.info(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))
    LOGGER.info(f"Profiler trace written to {trace_dir}")


def training(model, cfg) -> pipeline.ModelEma:
    tr_dataset = builder.build_obj_from_registry(
        registry_name="DATASETS",
        obj_name=cfg.datasets.train.dataset_type,
        obj_cfg=dict(
            root=[(name, path) for name, path in cfg.datasets.train.path.items()],
            shape=cfg.datasets.train.shape,
            extra_scales=cfg.train.ms.extra_scales if cfg.train.ms.enable else None,
            interp_cfg=cfg.datasets.train.get("interp_cfg", None),
        ),
    )
    LOGGER.info(f"Total Length of Image Set(s): {len(tr_dataset)}")

    sampler = data.distributed.DistributedSampler(tr_dataset, shuffle=True) if cfg.distributed else None
    tr_loader = data.DataLoader(
        dataset=tr_dataset,
        batch_size=cfg.train.batch_size,
        num_workers=cfg.train.num_workers,
        shuffle=sampler is None,
        sampler=sampler,
        drop_last=True,
        pin_memory=True,
        collate_fn=tr_dataset.collate_fn if cfg.train.ms.enable else None,
        worker_init_fn=misc.customized_worker_init_fn if cfg.use_custom_worker_init else None,
    )

    counter = recorder.TrainingCounter(
        epoch_length=len(tr_loader),
        epoch_based=cfg.train.epoch_based,
        num_epochs=cfg.train.num_epochs,
        num_total_iters=cfg.train.num_iters,
    )
    optimizer = pipeline.construct_optimizer(
        model=model,
        initial_lr=cfg.train.lr,
        mode=cfg.train.optimizer.mode,
        group_mode=cfg.train.optimizer.group_mode,
        cfg=cfg.train.optimizer.cfg,
    )
    scheduler = pipeline.Scheduler(
        optimizer=optimizer,
        num_iters=counter.num_total_iters,
        epoch_length=counter.num_inner_iters,
        scheduler_cfg=cfg.train.scheduler,
        step_by_batch=cfg.train.sche_usebatch,
    )
    scheduler.record_lrs(param_groups=optimizer.param_groups)
    scheduler.plot_lr_coef_curve(save_path=cfg.path.pth_log)
    scaler = pt_utils.Scaler(optimizer, cfg.train.use_amp, set_to_none=cfg.train.optimizer.set_to_none)

    LOGGER.info(f"Scheduler:\n{scheduler}\nOptimizer:\n{optimizer}")

    if cfg.distributed:
        model = DDP(model, device_ids=[cfg.local_rank], output_device=cfg.local_rank, find_unused_parameters=False)
    raw_model = model.module if cfg.distributed else model

    if cfg.train.ema.enable:
        model_ema = pipeline.ModelEma(raw_model, decay=cfg.train.ema.decay, force_cpu=cfg.train.ema.force_cpu)
        LOGGER.info("Using EMA for the model.")
    else:
        model_ema = None

    loss_recorder = recorder.HistoryBuffer()
    iter_time_recorder = recorder.HistoryBuffer()

    LOGGER.info(f"Image Mean: {model.normalizer.mean.flatten()}, Image Std: {model.normalizer.std.flatten()}")
    train_start_time = time.perf_counter()
    for curr_epoch in range(counter.num_epochs):
        LOGGER.info(f"Exp_Name: {cfg.exp_name}")

        model.train()
        if sampler is not None:
            sampler.set_epoch(curr_epoch)
        # an epoch starts
        for batch_idx, batch in enumerate(tr_loader):
            iter_start_time = time.perf_counter()
            scheduler.step(curr_idx=counter.curr_iter)  # update learning rate

            batch_data = misc.to_device(data=batch["data"], device=cfg.device)
            if cfg.get("profile", False) and counter.curr_iter == 0 and is_main_process(cfg):
                profile_steps(model, batch_data, cfg)
            with torch.cuda.amp.autocast(enabled=cfg.train.use_amp):
                outputs = model(
                    data=batch_data,
                    iter_percentage=counter.curr_percent,
                    curr=dict(iter=counter.curr_iter, epoch=counter.curr_epoch),
                )

            loss = outputs["loss"]
            loss_str = outputs["loss_str"]
            loss = loss / cfg.train.grad_acc_step
            scaler.calculate_grad(loss=loss)
            if counter.every_n_iters(cfg.train.grad_acc_step):  # Accumulates scaled gradients.
                scaler.update_grad()
                if model_ema is not None:
                    model_ema.update(raw_model)

            item_loss = loss.item()
            data_shape = tuple(batch_data["mask"].shape)
            loss_recorder.update(value=item_loss, num=data_shape[0])
            iter_time_recorder.update(value=time.perf_counter() - iter_start_time)

            if cfg.log_interval.txt > 0 and (
                counter.every_n_iters(cfg.log_interval.txt)
                or counter.is_first_inner_iter()
                or counter.is_last_inner_iter()
                or counter.is_last_total_iter()
            ) and is_main_process(cfg):
                gpu_mem = f"{torch.cuda.max_memory_allocated() / 1024 ** 3:.2f}G"
                eta_seconds = iter_time_recorder.avg * (counter.num_total_iters - counter.curr_iter - 1)
                eta_str = f"{eta_seconds / 3600:.1f}h"
                msg = ", ".join(
                    [
                        f"I:{counter.curr_iter}:{counter.num_total_iters} {batch_idx}/{counter.num_inner_iters} {curr_epoch}/{counter.num_epochs}",
                        f"Lr:{misc.mapping_to_str(scheduler.get_lr(), '')}",
                        f"M:{loss_recorder.avg:.5f}/C:{item_loss:.5f}",
                        f"Mem:{gpu_mem}",
                        f"ETA:{eta_str}",
                        f"{data_shape}",
                        f"{loss_str}",
                    ]
                )
                LOGGER.info(msg)

            if counter.is_last_total_iter():
                break
            counter.update_iter_counter()

        # an epoch ends
        if is_main_process(cfg):
            recorder.plot_results(
                dict(img=batch_data["image1.0"], msk=batch_data["mask"], **outputs["vis"]),
                save_path=os.path.join(cfg.path.pth_log, "img", f"epoch_{curr_epoch}.png"),
            )
            io.save_weight(model=raw_model, save_path=cfg.path.final_state_net)
            if model_ema is not None:
                io.save_weight(model=model_ema.module, save_path=cfg.path.final_ema_state_net)

        counter.update_epoch_counter()
        torch.cuda.empty_cache()

    cost_time = time.perf_counter() - train_start_time
    LOGGER.info(f"Train start time: {train_start_time}, cost time: {cost_time}")
    return model_ema


def main():
    cfg = parse_config()
    cfg = init_distributed(cfg)
    pt_utils.initialize_seed_cudnn(seed=cfg.base_seed + cfg.rank, deterministic=cfg.deterministic)

    if is_main_process(cfg):
        if not cfg.skip_train and cfg.path.pth_log:
            configurator.print_config(cfg)
            shutil.copy(src=os.path.abspath(__file__), dst=cfg.path.trainer_copy)
            with open(cfg.path.cfg_copy, encoding="utf-8", mode="w") as f:
                f.write(cfg.pretty_text)
        recorder.init_recorder(file_path=cfg.path.tr_log, excel_path=cfg.path.te_excel)
        cfg.excel_logger = recorder.MetricExcelRecorder(
            xlsx_path=cfg.path.te_excel,
            dataset_names=sorted([x for x in cfg.datasets.test.path.keys()]),
        )
        LOGGER.info(f"{cfg.exp_name} on {torch.cuda.device_count()} GPU(s): {torch.cuda.get_device_name(0)}")

    model, model_code = builder.build_obj_from_registry(
        registry_name="MODELS", obj_name=cfg.model_name, return_code=True
    )
    LOGGER.info(model_code)
    if cfg.load_from:
        io.load_weight(model=model, load_path=cfg.load_from)
    if cfg.distributed and cfg.train.sync_bn:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)

    model.device = cfg.device
    model.to(model.device)

    if not cfg.skip_train:
        model_ema = training(model=model, cfg=cfg)
        if model_ema is not None and cfg.train.ema.keep_original_test:
            LOGGER.info("We will test the model_ema and the original model.")
            if is_main_process(cfg):
                testing(model=model, cfg=cfg)
        if model_ema is not None:
            model = model_ema.module

    if not cfg.skip_test and is_main_process(cfg):
        testing(model=model, cfg=cfg)

    if cfg.distributed:
        dist.barrier()
        dist.destroy_process_group()
    LOGGER.info("End training...")


if __name__ == "__main__":
    main()
