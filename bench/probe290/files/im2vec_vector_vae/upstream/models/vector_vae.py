import math
import random

import numpy as np
import pydiffvg
import torch
from torch import nn
from torch.nn import functional as F
from torchvision import transforms

from models import BaseVAE
from .types_ import *

pydiffvg.set_print_timing(False)
pydiffvg.set_use_gpu(torch.cuda.is_available())
render = pydiffvg.RenderFunction.apply


def make_tensor(x, grad=False):
    x = torch.tensor(x, dtype=torch.float32)
    x.requires_grad = grad
    # diffvg reads colours from the device it was compiled for
    return x.cuda() if torch.cuda.is_available() else x


def sample_circle(r: int, angles: Tensor, sample_rate: int = 10):
    pos = []
    for i in range(1, sample_rate + 1):
        x = (torch.cos(angles * (sample_rate / i)) * r)  # + r
        y = (torch.sin(angles * (sample_rate / i)) * r)  # + r
        pos.append(x)
        pos.append(y)
    return torch.stack(pos, dim=-1)


def decode_transform(x):
    return x.permute(0, 2, 1)


class VectorVAE(BaseVAE):

    def __init__(self,
                 in_channels: int,
                 latent_dim: int,
                 hidden_dims: List = None,
                 loss_fn: str = 'MSE',
                 imsize: int = 128,
                 paths: int = 4,
                 **kwargs) -> None:
        super(VectorVAE, self).__init__()

        self.latent_dim = latent_dim
        self.imsize = imsize
        self.beta = kwargs['beta']
        self.other_losses_weight = 0
        if 'other_losses_weight' in kwargs.keys():
            self.other_losses_weight = kwargs['other_losses_weight']

        self.reparameterize_ = False
        if loss_fn == 'BCE':
            self.loss_fn = F.binary_cross_entropy_with_logits
        else:
            self.loss_fn = F.mse_loss

        modules = []
        if hidden_dims is None:
            hidden_dims = [32, 64, 128, 256, 512]

        # Build Encoder
        for h_dim in hidden_dims:
            modules.append(
                nn.Sequential(
                    nn.Conv2d(in_channels, out_channels=h_dim,
                              kernel_size=3, stride=2, padding=1),
                    nn.BatchNorm2d(h_dim),
                    nn.ReLU())
            )
            in_channels = h_dim
        outsize = int(imsize / (2 ** 5))
        self.fc_mu = nn.Linear(hidden_dims[-1] * outsize * outsize, latent_dim)
        self.fc_var = nn.Linear(hidden_dims[-1] * outsize * outsize, latent_dim)
        self.encoder = nn.Sequential(*modules)

        self.curves = paths
        self.circle_rad = kwargs['radius']
        self.number_of_points = self.curves * 3
        sample_rate = 2
        angles = torch.arange(0, self.number_of_points, dtype=torch.float32) * 6.28319 / self.number_of_points
        id_eye = torch.eye(self.number_of_points)[None, :, :]
        self.register_buffer('angles', angles)
        self.register_buffer('id_eye', id_eye)
        self.sample_rate = sample_rate

        def get_computational_unit(in_channels, out_channels, unit):
            if unit == 'conv':
                return nn.Conv1d(in_channels, out_channels, padding_mode='circular', kernel_size=3, padding=1, stride=1)
            else:
                return nn.Linear(in_channels, out_channels)

        num_one_hot = 0
        fused_latent_dim = latent_dim + num_one_hot + (sample_rate * 2)
        self.decoder_input = get_computational_unit(fused_latent_dim, fused_latent_dim * 2, 'mlp')

        self.point_predictor = nn.ModuleList([
            get_computational_unit(fused_latent_dim * 2, fused_latent_dim * 2, 'conv'),
            nn.ReLU(),
            get_computational_unit(fused_latent_dim * 2, fused_latent_dim * 2, 'conv'),
            nn.ReLU(),
            get_computational_unit(fused_latent_dim * 2, fused_latent_dim * 2, 'conv'),
            nn.ReLU(),
            get_computational_unit(fused_latent_dim * 2, fused_latent_dim * 2, 'conv'),
            nn.ReLU(),
            get_computational_unit(fused_latent_dim * 2, 2, 'conv'),
            # nn.Sigmoid()  # bound spatial extent
        ])
        self.colors = [[0, 0, 0, 1], [255 / 255, 0 / 255, 0 / 255, 1], [0 / 255, 255 / 255, 0 / 255, 1],
                       [0 / 255, 0 / 255, 255 / 255, 1]]

    def encode(self, input: Tensor) -> List[Tensor]:
        """
        Encodes the input by passing through the encoder network
        and returns the latent codes.
        :param input: (Tensor) Input tensor to encoder [N x C x H x W]
        :return: (Tensor) List of latent codes
        """
        result = self.encoder(input)
        result = torch.flatten(result, start_dim=1)

        # Split the result into mu and var components
        # of the latent Gaussian distribution
        mu = self.fc_mu(result)
        log_var = self.fc_var(result)

        return [mu, log_var]

    def raster(self, all_points, color=[0, 0, 0, 1], verbose=False, white_background=True):
        assert len(color) == 4
        render_size = self.imsize
        bs = all_points.shape[0]
        if verbose:
            render_size = render_size * 2
        outputs = []
        all_points = all_points * render_size
        num_ctrl_pts = torch.zeros(self.curves, dtype=torch.int32).to(all_points.device) + 2
        color = make_tensor(color)
        for k in range(bs):
            # Get point parameters from network
            shapes = []
            shape_groups = []
            points = all_points[k].contiguous()  # [self.sort_idx[k]]

            if verbose:
                np.random.seed(0)
                colors = np.random.rand(self.curves, 4)
                high = np.array((0.565, 0.392, 0.173, 1))
                low = np.array((0.094, 0.310, 0.635, 1))
                diff = (high - low) / (self.curves)
                colors[:, 3] = 1
                for i in range(self.curves):
                    scale = diff * i
                    color = low + scale
                    color[3] = 1
                    color = torch.tensor(color)
                    num_ctrl_pts = torch.zeros(1, dtype=torch.int32) + 2
                    if i * 3 + 4 > self.curves * 3:
                        curve_points = torch.stack([points[i * 3], points[i * 3 + 1], points[i * 3 + 2], points[0]])
                    else:
                        curve_points = points[i * 3:i * 3 + 4]
                    path = pydiffvg.Path(
                        num_control_points=num_ctrl_pts, points=curve_points,
                        is_closed=False, stroke_width=torch.tensor(4))
                    path_group = pydiffvg.ShapeGroup(
                        shape_ids=torch.tensor([i]),
                        fill_color=None,
                        stroke_color=color)
                    shapes.append(path)
                    shape_groups.append(path_group)
            else:
                path = pydiffvg.Path(
                    num_control_points=num_ctrl_pts, points=points,
                    is_closed=True)

                shapes.append(path)
                path_group = pydiffvg.ShapeGroup(
                    shape_ids=torch.tensor([len(shapes) - 1]),
                    fill_color=color,
                    stroke_color=color)
                shape_groups.append(path_group)
            scene_args = pydiffvg.RenderFunction.serialize_scene(
                render_size, render_size, shapes, shape_groups)
            out = render(render_size,  # width
                         render_size,  # height
                         3,  # num_samples_x
                         3,  # num_samples_y
                         102,  # seed
                         None,
                         *scene_args)
            out = out.permute(2, 0, 1).view(4, render_size, render_size)  # [:3]#.mean(0, keepdim=True)
            outputs.append(out)
        output = torch.stack(outputs).to(all_points.device)

        # map to [-1, 1]
        if white_background:
            alpha = output[:, 3:4, :, :]
            output_white_bg = output[:, :3, :, :] * alpha + (1 - alpha)
            output = torch.cat([output_white_bg, alpha], dim=1)
        del num_ctrl_pts, color
        return output

    def decode(self, z: Tensor, point_predictor=None, verbose=False) -> Tensor:
        if point_predictor is None:
            point_predictor = self.point_predictor
        self.id_eye = self.id_eye.to(z.device)
        bs = z.shape[0]
        z = z[:, None, :].repeat([1, self.curves * 3, 1])
        base_control_features = sample_circle(self.circle_rad, self.angles, self.sample_rate)[None, :, :].repeat(bs, 1, 1)
        z_base = torch.cat([z, base_control_features], dim=-1)
        z_base_transform = self.decoder_input(z_base)
        x = decode_transform(z_base_transform)
        for layer in point_predictor:
            x = layer(x)
        all_points = decode_transform(x)
        all_points = all_points + 0.5
        output = self.raster(all_points, color=self.colors[0], verbose=verbose, white_background=True)
        return output

    def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
        """
        Reparameterization trick to sample from N(mu, var) from
        N(0,1).
        :param mu: (Tensor) Mean of the latent Gaussian [B x D]
        :param logvar: (Tensor) Standard deviation of the latent Gaussian [B x D]
        :return: (Tensor) [B x D]
        """
        if self.reparameterize_:
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return eps * std + mu
        else:
            return mu

    def forward(self, input: Tensor, **kwargs) -> List[Tensor]:
        mu, log_var = self.encode(input)
        z = self.reparameterize(mu, log_var)
        output = self.decode(z)
        return [output, input, mu, log_var]

    def loss_function(self,
                      *args,
                      **kwargs) -> dict:
        """
        Computes the VAE loss function.
        KL(N(\mu, \sigma), N(0, 1)) = \log \frac{1}{\sigma} + \frac{\sigma^2 + \mu^2}{2} - \frac{1}{2}
        :param args:
        :param kwargs:
        :return:
        """
        recons = args[0]
        input = args[1]
        mu = args[2]
        log_var = args[3]

        kld_weight = kwargs['M_N']  # Account for the minibatch samples from the dataset
        recons_loss = self.loss_fn(recons[:, :3], input[:, :3])
        # downsample the rasterised image to give multiresolution supervision
        recons_loss = recons_loss + self.loss_fn(F.avg_pool2d(recons[:, :3], 2), F.avg_pool2d(input[:, :3], 2))

        kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)

        loss = recons_loss + kld_weight * kld_loss * self.beta
        return {'loss': loss, 'Reconstruction_Loss': recons_loss, 'KLD': -kld_loss}

    def sample(self,
               num_samples: int,
               current_device: int, **kwargs) -> Tensor:
        """
        Samples from the latent space and return the corresponding
        image space map.
        :param num_samples: (Int) Number of samples
        :param current_device: (Int) Device to run the model
        :return: (Tensor)
        """
        z = torch.randn(num_samples,
                        self.latent_dim)

        z = z.to(current_device)

        samples = self.decode(z)
        return samples

    def generate(self, x: Tensor, **kwargs) -> Tensor:
        """
        Given an input image x, returns the reconstructed image
        :param x: (Tensor) [B x C x H x W]
        :return: (Tensor) [B x C x H x W]
        """
        mu, log_var = self.encode(x)
        all_points = self.decode(mu, verbose=kwargs.get('verbose', False))
        return all_points

    def interpolate(self, x: Tensor, **kwargs) -> Tensor:
        mu, log_var = self.encode(x)
        all_interpolations = []
        for i in range(mu.shape[0]):
            z = self.interpolate_vectors(mu[2], mu[i], 10)
            output = self.decode(z)
            all_interpolations.append(output)
        return all_interpolations

    def interpolate_vectors(self, v1, v2, n):
        step = (v2 - v1) / (n - 1)
        vecs = []
        for i in range(n):
            vecs.append(v1 + i * step)
        return torch.stack(vecs)

    def visualize_sampling(self, x: Tensor, n: int = 8, sigma: float = 0.1):
        """decode `n` jittered codes around each input's mean (used for the paper figures)"""
        mu, log_var = self.encode(x)
        outputs = []
        for i in range(mu.shape[0]):
            z = mu[i:i + 1] + sigma * torch.randn(n, self.latent_dim).cuda()
            outputs.append(self.decode(z))
        return outputs

    def save(self, x, save_dir, name):
        z, log_var = self.encode(x)
        bs = z.shape[0]
        z = z[:, None, :].repeat([1, self.curves * 3, 1])
        base_control_features = sample_circle(self.circle_rad, self.angles, self.sample_rate)[None, :, :].repeat(bs, 1, 1)
        z_base = torch.cat([z, base_control_features], dim=-1)
        x = decode_transform(self.decoder_input(z_base))
        for layer in self.point_predictor:
            x = layer(x)
        all_points = (decode_transform(x) + 0.5) * self.imsize
        num_ctrl_pts = torch.zeros(self.curves, dtype=torch.int32) + 2
        color = make_tensor(self.colors[0])
        for k in range(bs):
            points = all_points[k].cpu().contiguous()
            path = pydiffvg.Path(num_control_points=num_ctrl_pts, points=points, is_closed=True)
            path_group = pydiffvg.ShapeGroup(shape_ids=torch.tensor([0]), fill_color=color, stroke_color=color)
            pydiffvg.save_svg(f"{save_dir}{name}/{k}.svg", self.imsize, self.imsize, [path], [path_group])
