"""Ray Tune search for rtdl's FT-Transformer (ASHA), then a 4-worker Ray Train refit of the best config.

    python tuning/ray_tune_ft.py --data data/california.npz --samples 64
"""
import argparse
import os
import tempfile

import numpy as np
import ray
import rtdl
import torch
import torch.nn.functional as F
from ray import train, tune
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer
from ray.tune.schedulers import ASHAScheduler
from ray.tune.search.optuna import OptunaSearch


def load_npz(path):
    d = np.load(path)
    return {k: d[k] for k in d.files}


def batches(x, y, bs, shuffle, device):
    idx = torch.randperm(len(x), device=device) if shuffle else torch.arange(len(x), device=device)
    for i in range(0, len(x), bs):
        j = idx[i:i + bs]
        yield x[j], y[j]


def build_model(config, n_num):
    return rtdl.FTTransformer.make_baseline(
        n_num_features=n_num,
        cat_cardinalities=None,
        d_token=config["d_token"],
        n_blocks=config["n_blocks"],
        attention_dropout=config["attention_dropout"],
        ffn_d_hidden=int(config["d_token"] * config["ffn_factor"]),
        ffn_dropout=config["ffn_dropout"],
        residual_dropout=0.0,
        d_out=1,
    )


def tune_trainable(config, data=None):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x_tr = torch.as_tensor(data["X_train"], dtype=torch.float32, device=device)
    y_tr = torch.as_tensor(data["y_train"], dtype=torch.float32, device=device)
    x_va = torch.as_tensor(data["X_val"], dtype=torch.float32, device=device)
    y_va = torch.as_tensor(data["y_val"], dtype=torch.float32, device=device)

    model = build_model(config, x_tr.shape[1]).to(device)
    optimizer = torch.optim.AdamW(model.optimization_param_groups(), lr=config["lr"],
                                  weight_decay=config["weight_decay"])
    scaler = torch.cuda.amp.GradScaler()

    for epoch in range(config["epochs"]):
        model.train()
        for xb, yb in batches(x_tr, y_tr, config["batch_size"], True, device):
            optimizer.zero_grad()
            with torch.cuda.amp.autocast():
                loss = F.mse_loss(model(xb, None).squeeze(-1), yb)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        model.eval()
        with torch.no_grad():
            pred = torch.cat([model(xb, None).squeeze(-1) for xb, _ in batches(x_va, y_va, 4096, False, device)])
            rmse = torch.sqrt(F.mse_loss(pred.float(), y_va)).item()
        with tempfile.TemporaryDirectory() as tmp:
            torch.save(model.state_dict(), os.path.join(tmp, "model.pt"))
            train.report({"rmse": rmse, "epoch": epoch}, checkpoint=Checkpoint.from_directory(tmp))


def ddp_train_loop(config):
    """Ray Train worker: DDP across the workers of the ScalingConfig."""
    data = config["data"]
    model = build_model(config, data["X_train"].shape[1])
    model = ray.train.torch.prepare_model(model)
    ds = torch.utils.data.TensorDataset(torch.as_tensor(data["X_train"], dtype=torch.float32),
                                        torch.as_tensor(data["y_train"], dtype=torch.float32))
    loader = torch.utils.data.DataLoader(ds, batch_size=config["batch_size"], shuffle=True, pin_memory=True)
    loader = ray.train.torch.prepare_data_loader(loader)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["weight_decay"])
    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            loader.sampler.set_epoch(epoch)
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(xb, None).squeeze(-1), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
        metrics = {"train_mse": total / len(ds), "epoch": epoch}
        if ray.train.get_context().get_world_rank() == 0:
            with tempfile.TemporaryDirectory() as tmp:
                torch.save(model.module.state_dict(), os.path.join(tmp, "model.pt"))
                train.report(metrics, checkpoint=Checkpoint.from_directory(tmp))
        else:
            train.report(metrics)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--refit-workers", type=int, default=4)
    ap.add_argument("--storage", default=os.path.expanduser("~/ray_results"))
    args = ap.parse_args()

    ray.init()
    data = load_npz(args.data)
    data_ref = ray.put(data)

    space = {
        "d_token": tune.choice([64, 128, 192, 256]),
        "n_blocks": tune.randint(1, 5),
        "attention_dropout": tune.uniform(0.0, 0.5),
        "ffn_factor": tune.uniform(2 / 3, 8 / 3),
        "ffn_dropout": tune.uniform(0.0, 0.5),
        "lr": tune.loguniform(1e-5, 1e-3),
        "weight_decay": tune.loguniform(1e-6, 1e-3),
        "batch_size": tune.choice([256, 512, 1024]),
        "epochs": args.epochs,
    }
    trainable = tune.with_parameters(tune_trainable, data=data)
    trainable = tune.with_resources(trainable, {"cpu": 4, "gpu": 1})
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(
            metric="rmse",
            mode="min",
            num_samples=args.samples,
            scheduler=ASHAScheduler(max_t=args.epochs, grace_period=10, reduction_factor=3),
            search_alg=OptunaSearch(),
        ),
        run_config=RunConfig(name="ft_transformer_asha", storage_path=args.storage),
    )
    results = tuner.fit()
    best = results.get_best_result(metric="rmse", mode="min")
    print("best config", best.config, "rmse", best.metrics["rmse"])

    with best.checkpoint.as_directory() as d:
        state = torch.load(os.path.join(d, "model.pt"), map_location="cuda")
    model = build_model(best.config, data["X_train"].shape[1])
    model.load_state_dict(state)
    print("restored best tune model with", sum(p.numel() for p in model.parameters()), "parameters")

    refit_cfg = dict(best.config, data=ray.get(data_ref), epochs=int(best.metrics["epoch"]) + 1)
    trainer = TorchTrainer(
        ddp_train_loop,
        train_loop_config=refit_cfg,
        scaling_config=ScalingConfig(num_workers=args.refit_workers, use_gpu=True),
        torch_config=TorchConfig(backend="nccl"),
        run_config=RunConfig(name="ft_transformer_refit", storage_path=args.storage),
    )
    result = trainer.fit()
    print("refit metrics", result.metrics)


if __name__ == "__main__":
    main()
