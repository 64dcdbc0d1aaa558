import torch
from torch import nn
from torch.nn import functional as F


class IDRLoss(nn.Module):
    def __init__(self, idr_rgb_weight, eikonal_weight, mask_weight, alpha,
                 sg_rgb_weight=0.0, kl_weight=0.0, latent_smooth_weight=0.0,
                 loss_type='L1'):
        super().__init__()
        self.idr_rgb_weight = idr_rgb_weight
        self.sg_rgb_weight = sg_rgb_weight
        self.eikonal_weight = eikonal_weight
        self.mask_weight = mask_weight
        self.kl_weight = kl_weight
        self.latent_smooth_weight = latent_smooth_weight
        self.alpha = alpha
        if loss_type == 'L1':
            print('Using L1 loss for comparing images!')
            self.img_loss = nn.L1Loss(reduction='sum')
        elif loss_type == 'L2':
            print('Using L2 loss for comparing images!')
            self.img_loss = nn.MSELoss(reduction='sum')
        else:
            raise Exception('Unknown loss_type!')

    def get_rgb_loss(self, rgb_values, rgb_gt, network_object_mask, object_mask):
        mask = network_object_mask & object_mask
        if mask.sum() == 0:
            return torch.tensor(0.0).cuda().float()

        rgb_values = rgb_values[mask].reshape((-1, 3))
        rgb_gt = rgb_gt.reshape(-1, 3)[mask].reshape((-1, 3))
        rgb_loss = self.img_loss(rgb_values, rgb_gt) / float(object_mask.shape[0])
        return rgb_loss

    def get_eikonal_loss(self, grad_theta):
        if grad_theta.shape[0] == 0:
            return torch.tensor(0.0, device=grad_theta.device)

        eikonal_loss = ((grad_theta.norm(2, dim=1) - 1) ** 2).mean()
        return eikonal_loss

    def get_mask_loss(self, sdf_output, network_object_mask, object_mask):
        mask = ~(network_object_mask & object_mask)
        if mask.sum() == 0:
            return torch.tensor(0.0).float().cuda()
        sdf_pred = -self.alpha * sdf_output[mask]
        gt = object_mask[mask].float()
        mask_loss = (1 / self.alpha) * F.binary_cross_entropy_with_logits(sdf_pred.squeeze(-1), gt, reduction='sum') / float(object_mask.shape[0])
        return mask_loss

    def get_latent_smooth_loss(self, model_outputs):
        d_diff = model_outputs['diffuse_albedo']
        d_rough = model_outputs['roughness'][..., 0]
        d_xi_diff = model_outputs['random_xi_diffuse_albedo']
        d_xi_rough = model_outputs['random_xi_roughness'][..., 0]
        loss = nn.L1Loss()(d_diff, d_xi_diff) + nn.L1Loss()(d_rough, d_xi_rough)
        return loss

    def kl_divergence(self, rho, rho_hat):
        rho_hat = torch.mean(torch.sigmoid(rho_hat), 0)
        rho = torch.tensor([rho] * len(rho_hat)).cuda()
        return torch.mean(rho * torch.log(rho / (rho_hat + 1e-5)) + (1 - rho) * torch.log((1 - rho) / (1 - rho_hat + 1e-5)))

    def get_kl_loss(self, model, points):
        loss = 0
        embedding = model.encoder(points)
        for i in range(len(embedding)):
            loss += self.kl_divergence(0.05, embedding[i])
        return loss

    def forward(self, model_outputs, ground_truth, mat_model=None, train_idr=False):
        rgb_gt = ground_truth['rgb'].cuda()
        network_object_mask = model_outputs['network_object_mask']
        object_mask = model_outputs['object_mask']

        if train_idr:
            idr_rgb_loss = self.get_rgb_loss(model_outputs['idr_rgb'], rgb_gt, network_object_mask, object_mask)
            mask_loss = self.get_mask_loss(model_outputs['sdf_output'], network_object_mask, object_mask)
            eikonal_loss = self.get_eikonal_loss(model_outputs['grad_theta'])
            loss = self.idr_rgb_weight * idr_rgb_loss + \
                   self.eikonal_weight * eikonal_loss + \
                   self.mask_weight * mask_loss
            return {
                'loss': loss,
                'idr_rgb_loss': idr_rgb_loss,
                'eikonal_loss': eikonal_loss,
                'mask_loss': mask_loss,
            }

        sg_rgb_loss = self.get_rgb_loss(model_outputs['sg_rgb'], rgb_gt, network_object_mask, object_mask)
        latent_smooth_loss = self.get_latent_smooth_loss(model_outputs)
        kl_loss = self.get_kl_loss(mat_model, model_outputs['points'][network_object_mask & object_mask])

        loss = self.sg_rgb_weight * sg_rgb_loss + \
               self.kl_weight * kl_loss + \
               self.latent_smooth_weight * latent_smooth_loss

        return {
            'loss': loss,
            'sg_rgb_loss': sg_rgb_loss,
            'kl_loss': kl_loss,
            'latent_smooth_loss': latent_smooth_loss,
        }
