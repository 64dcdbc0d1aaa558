import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import wandb
from tqdm import tqdm
from diffusers import DDPMScheduler, PNDMScheduler
from network import *


class SurfVAETrainer():
    """ Surface VAE Trainer """
    def __init__(self, args, train_dataset, val_dataset):
        self.args = args
        self.save_dir = args.save_dir
        self.use_wandb = True
        self.epoch = 0
        self.iters = 0

        # Initialize model
        model = AutoencoderKLFastDecode(in_channels=3,
                                        out_channels=3,
                                        down_block_types=['DownEncoderBlock2D', 'DownEncoderBlock2D',
                                                          'DownEncoderBlock2D', 'DownEncoderBlock2D'],
                                        up_block_types=['UpDecoderBlock2D', 'UpDecoderBlock2D',
                                                        'UpDecoderBlock2D', 'UpDecoderBlock2D'],
                                        block_out_channels=[128, 256, 512, 512],
                                        layers_per_block=2,
                                        act_fn='silu',
                                        latent_channels=3,
                                        norm_num_groups=32,
                                        sample_size=512,
                                        )

        # Load pretrained surface vae (fast encode version)
        if args.finetune:
            model.load_state_dict(torch.load(args.weight))

        model = nn.DataParallel(model)  # distributed training
        self.model = model.to('cuda').train()

        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-4, weight_decay=1e-5)
        self.scaler = torch.cuda.amp.GradScaler()

        # Initialize wandb
        run_id = wandb.util.generate_id()
        wandb.init(project='BrepGen', dir=self.save_dir, name=args.env, id=run_id)

        # Initializa dataloaders
        self.train_dataloader = torch.utils.data.DataLoader(train_dataset,
                                                            shuffle=True,
                                                            batch_size=args.batch_size,
                                                            num_workers=8)
        self.val_dataloader = torch.utils.data.DataLoader(val_dataset,
                                                          shuffle=False,
                                                          batch_size=args.batch_size,
                                                          num_workers=8)
        return

    def train_one_epoch(self):
        """
        Train the model for one epoch
        """
        self.model.train()

        progress_bar = tqdm(total=len(self.train_dataloader))
        progress_bar.set_description(f"Epoch {self.epoch}")

        # Train
        for surf_uv in self.train_dataloader:
            with torch.cuda.amp.autocast():
                surf_uv = surf_uv.to('cuda').permute(0, 3, 1, 2)
                self.optimizer.zero_grad()  # zero gradient

                # Pass through VAE
                posterior = self.model.encode(surf_uv).latent_dist
                z = posterior.sample()
                dec = self.model.decode(z).sample

                # Loss functions
                kl_loss = posterior.kl().mean()
                mse_loss = F.mse_loss(dec, surf_uv)
                total_loss = mse_loss + 1e-6 * kl_loss

            # Update model
            self.scaler.scale(total_loss).backward()

            nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=5.0)  # clip gradient
            self.scaler.step(self.optimizer)
            self.scaler.update()

            # logging
            if self.iters % 20 == 0:
                wandb.log({"Loss-mse": mse_loss, "Loss-kl": kl_loss}, step=self.iters)

            self.iters += 1
            progress_bar.update(1)

        progress_bar.close()
        self.epoch += 1
        return

    def test_val(self):
        """
        Test the model on validation set
        """
        self.model.eval()  # set to eval
        total_loss = 0
        mse_loss = nn.MSELoss(reduction='none')

        progress_bar = tqdm(total=len(self.val_dataloader))
        progress_bar.set_description("Testing")

        val_losses = []
        for surf_uv in self.val_dataloader:
            surf_uv = surf_uv.to('cuda').permute(0, 3, 1, 2)  # (N, H, W, 3) -> (N, 3, H, W)

            posterior = self.model.encode(surf_uv).latent_dist
            z = posterior.sample()
            dec = self.model.decode(z).sample
            loss = mse_loss(dec, surf_uv).mean((1, 2, 3)).sum().item()
            total_loss += loss
            progress_bar.update(1)
        progress_bar.close()

        mse = total_loss / len(self.val_dataloader.dataset)
        self.model.train()  # set to train
        wandb.log({"Val": mse}, step=self.iters)
        return

    def save_model(self):
        torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'epoch_' + str(self.epoch) + '.pt'))
        return


