import numpy as np
import copy
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
from utils import *
from models import *


class CaloDiffu(nn.Module):
    """Diffusion based generative model"""
    def __init__(self, data_shape, config=None, R_Z_inputs=False, training_obj='noise_pred', nsteps=400,
                 cold_diffu=False, E_bins=None, avg_showers=None, std_showers=None, NN_embed=None):
        super(CaloDiffu, self).__init__()
        self._data_shape = data_shape
        self.nvoxels = np.prod(self._data_shape)
        self.config = config
        self._num_embed = self.config['EMBED']
        self.num_heads = 1
        self.nsteps = nsteps
        self.cold_diffu = cold_diffu
        self.E_bins = E_bins
        self.avg_showers = avg_showers
        self.std_showers = std_showers
        self.training_obj = training_obj
        self.shower_embed = self.config.get('SHOWER_EMBED', '')
        self.fully_connected = ('FCN' in self.shower_embed)
        self.NN_embed = NN_embed

        supported = ['noise_pred', 'mean_pred', 'hybrid']
        is_obj = [s in self.training_obj for s in supported]
        if(not any(is_obj)):
            print("Training objective %s not supported!" % self.training_obj)
            exit(1)

        if config is None:
            raise ValueError("Config file not given")

        self.verbose = 1

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        # Minimum and maximum maximum variance of noise
        self.beta_start = 0.0001
        self.beta_end = config.get("BETA_MAX", 0.02)

        # linear schedule
        schedd = config.get("NOISE_SCHED", "linear")
        self.discrete_time = True

        if("linear" in schedd):
            self.betas = torch.linspace(self.beta_start, self.beta_end, self.nsteps)
        elif("cosine" in schedd):
            self.betas = cosine_beta_schedule(self.nsteps)
        elif("log" in schedd):
            self.discrete_time = False
            self.P_mean = -1.5
            self.P_std = 1.5
        else:
            print("Invalid NOISE_SCHEDD param %s" % schedd)
            exit(1)

        if(self.discrete_time):
            # precompute useful quantities for training
            self.alphas = 1. - self.betas
            self.alphas_cumprod = torch.cumprod(self.alphas, axis=0)

            # shift all elements over by inserting unit value in first place
            alphas_cumprod_prev = nn.functional.pad(self.alphas_cumprod[:-1], (1, 0), value=1.0)

            self.sqrt_recip_alphas = torch.sqrt(1.0 / self.alphas)
            self.sqrt_alphas_cumprod = torch.sqrt(self.alphas_cumprod)
            self.sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - self.alphas_cumprod)
            self.posterior_variance = self.betas * (1. - alphas_cumprod_prev) / (1. - self.alphas_cumprod)

        self.time_embed = config.get("TIME_EMBED", 'sin')
        self.E_embed = config.get("COND_EMBED", 'sin')
        cond_dim = config['COND_SIZE_UNET']
        layer_sizes = config['LAYER_SIZE_UNET']
        block_attn = config.get("BLOCK_ATTN", False)
        mid_attn = config.get("MID_ATTN", False)
        compress_Z = config.get("COMPRESS_Z", False)

        if(self.fully_connected):
            # fully connected network architecture
            self.model = ResNet(cond_emb_dim=cond_dim, dim_in=config['SHAPE_ORIG'][1], num_layers=config['NUM_LAYERS_LINEAR'],
                                hidden_dim=512)

            self.R_Z_inputs = False

            summary_shape = [[1, config['SHAPE_ORIG'][1]], [1], [1]]

        else:
            RZ_shape = config['SHAPE_PAD'][1:]

            self.R_Z_inputs = config.get('R_Z_INPUT', False)
            self.phi_inputs = config.get('PHI_INPUT', False)

            in_channels = 1

            self.R_image, self.Z_image = create_R_Z_image(device, scaled=True, shape=RZ_shape)
            self.phi_image = create_phi_image(device, shape=RZ_shape)

            if(self.R_Z_inputs):
                in_channels = 3

            if(self.phi_inputs):
                in_channels += 1

            calo_summary_shape = list(copy.copy(RZ_shape))
            calo_summary_shape.insert(0, 1)
            calo_summary_shape[1] = in_channels

            calo_summary_shape[0] = 1
            summary_shape = [calo_summary_shape, [1], [1]]

            self.model = CondUnet(cond_dim=cond_dim, out_dim=1, channels=in_channels, layer_sizes=layer_sizes,
                                  block_attn=block_attn, mid_attn=mid_attn,
                                  cylindrical=config.get('CYLINDRICAL', False), compress_Z=compress_Z,
                                  data_shape=calo_summary_shape,
                                  cond_embed=(self.E_embed == 'sin'), time_embed=(self.time_embed == 'sin'))

        print("\n\n Model: \n")
        # summary(self.model, summary_shape)

    # wrapper for backwards compatability
    def load_state_dict(self, d):
        if('noise_predictor' in list(d.keys())[0]):
            d_new = dict()
            for key in d.keys():
                key_new = key.replace('noise_predictor', 'model')
                d_new[key_new] = d[key]
        else:
            d_new = d

        return super().load_state_dict(d_new)

    def add_RZPhi(self, x):
        cats = [x]
        if(self.R_Z_inputs):

            batch_R_image = self.R_image.repeat([x.shape[0], 1, 1, 1, 1]).to(device=x.device)
            batch_Z_image = self.Z_image.repeat([x.shape[0], 1, 1, 1, 1]).to(device=x.device)

            cats += [batch_R_image, batch_Z_image]
        if(self.phi_inputs):
            batch_phi_image = self.phi_image.repeat([x.shape[0], 1, 1, 1, 1]).to(device=x.device)

            cats += [batch_phi_image]

        if(len(cats) > 1):
            return torch.cat(cats, axis=1)
        else:
            return x

    def lookup_avg_std_shower(self, inputEs):
        idxs = torch.bucketize(inputEs, self.E_bins) - 1  # NP indexes bins starting at 1
        return self.avg_showers[idxs], self.std_showers[idxs]

    def noise_image(self, data=None, t=None, noise=None):

        if(noise is None):
            noise = torch.randn_like(data)

        if(t[0] <= 0):
            return data

        sqrt_alphas_cumprod_t = extract(self.sqrt_alphas_cumprod, t, data.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(self.sqrt_one_minus_alphas_cumprod, t, data.shape)
        out = sqrt_alphas_cumprod_t * data + sqrt_one_minus_alphas_cumprod_t * noise
        return out

    def compute_loss(self, data, energy, noise=None, t=None, loss_type="l2", rnd_normal=None, energy_loss_scale=1e-2):
        if noise is None:
            noise = torch.randn_like(data)

        const_shape = (data.shape[0], *((1,) * (len(data.shape) - 1)))

        if(self.discrete_time):
            sqrt_alphas_cumprod_t = extract(self.sqrt_alphas_cumprod, t, data.shape)
            sqrt_one_minus_alphas_cumprod_t = extract(self.sqrt_one_minus_alphas_cumprod, t, data.shape)
            sigma = sqrt_one_minus_alphas_cumprod_t / sqrt_alphas_cumprod_t
        else:
            if(rnd_normal is None):
                rnd_normal = torch.randn((data.size()[0],), device=data.device)
            sigma = (rnd_normal * self.P_std + self.P_mean).exp().reshape(const_shape)

        x_noisy = data + sigma * noise
        sigma2 = sigma**2

        weight = 1.

        x0_pred = self.denoise(x_noisy, energy, sigma)

        # keep the loss (and its reductions over ~10^4 voxels) in fp32, also under --amp
        with torch.cuda.amp.autocast(enabled=False):
            x0_pred = x0_pred.float()
            if('hybrid' in self.training_obj):
                weight = torch.reshape(1. / sigma2, const_shape) + 1.
                target = data.float()
            elif('noise_pred' in self.training_obj):
                pred = (data - x0_pred) / sigma
                target = noise.float()
                weight = 1.
                x0_pred = pred
            elif('mean_pred' in self.training_obj):
                target = data.float()
                weight = 1. / sigma2

            if (loss_type == 'l1'):
                loss = (weight * torch.abs(x0_pred - target)).mean()
            elif (loss_type == 'l2'):
                loss = (weight * ((x0_pred - target) ** 2)).mean()
            elif (loss_type == "huber"):
                loss = torch.nn.functional.smooth_l1_loss(target, x0_pred)
            else:
                raise NotImplementedError()

            # total deposited energy should be preserved (weak physics prior)
            if energy_loss_scale > 0:
                ones = torch.ones(target[0].numel(), 1, device=target.device)
                e_true = torch.matmul(target.reshape(target.shape[0], -1).exp(), ones).squeeze(-1)
                e_pred = torch.matmul(x0_pred.reshape(x0_pred.shape[0], -1).exp(), ones).squeeze(-1)
                loss = loss + energy_loss_scale * ((e_pred - e_true) / e_true.clamp(min=1e-6)).square().mean()

        return loss

    def do_time_embed(self, t=None, embed_type="identity", sigma=None):
        if(self.discrete_time):
            if(sigma is None):
                sigma = self.sqrt_one_minus_alphas_cumprod[t] / self.sqrt_alphas_cumprod[t]

            if(embed_type == "identity" or embed_type == 'sin'):
                return t
            if(embed_type == "scaled"):
                return t / self.nsteps
            if(embed_type == "sigma"):
                return sigma.to(t.device)
            if(embed_type == "log"):
                return 0.5 * torch.log(sigma).to(t.device)
        else:
            if(embed_type == "log"):
                return 0.5 * torch.log(sigma).to(sigma.device)
            else:
                return sigma

    def pred(self, x, E, t_emb):

        if(self.NN_embed is not None):
            x = self.NN_embed.enc(x).to(x.device)
        out = self.model(self.add_RZPhi(x), E, t_emb)
        if(self.NN_embed is not None):
            out = self.NN_embed.dec(out).to(x.device)
        return out

    def denoise(self, x, E, sigma=None):
        t_emb = self.do_time_embed(embed_type=self.time_embed, sigma=sigma.reshape(-1))
        sigma = sigma.reshape(-1, *(1,) * (len(x.shape) - 1))
        c_in = 1 / (sigma**2 + 1).sqrt()
        pred = self.pred(x * c_in, E, t_emb)

        if('noise_pred' in self.training_obj):
            return (x - sigma * pred)
        elif('mean_pred' in self.training_obj):
            return pred
        elif('hybrid' in self.training_obj):
            sigma2 = sigma**2
            c_skip = 1. / (sigma2 + 1.)
            c_out = torch.sqrt(sigma2) / (sigma2 + 1.).sqrt()
            return c_skip * x + c_out * pred

    @torch.no_grad()
    def p_sample(self, x, E, t, cold_noise_scale=0., noise=None, sample_algo='ddpm', debug=False):
        # reverse the diffusion process (one step)

        if(noise is None):
            noise = torch.randn(x.shape, device=x.device)

        betas_t = extract(self.betas, t, x.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(self.sqrt_one_minus_alphas_cumprod, t, x.shape)
        sqrt_alphas_cumprod_t = extract(self.sqrt_alphas_cumprod, t, x.shape)
        sqrt_recip_alphas_t = extract(self.sqrt_recip_alphas, t, x.shape)
        posterior_variance_t = extract(self.posterior_variance, t, x.shape)

        sigma = sqrt_one_minus_alphas_cumprod_t / sqrt_alphas_cumprod_t
        x0_pred = self.denoise(x * (1 + sigma**2).sqrt(), E, sigma)
        noise_pred = (x * (1 + sigma**2).sqrt() - x0_pred) / sigma

        if(sample_algo == 'ddpm'):
            # Equation 11 in the paper
            # Use our model (noise predictor) to predict the mean
            post_mean = sqrt_recip_alphas_t * (x - betas_t * noise_pred / sqrt_one_minus_alphas_cumprod_t)
            out = post_mean + torch.sqrt(posterior_variance_t) * noise
            if t[0] == 0:
                out = post_mean
        else:
            print("Algo %s not supported!" % sample_algo)
            exit(1)

        if(debug):
            if(t[0] % 5 == 0 or t[0] == 0):
                print("t %i: std %.3f" % (t[0], torch.std(out).item()))
        return out, x0_pred

    @torch.no_grad()
    def Sample(self, E, num_steps=200, cold_noise_scale=0., sample_algo='ddpm', debug=False, sample_offset=0):
        """Generate samples from diffusion model.

        Args:
        E: Energies
        num_steps: The number of sampling steps.
        Equivalent to the number of discretized time steps.

        Returns:
        Samples.
        """

        print("SAMPLE ALGO : %s" % sample_algo)

        # Full sample (all steps)
        device = next(self.parameters()).device

        gen_size = E.shape[0]
        # start from pure noise (for each example in the batch)
        gen_shape = list(copy.copy(self._data_shape))
        gen_shape.insert(0, gen_size)

        # start from pure noise
        x_start = torch.randn(gen_shape, device=device)

        avg_shower = std_shower = None
        start = time.time()

        x = x_start
        fixed_noise = None
        xs = []
        x0s = []
        self.prev_noise = x

        time_steps = list(range(0, num_steps - sample_offset))
        time_steps.reverse()

        for time_step in time_steps:
            times = torch.full((gen_size,), time_step, device=device, dtype=torch.long)
            out, x0_pred = self.p_sample(x, E, times, noise=fixed_noise, cold_noise_scale=cold_noise_scale,
                                         sample_algo=sample_algo, debug=debug)
            if(debug):
                if(time_step % 50 == 0):
                    x0s.append(x0_pred.detach().cpu().numpy())
                    xs.append(out.detach().cpu().numpy())

            x = out

        end = time.time()
        print("Time for sampling {} events is {} seconds".format(gen_size, end - start), flush=True)
        if(debug):
            return x.detach().cpu().numpy(), xs, x0s
        else:
            return x.detach().cpu().numpy()


def extract(a, t, x_shape):
    # Extract the coefficient for timestep t from schedule a, broadcast to x_shape
    batch_size = t.shape[0]
    out = a.gather(-1, t.cpu())
    return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).cuda()


def cosine_beta_schedule(timesteps, s=0.008):
    """
    cosine schedule as proposed in https://arxiv.org/abs/2102.09672
    """
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0.0001, 0.9999)
