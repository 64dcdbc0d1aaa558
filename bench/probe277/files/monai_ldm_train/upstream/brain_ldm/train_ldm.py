"""Stage-2 training of a 3D latent diffusion model for brain MRI synthesis
(UK Biobank T1, 160x224x160 cropped to 96^3 at 2mm for the latent model),
following the MONAI Generative Models tutorial.

Stage 1 (the AutoencoderKL) is trained with ``train_aekl.py`` and loaded here.

    torchrun --nproc_per_node=4 train_ldm.py --data_dir /data/ukb_t1 \
        --aekl_ckpt runs/aekl/best.pt --out_dir runs/ldm --epochs 200
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from monai import transforms
from monai.data import CacheDataset, DataLoader, partition_dataset
from monai.utils import first, set_determinism
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm

from generative.inferers import LatentDiffusionInferer
from generative.networks.nets import AutoencoderKL, DiffusionModelUNet
from generative.networks.schedulers import DDPMScheduler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", required=True)
    p.add_argument("--aekl_ckpt", required=True)
    p.add_argument("--out_dir", default="runs/ldm")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch_size", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--val_interval", type=int, default=20)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--cache_rate", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--no_flash", action="store_true", help="disable xformers attention in the UNet")
    return p.parse_args()


def setup_distributed():
    if "LOCAL_RANK" not in os.environ:
        return 0, 1, 0
    dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


def reduce_mean(value, device):
    """average a python float over ranks (NCCL needs the tensor on the GPU)"""
    if not dist.is_initialized():
        return value
    t = torch.tensor([value], device=device if dist.get_backend() == "nccl" else "cpu")
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def get_loaders(args, rank, world_size):
    files = sorted(os.listdir(args.data_dir))
    data = [{"image": os.path.join(args.data_dir, f)} for f in files if f.endswith(".nii.gz")]
    n_val = max(8, len(data) // 20)
    train_files, val_files = data[n_val:], data[:n_val]
    if world_size > 1:
        train_files = partition_dataset(train_files, num_partitions=world_size, shuffle=True,
                                        even_divisible=True, seed=args.seed)[rank]

    tfm = transforms.Compose([
        transforms.LoadImaged(keys=["image"]),
        transforms.EnsureChannelFirstd(keys=["image"]),
        transforms.Lambdad(keys="image", func=lambda x: x[0:1, ...]),
        transforms.Orientationd(keys=["image"], axcodes="RAS"),
        transforms.Spacingd(keys=["image"], pixdim=(2.0, 2.0, 2.0), mode="bilinear"),
        transforms.CenterSpatialCropd(keys=["image"], roi_size=(96, 96, 96)),
        transforms.SpatialPadd(keys=["image"], spatial_size=(96, 96, 96)),
        transforms.ScaleIntensityRangePercentilesd(keys="image", lower=0, upper=99.5, b_min=0, b_max=1),
    ])
    train_ds = CacheDataset(data=train_files, transform=tfm, cache_rate=args.cache_rate,
                            num_workers=args.num_workers)
    val_ds = CacheDataset(data=val_files, transform=tfm, cache_rate=args.cache_rate,
                          num_workers=args.num_workers)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.num_workers, pin_memory=True, persistent_workers=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.num_workers, pin_memory=True)
    return train_loader, val_loader


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    set_determinism(args.seed + rank)
    device = torch.device("cuda", local_rank)
    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out_dir, exist_ok=True)

    train_loader, val_loader = get_loaders(args, rank, world_size)

    autoencoder = AutoencoderKL(spatial_dims=3, in_channels=1, out_channels=1,
                                num_channels=(32, 64, 64), latent_channels=3, num_res_blocks=1,
                                norm_num_groups=16, attention_levels=(False, False, True))
    ae_state = torch.load(args.aekl_ckpt, map_location="cpu")
    autoencoder.load_state_dict(ae_state["autoencoder"] if "autoencoder" in ae_state else ae_state)
    autoencoder.to(device).eval()

    unet = DiffusionModelUNet(
        spatial_dims=3,
        in_channels=3,
        out_channels=3,
        num_res_blocks=1,
        num_channels=(32, 64, 64),
        attention_levels=(False, True, True),
        num_head_channels=(0, 64, 64),
        use_flash_attention=not args.no_flash,
    ).to(device)
    if world_size > 1:
        unet = DDP(unet, device_ids=[local_rank], output_device=local_rank)

    scheduler = DDPMScheduler(num_train_timesteps=1000, schedule="scaled_linear_beta",
                              beta_start=0.0015, beta_end=0.0195)

    # scale factor so that the latent has ~unit variance (Rombach et al. 2022, Sec. 4.3.2)
    check_data = first(train_loader)
    with torch.no_grad():
        with autocast(enabled=True):
            z = autoencoder.encode_stage_2_inputs(check_data["image"].to(device))
    scale_factor = 1 / torch.std(z)
    if rank == 0:
        print(f"latent shape {tuple(z.shape)}, scaling factor {scale_factor.item():.4f}")

    inferer = LatentDiffusionInferer(scheduler, scale_factor=scale_factor)
    optimizer = torch.optim.Adam(params=unet.parameters(), lr=args.lr)
    scaler = GradScaler()

    best_val = float("inf")
    for epoch in range(args.epochs):
        unet.train()
        epoch_loss, t0 = 0.0, time.time()
        bar = tqdm(enumerate(train_loader), total=len(train_loader), ncols=90, disable=rank != 0)
        bar.set_description(f"Epoch {epoch}")
        for step, batch in bar:
            images = batch["image"].to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with autocast(enabled=True):
                noise = torch.randn_like(z).to(device)
                timesteps = torch.randint(0, inferer.scheduler.num_train_timesteps,
                                          (images.shape[0],), device=images.device).long()
                noise_pred = inferer(inputs=images, autoencoder_model=autoencoder,
                                     diffusion_model=unet, noise=noise, timesteps=timesteps)
                loss = F.mse_loss(noise_pred.float(), noise.float())
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
            bar.set_postfix({"loss": epoch_loss / (step + 1)})

        epoch_loss = reduce_mean(epoch_loss / len(train_loader), device)
        if rank == 0:
            print(f"epoch {epoch}: train loss {epoch_loss:.5f} ({time.time() - t0:.0f}s, "
                  f"{torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB)")

        if (epoch + 1) % args.val_interval == 0:
            unet.eval()
            val_loss = 0.0
            with torch.no_grad():
                for batch in val_loader:
                    images = batch["image"].to(device)
                    with autocast(enabled=True):
                        noise = torch.randn_like(z).to(device)
                        timesteps = torch.randint(0, inferer.scheduler.num_train_timesteps,
                                                  (images.shape[0],), device=images.device).long()
                        noise_pred = inferer(inputs=images, autoencoder_model=autoencoder,
                                             diffusion_model=unet, noise=noise, timesteps=timesteps)
                        val_loss += F.mse_loss(noise_pred.float(), noise.float()).item()
            val_loss = reduce_mean(val_loss / len(val_loader), device)
            if rank == 0:
                print(f"  val loss {val_loss:.5f}")
                raw = unet.module if isinstance(unet, DDP) else unet
                torch.save({"unet": raw.state_dict(), "scale_factor": scale_factor.item(), "epoch": epoch},
                           os.path.join(args.out_dir, "last.pt"))
                if val_loss < best_val:
                    best_val = val_loss
                    torch.save({"unet": raw.state_dict(), "scale_factor": scale_factor.item(), "epoch": epoch},
                               os.path.join(args.out_dir, "best.pt"))
                # one sample for eyeballing
                noise = torch.randn((1, 3, 24, 24, 24), device=device)
                scheduler.set_timesteps(num_inference_steps=1000)
                with autocast(enabled=True):
                    synthetic = inferer.sample(input_noise=noise, autoencoder_model=autoencoder,
                                               diffusion_model=raw, scheduler=scheduler, verbose=False)
                torch.save(synthetic.float().cpu(), os.path.join(args.out_dir, f"sample_ep{epoch}.pt"))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
