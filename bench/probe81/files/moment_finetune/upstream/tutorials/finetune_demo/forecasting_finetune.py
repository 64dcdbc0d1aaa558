"""Fine-tune MOMENT's forecasting head on ETTh1 (linear probing / full fine-tuning).

    python tutorials/finetune_demo/forecasting_finetune.py --forecast_horizon 192 --epochs 1
"""

import argparse
import os
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import OneCycleLR
from torch.utils.data import DataLoader
from tqdm import tqdm

from momentfm import MOMENTPipeline
from momentfm.data.informer_dataset import InformerDataset
from momentfm.utils.forecasting_metrics import get_forecasting_metrics
from momentfm.utils.utils import control_randomness


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--forecast_horizon", type=int, default=192)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max_lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--full_finetune", action="store_true")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys profiling")
    parser.add_argument("--save_dir", type=str, default="checkpoints/moment_forecasting")
    return parser.parse_args()


def main():
    args = parse_args()
    control_randomness(seed=args.seed)

    model = MOMENTPipeline.from_pretrained(
        "AutonLab/MOMENT-1-large",
        model_kwargs={
            "task_name": "forecasting",
            "forecast_horizon": args.forecast_horizon,
            "head_dropout": 0.1,
            "weight_decay": 0,
            "freeze_encoder": not args.full_finetune,  # Freeze the patch embedding layer
            "freeze_embedder": not args.full_finetune,  # Freeze the transformer encoder
            "freeze_head": False,  # The linear forecasting head must be trained
        },
    )
    model.init()

    train_dataset = InformerDataset(data_split="train", random_seed=args.seed, forecast_horizon=args.forecast_horizon)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)

    test_dataset = InformerDataset(data_split="test", random_seed=args.seed, forecast_horizon=args.forecast_horizon)
    test_loader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=False, num_workers=4, pin_memory=True)

    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True

    # bf16 autocast on Ampere+, fp16 + loss scaling on older cards
    use_bf16 = torch.cuda.get_device_properties(0).major >= 8
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=not use_bf16)

    model = model.to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)

    # Create a OneCycleLR scheduler
    max_epoch = args.epochs
    total_steps = len(train_loader) * max_epoch
    scheduler = OneCycleLR(optimizer, max_lr=args.max_lr, total_steps=total_steps, pct_start=0.3)

    # Gradient clipping value
    max_norm = 5.0

    for cur_epoch in range(max_epoch):
        model.train()
        losses = []
        for step, (timeseries, forecast, input_mask) in enumerate(tqdm(train_loader, total=len(train_loader))):
            if args.nvtx:
                torch.cuda.nvtx.range_push(f"step{step}")
            # Move the data to the GPU
            timeseries = timeseries.float().to(device)
            input_mask = input_mask.to(device)
            forecast = forecast.float().to(device)

            with torch.cuda.amp.autocast(dtype=amp_dtype):
                output = model(x_enc=timeseries, input_mask=input_mask)

            loss = criterion(output.forecast, forecast)

            # Scales the loss for mixed precision training
            scaler.scale(loss).backward()

            # Clip gradients
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)

            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()

            losses.append(loss.item())
            if args.nvtx:
                torch.cuda.nvtx.range_pop()

        losses = np.array(losses)
        average_loss = np.average(losses)
        print(f"Epoch {cur_epoch}: Train loss: {average_loss:.3f}")

        # Evaluate the model on the test split
        trues, preds, histories, losses = [], [], [], []
        model.eval()
        with torch.no_grad():
            for timeseries, forecast, input_mask in tqdm(test_loader, total=len(test_loader)):
                # Move the data to the GPU
                timeseries = timeseries.float().to(device)
                input_mask = input_mask.to(device)
                forecast = forecast.float().to(device)

                ctx = torch.cuda.amp.autocast(dtype=amp_dtype) if device.type == "cuda" else nullcontext()
                with ctx:
                    output = model(x_enc=timeseries, input_mask=input_mask)

                loss = criterion(output.forecast, forecast)
                losses.append(loss.item())

                trues.append(forecast.detach().cpu().numpy())
                preds.append(output.forecast.detach().cpu().numpy())
                histories.append(timeseries.detach().cpu().numpy())

        losses = np.array(losses)
        average_loss = np.average(losses)

        trues = np.concatenate(trues, axis=0)
        preds = np.concatenate(preds, axis=0)
        histories = np.concatenate(histories, axis=0)

        metrics = get_forecasting_metrics(y=trues, y_hat=preds, reduction="mean")
        print(f"Epoch {cur_epoch}: Test MSE: {metrics.mse:.3f} | Test MAE: {metrics.mae:.3f}")
        torch.cuda.empty_cache()

    os.makedirs(args.save_dir, exist_ok=True)
    state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
    torch.save(state, os.path.join(args.save_dir, f"moment_etth1_{args.forecast_horizon}.pt"))


if __name__ == "__main__":
    main()
