import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast

from trainers.basic_trainer import BasicTrainer
from models.freeseed.freenet import FreeNet, SeedNet


class FreeSeedTrainer(BasicTrainer):
    """Image-domain FreeSeed: FreeNet removes streaks, SeedNet (optional) refines them.

    Training pairs are built on the fly: the full-dose image is forward projected
    with ``num_full_views``, the sinogram is sub-sampled to ``num_views`` and
    reconstructed with FBP; the network maps the sparse-view FBP back to the
    full-view reference.
    """

    def __init__(self, opt):
        super(FreeSeedTrainer, self).__init__(opt)
        self.l1 = nn.L1Loss()
        self.l2 = nn.MSELoss()

    def build_network(self):
        freenet = FreeNet(in_channels=1, out_channels=1, dims=self.opt.net_dims,
                          ratio_ginout=self.opt.ratio_ginout, mask_type=self.opt.mask_type,
                          mask_init_band=self.opt.mask_init_band)
        if self.opt.use_sgm:
            return SeedNet(freenet, dims=self.opt.net_dims)
        return freenet

    # --------------------------------------------------------------- data
    @torch.no_grad()
    def simulate(self, full_mu):
        """full-view image (B,1,H,W, attenuation) -> sparse-view FBP image."""
        sparse_sino = self.ct_tools.image_radon(full_mu, sparse=True)
        sparse_mu = self.ct_tools.image_fbp(sparse_sino, sparse=True)
        return sparse_mu, sparse_sino

    def frequency_loss(self, pred, target):
        # amplitude + phase difference in the 2-D spectrum (fp32 regardless of amp)
        pred_f = torch.fft.rfft2(pred.float(), norm='ortho')
        target_f = torch.fft.rfft2(target.float(), norm='ortho')
        return (pred_f - target_f).abs().mean()

    # --------------------------------------------------------------- steps
    def train_step(self, batch):
        full_mu, _ = batch
        sparse_mu, _ = self.simulate(full_mu)
        with autocast(enabled=self.opt.amp):
            if self.opt.use_sgm:
                out, out_refined, mask = self.net(sparse_mu)
                loss_img = self.l2(out, full_mu) + self.opt.sgm_weight * self.l2(out_refined, full_mu)
            else:
                out, mask = self.net(sparse_mu)
                loss_img = self.l2(out, full_mu)
        loss_freq = self.frequency_loss(out, full_mu)
        loss = loss_img + self.opt.freq_loss_weight * loss_freq
        self.backward_and_step(loss)
        return {'loss': loss, 'loss_img': loss_img.detach(), 'loss_freq': loss_freq.detach()}

    @torch.no_grad()
    def val_step(self, batch):
        full_mu, _ = batch
        sparse_mu, _ = self.simulate(full_mu)
        with autocast(enabled=self.opt.amp):
            outputs = self.net(sparse_mu)
        pred = outputs[1] if self.opt.use_sgm else outputs[0]
        return pred.float(), full_mu

    @torch.no_grad()
    def visualize(self, batch, save_path):
        """Dump (sparse FBP, prediction, reference) as a PNG strip for the report."""
        import torchvision.utils as vutils
        full_mu, _ = batch
        sparse_mu, _ = self.simulate(full_mu)
        pred, _ = self.val_step(batch)
        window = lambda x: (self.ct_tools.mu2hu(x).clamp(-160, 240) + 160) / 400.0
        grid = torch.cat([window(sparse_mu), window(pred), window(full_mu)], dim=3)
        vutils.save_image(grid.cpu(), save_path, nrow=1)


    @torch.no_grad()
    def save_test_results(self, loader, out_dir):
        """Write sparse-view FBP, prediction and reference (HU, float32) for every test slice."""
        import os
        import numpy as np
        os.makedirs(out_dir, exist_ok=True)
        self.net.eval()
        for batch in loader:
            names = batch[2]
            full_mu = batch[0].to(self.device)
            sparse_mu, _ = self.simulate(full_mu)
            pred, _ = self.val_step([full_mu, None])
            for i, name in enumerate(names):
                np.savez_compressed(
                    os.path.join(out_dir, name.replace('.npy', '.npz')),
                    sparse=self.ct_tools.mu2hu(sparse_mu[i, 0]).cpu().numpy(),
                    pred=self.ct_tools.mu2hu(pred[i, 0]).cpu().numpy(),
                    target=self.ct_tools.mu2hu(full_mu[i, 0]).cpu().numpy())