class SurfPosTrainer():
    """ Surface Position Trainer (3D bbox) """
    def __init__(self, args, train_dataset, val_dataset):
        self.args = args
        self.save_dir = args.save_dir
        self.use_cf = args.cf
        self.epoch = 0
        self.iters = 0
        self.device = torch.device('cuda:0')

        # Initialize network
        model = SurfPosNet(self.use_cf)
        model = nn.DataParallel(model)  # multi-gpu
        self.model = model.to(self.device).train()

        self.loss_fn = nn.MSELoss()

        # Initialize diffusion scheduler
        self.noise_scheduler = DDPMScheduler(
            num_train_timesteps=1000,
            beta_schedule='linear',
            prediction_type='epsilon',
            beta_start=0.0001,
            beta_end=0.02,
            clip_sample=False,
        )

        # Initialize optimizer
        self.network_params = list(self.model.parameters())

        self.optimizer = torch.optim.AdamW(
            self.network_params,
            lr=5e-4,
            betas=(0.95, 0.999),
            weight_decay=1e-6,
            eps=1e-08,
        )

        self.scaler = torch.cuda.amp.GradScaler(init_scale=2. ** 14)

        # Initialize wandb
        run_id = wandb.util.generate_id()
        wandb.init(project='BrepGen', dir=self.save_dir, name=args.env, id=run_id)

        # Initialize dataloader
        self.train_dataloader = torch.utils.data.DataLoader(train_dataset,
                                                            shuffle=True,
                                                            batch_size=args.batch_size,
                                                            num_workers=16)
        self.val_dataloader = torch.utils.data.DataLoader(val_dataset,
                                                          shuffle=False,
                                                          batch_size=args.batch_size,
                                                          num_workers=16)
        return

    def train_one_epoch(self):
        """
        Train the model for one epoch
        """
        self.model.train()

        progress_bar = tqdm(total=len(self.train_dataloader))
        progress_bar.set_description(f"Epoch {self.epoch}")

        # Train
        for data in self.train_dataloader:
            with torch.autocast(device_type='cuda', dtype=torch.float16):
                data_cuda = [dat.to(self.device) for dat in data]  # map to gpu
                if self.use_cf:
                    surfPos, class_label = data_cuda
                else:
                    surfPos = data_cuda[0]
                    class_label = None

                bsz = len(surfPos)

                self.optimizer.zero_grad()  # zero gradient

                # Add noise
                timesteps = torch.randint(0, self.noise_scheduler.config.num_train_timesteps, (bsz,), device=self.device).long()
                surfPos_noise = torch.randn(surfPos.shape).to(self.device)
                surfPos_diffused = self.noise_scheduler.add_noise(surfPos, surfPos_noise, timesteps)

                # Predict noise
                surfPos_pred = self.model(surfPos_diffused, timesteps, class_label, True)

                # Compute loss
                total_loss = self.loss_fn(surfPos_pred, surfPos_noise)

            # Update model
            self.scaler.scale(total_loss).backward()

            nn.utils.clip_grad_norm_(self.network_params, max_norm=50.0)  # clip gradient
            self.scaler.step(self.optimizer)
            self.scaler.update()

            # logging
            if self.iters % 10 == 0:
                wandb.log({"Loss-noise": total_loss}, step=self.iters)

            self.iters += 1
            progress_bar.update(1)

        progress_bar.close()
        self.epoch += 1
        return

    def test_val(self):
        """
        Test the model on validation set
        """
        self.model.eval()  # set to eval
        progress_bar = tqdm(total=len(self.val_dataloader))
        progress_bar.set_description("Testing")

        val_timesteps = [10, 50, 100, 200, 500, 1000]
        total_loss = [0, 0, 0, 0, 0, 0]

        for data in self.val_dataloader:
            data_cuda = [dat.to(self.device) for dat in data]
            if self.use_cf:
                surfPos, class_label = data_cuda
            else:
                surfPos = data_cuda[0]
                class_label = None

            bsz = len(surfPos)

            total_loss = [0, 0, 0, 0, 0, 0]
            for idx, step in enumerate(val_timesteps):
                # Evaluate at timestep
                timesteps = torch.randint(step - 1, step, (bsz,), device=self.device).long()  # [batch,]
                noise = torch.randn(surfPos.shape).to(self.device)
                surfPos_diffused = self.noise_scheduler.add_noise(surfPos, noise, timesteps)
                with torch.no_grad():
                    pred = self.model(surfPos_diffused, timesteps, class_label)
                loss = F.mse_loss(pred, noise, reduction='none').mean(2).mean(1).sum()
                total_loss[idx] += loss.item()

            progress_bar.update(1)
        progress_bar.close()

        mse = [loss / len(self.val_dataloader.dataset) for loss in total_loss]
        self.model.train()  # set to train
        wandb.log(dict([(f"val-{step:04d}", mse[i]) for i, step in enumerate(val_timesteps)]), step=self.iters)
        return

    def save_model(self):
        torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'surfpos_epoch_' + str(self.epoch) + '.pt'))
        return