class SinoNet(nn.Module):
    """Sinogram-domain restoration: residual CNN on the linearly up-sampled sinogram."""
    def __init__(self, dims=64, num_layers=8):
        super(SinoNet, self).__init__()
        layers = [nn.Conv2d(1, dims, 3, padding=1), nn.ReLU(inplace=True)]
        for _ in range(num_layers - 2):
            layers += [nn.Conv2d(dims, dims, 3, padding=1), nn.BatchNorm2d(dims), nn.ReLU(inplace=True)]
        layers += [nn.Conv2d(dims, 1, 3, padding=1)]
        self.body = nn.Sequential(*layers)

    def forward(self, sino):
        return sino + self.body(sino)


class DuDoWrapper(nn.Module):
    def __init__(self, sino_net, img_net):
        super(DuDoWrapper, self).__init__()
        self.sino_net = sino_net
        self.img_net = img_net


class DuDoFreeSeedTrainer(FreeSeedTrainer):
    """Dual-domain FreeSeed: SinoNet restores the full-view sinogram, the FBP of the
    restored sinogram is fed together with the sparse-view FBP to FreeNet/SeedNet."""

    def build_network(self):
        img_net = FreeNet(in_channels=2, out_channels=1, dims=self.opt.net_dims,
                          ratio_ginout=self.opt.ratio_ginout, mask_type=self.opt.mask_type,
                          mask_init_band=self.opt.mask_init_band)
        if self.opt.use_sgm:
            img_net = SeedNet(img_net, dims=self.opt.net_dims)
        return DuDoWrapper(SinoNet(dims=self.opt.net_dims), img_net)

    def dual_forward(self, sparse_sino, sparse_mu):
        net = self.net_without_ddp if not self.net.training else self.net.module if self.opt.dist else self.net
        up_sino = self.ct_tools.upsample_sinogram(sparse_sino)
        restored_sino = net.sino_net(up_sino)
        # FBP through torch-radon keeps the graph: gradients flow back into SinoNet
        restored_mu = self.ct_tools.image_fbp(restored_sino, sparse=False)
        img_in = torch.cat([sparse_mu, restored_mu], dim=1)
        outputs = net.img_net(img_in)
        return restored_sino, restored_mu, outputs

    def train_step(self, batch):
        full_mu, _ = batch
        with torch.no_grad():
            full_sino = self.ct_tools.image_radon(full_mu, sparse=False)
            sparse_sino = self.ct_tools.sparsify(full_sino)
            sparse_mu = self.ct_tools.image_fbp(sparse_sino, sparse=True)
        with autocast(enabled=self.opt.amp):
            restored_sino, restored_mu, outputs = self.dual_forward(sparse_sino, sparse_mu)
            loss_sino = self.l1(restored_sino, full_sino)
            loss_rec = self.l1(restored_mu, full_mu)
            if self.opt.use_sgm:
                out, out_refined, _ = outputs
                loss_img = self.l2(out, full_mu) + self.opt.sgm_weight * self.l2(out_refined, full_mu)
            else:
                out, _ = outputs
                loss_img = self.l2(out, full_mu)
        loss_freq = self.frequency_loss(out, full_mu)
        loss = loss_img + 0.1 * loss_sino + 0.1 * loss_rec + self.opt.freq_loss_weight * loss_freq
        self.backward_and_step(loss)
        return {'loss': loss, 'loss_img': loss_img.detach(), 'loss_sino': loss_sino.detach(),
                'loss_rec': loss_rec.detach(), 'loss_freq': loss_freq.detach()}

    @torch.no_grad()
    def val_step(self, batch):
        full_mu, _ = batch
        full_sino = self.ct_tools.image_radon(full_mu, sparse=False)
        sparse_sino = self.ct_tools.sparsify(full_sino)
        sparse_mu = self.ct_tools.image_fbp(sparse_sino, sparse=True)
        with autocast(enabled=self.opt.amp):
            _, _, outputs = self.dual_forward(sparse_sino, sparse_mu)
        pred = outputs[1] if self.opt.use_sgm else outputs[0]
        return pred.float(), full_mu