class SurfZTrainer():
    """ Surface Latent Geometry Trainer """
    def __init__(self, args, train_dataset, val_dataset):
        self.args = args
        self.save_dir = args.save_dir
        self.use_cf = args.cf
        self.z_scaled = args.z_scaled
        self.use_amp = True
        self.epoch = 0
        self.iters = 0
        self.device = 'cuda'

        # Initialize network
        model = SurfZNet(self.use_cf)
        model = nn.DataParallel(model)  # data parallel over all visible GPUs
        self.model = model.to(self.device).train()

        # Load pretrained surface vae (fast encode version)
        surf_vae = AutoencoderKLFastEncode(in_channels=3,
                                           out_channels=3,
                                           down_block_types=['DownEncoderBlock2D', 'DownEncoderBlock2D',
                                                             'DownEncoderBlock2D', 'DownEncoderBlock2D'],
                                           up_block_types=['UpDecoderBlock2D', 'UpDecoderBlock2D',
                                                           'UpDecoderBlock2D', 'UpDecoderBlock2D'],
                                           block_out_channels=[128, 256, 512, 512],
                                           layers_per_block=2,
                                           act_fn='silu',
                                           latent_channels=3,
                                           norm_num_groups=32,
                                           sample_size=512,
                                           )
        surf_vae.load_state_dict(torch.load(args.surfvae), strict=False)
        surf_vae = nn.DataParallel(surf_vae)  # distributed inference
        self.surf_vae = surf_vae.to(self.device).eval()

        self.loss_fn = nn.MSELoss()

        # Initialize diffusion scheduler
        self.noise_scheduler = DDPMScheduler(
            num_train_timesteps=1000,
            beta_schedule='linear',
            prediction_type='epsilon',
            beta_start=0.0001,
            beta_end=0.02,
            clip_sample=False,
        )

        # Initialize optimizer
        self.network_params = list(self.model.parameters())

        self.optimizer = torch.optim.AdamW(
            self.network_params,
            lr=5e-4,
            betas=(0.95, 0.999),
            weight_decay=1e-6,
            eps=1e-08,
        )

        self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        # Initialize wandb
        run_id = wandb.util.generate_id()
        wandb.init(project='BrepGen', dir=self.save_dir, name=args.env, id=run_id)

        # Initialize dataloader
        self.train_dataloader = torch.utils.data.DataLoader(train_dataset,
                                                            shuffle=True,
                                                            batch_size=args.batch_size,
                                                            num_workers=16)
        self.val_dataloader = torch.utils.data.DataLoader(val_dataset,
                                                          shuffle=False,
                                                          batch_size=args.batch_size,
                                                          num_workers=16)
        return

    def train_one_epoch(self):
        """
        Train the model for one epoch
        """
        self.model.train()

        progress_bar = tqdm(total=len(self.train_dataloader))
        progress_bar.set_description(f"Epoch {self.epoch}")

        # Train
        for data in self.train_dataloader:
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                data_cuda = [dat.to(self.device) for dat in data]  # map to gpu
                if self.use_cf:
                    surfPos, surfPnt, surf_mask, class_label = data_cuda
                else:
                    surfPos, surfPnt, surf_mask = data_cuda
                    class_label = None

                bsz = len(surfPos)

                # Pass through surface VAE to sample latent z
                with torch.no_grad():
                    surf_uv = surfPnt.flatten(0, 1).flatten(1, 2).permute(0, 2, 1).unflatten(-1, (4, 4))
                    surf_latent = self.surf_vae(surf_uv).flatten(-2, -1).permute(0, 2, 1)
                    surf_latent = surf_latent.unflatten(0, (bsz, -1)).flatten(-2, -1)
                surfZ = surf_latent * self.z_scaled

                self.optimizer.zero_grad()  # zero gradient

                # Add noise
                timesteps = torch.randint(0, self.noise_scheduler.config.num_train_timesteps, (bsz,), device=self.device).long()
                surfPos_noise = torch.randn(surfPos.shape).to(self.device)
                surfPos_diffused = self.noise_scheduler.add_noise(surfPos, surfPos_noise, timesteps)
                surfZ_noise = torch.randn(surfZ.shape).to(self.device)
                surfZ_diffused = self.noise_scheduler.add_noise(surfZ, surfZ_noise, timesteps)

                # Predict noise
                surfZ_pred = self.model(surfZ_diffused, timesteps, surfPos_diffused, surf_mask, class_label, True)

                # Loss
                total_loss = self.loss_fn(surfZ_pred[~surf_mask], surfZ_noise[~surf_mask])

            # Update model
            self.grad_scaler.scale(total_loss).backward()

            nn.utils.clip_grad_norm_(self.network_params, max_norm=50.0)  # clip gradient
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()

            # logging
            if self.iters % 10 == 0:
                wandb.log({"Loss-noise": total_loss}, step=self.iters)

            self.iters += 1
            progress_bar.update(1)

        progress_bar.close()
        self.epoch += 1
        return

    def test_val(self):
        """
        Test the model on validation set
        """
        self.model.eval()  # set to eval
        progress_bar = tqdm(total=len(self.val_dataloader))
        progress_bar.set_description("Testing")

        val_timesteps = [10, 50, 100, 200, 500, 1000]
        total_loss = [0, 0, 0, 0, 0, 0]

        for data in self.val_dataloader:
            data_cuda = [dat.to(self.device) for dat in data]
            if self.use_cf:
                surfPos, surfPnt, surf_mask, class_label = data_cuda
            else:
                surfPos, surfPnt, surf_mask = data_cuda
                class_label = None
            bsz = len(surfPos)

            with torch.no_grad():
                surf_uv = surfPnt.flatten(0, 1).flatten(1, 2).permute(0, 2, 1).unflatten(-1, (4, 4))
                surf_latent = self.surf_vae(surf_uv).flatten(-2, -1).permute(0, 2, 1)
                surf_latent = surf_latent.unflatten(0, (bsz, -1)).flatten(-2, -1)
            surfZ = surf_latent * self.z_scaled

            tokens = surfZ[~surf_mask]
            for idx, step in enumerate(val_timesteps):
                # Evaluate at timestep
                timesteps = torch.randint(step - 1, step, (bsz,), device=self.device).long()  # [batch,]
                noise = torch.randn(surfZ.shape).to(self.device)
                surfZ_diffused = self.noise_scheduler.add_noise(surfZ, noise, timesteps)
                with torch.no_grad():
                    pred = self.model(surfZ_diffused, timesteps, surfPos, surf_mask, class_label)
                loss = F.mse_loss(pred[~surf_mask], noise[~surf_mask], reduction='none').mean(1).sum()
                total_loss[idx] += loss.item()

            progress_bar.update(1)
        progress_bar.close()

        mse = [loss / len(self.val_dataloader.dataset) for loss in total_loss]
        self.model.train()  # set to train
        wandb.log(dict([(f"val-{step:04d}", mse[i]) for i, step in enumerate(val_timesteps)]), step=self.iters)
        torch.cuda.empty_cache()
        return

    def save_model(self):
        torch.save(self.model.module.state_dict(), os.path.join(self.save_dir, 'surfz_epoch_' + str(self.epoch) + '.pt'))
        return
