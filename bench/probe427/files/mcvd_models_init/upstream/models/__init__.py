import numpy as np
import torch

from functools import partial
from torch.distributions.gamma import Gamma
from tqdm import tqdm


def get_sigmas(config):

    T = getattr(config.model, 'num_classes')

    if config.model.sigma_dist == 'geometric':
        return torch.logspace(np.log10(config.model.sigma_begin), np.log10(config.model.sigma_end),
                              T).to(config.device)

    elif config.model.sigma_dist == 'linear':
        return torch.linspace(config.model.sigma_begin, config.model.sigma_end,
                              T).to(config.device)

    elif config.model.sigma_dist == 'cosine':
        t = torch.linspace(T, 0, T + 1) / T
        s = 0.008
        f = torch.cos((t + s) / (1 + s) * np.pi / 2) ** 2
        return f[:-1] / f[-1]

    else:
        raise NotImplementedError('sigma distribution not supported')


@torch.no_grad()
def FPNDM_sampler(x_mod, scorenet, cond=None, final_only=False, denoise=True, subsample_steps=None,
                  verbose=False, log=False, clip_before=True, t_min=-1, gamma=False, **kwargs):

    net = scorenet.module if hasattr(scorenet, 'module') else scorenet
    alphas, alphas_prev, betas = net.alphas, net.alphas_prev, net.betas
    steps = np.arange(len(betas))

    net_type = getattr(net, 'type') if isinstance(getattr(net, 'type'), str) else 'v1'

    if subsample_steps is not None:
        if subsample_steps < len(alphas):
            skip = len(alphas) // subsample_steps
            steps = range(0, len(alphas), skip)
            steps = torch.tensor(steps, device=alphas.device)
            # new alpha, beta, alpha_prev
            alphas = alphas.index_select(0, steps)
            alphas_prev = torch.cat([alphas[1:], torch.tensor([1.0]).to(alphas)])
            betas = 1.0 - torch.div(alphas, alphas_prev)  # for some reason we lose a bit of precision here
            if t_min != -1:
                steps = steps[steps >= t_min]
                alphas = alphas[-len(steps):]
                alphas_prev = alphas_prev[-len(steps):]
                betas = betas[-len(steps):]
            steps = steps.tolist()

    images = []
    x_transf = False

    L = len(steps)
    for i, step in enumerate(steps):

        if i < 3:
            # Hybrid: first steps with DDIM
            c_beta, c_alpha, c_alpha_prev = betas[i], alphas[i], alphas_prev[i]
            labels = (step * torch.ones(x_mod.shape[0], device=x_mod.device)).long()
            grad = scorenet(x_mod, labels, cond=cond)
            x0 = (1 / c_alpha.sqrt()) * (x_mod - (1 - c_alpha).sqrt() * grad)
            if clip_before:
                x0 = x0.clamp_(-1.0, 1.0)
            x_mod = c_alpha_prev.sqrt() * x0 + (1 - c_alpha_prev).sqrt() * grad
        else:
            labels = (step * torch.ones(x_mod.shape[0], device=x_mod.device)).long()
            grad = scorenet(x_mod, labels, cond=cond)
            c_alpha, c_alpha_prev = alphas[i], alphas_prev[i]
            x0 = (1 / c_alpha.sqrt()) * (x_mod - (1 - c_alpha).sqrt() * grad)
            x_mod = c_alpha_prev.sqrt() * x0 + (1 - c_alpha_prev).sqrt() * grad

        if not final_only:
            images.append(x_mod.to('cpu'))
        if i == 0 or (i + 1) % max(L // 10, 1) == 0:
            if verbose or log:
                grad = -1 / (1 - c_alpha).sqrt() * grad
                grad_norm = torch.norm(grad.reshape(grad.shape[0], -1), dim=-1).mean().item()
                image_norm = torch.norm(x_mod.reshape(x_mod.shape[0], -1), dim=-1).mean().item()
                grad_mean_norm = torch.norm(grad.mean(dim=0).reshape(-1)) ** 2 * (1 - c_alpha)

            if verbose:
                print("{}: {}/{}, grad_norm: {}, image_norm: {}, grad_mean_norm: {}".format(
                    "FPNDM", step, len(alphas), grad_norm, image_norm, grad_mean_norm.item()))

    if final_only:
        return [x_mod.to('cpu')]
    else:
        return torch.stack(images)


@torch.no_grad()
def ddim_sampler(x_mod, scorenet, cond=None, final_only=False, denoise=True, subsample_steps=None,
                 verbose=False, log=False, clip_before=True, t_min=-1, gamma=False, **kwargs):

    net = scorenet.module if hasattr(scorenet, 'module') else scorenet
    alphas, alphas_prev, betas = net.alphas, net.alphas_prev, net.betas
    if gamma:
        ks_cum, thetas = net.k_cum, net.theta_t
    steps = np.arange(len(betas))

    if subsample_steps is not None:
        if subsample_steps < len(alphas):
            skip = len(alphas) // subsample_steps
            steps = range(0, len(alphas), skip)
            steps = torch.tensor(steps, device=alphas.device)
            alphas = alphas.index_select(0, steps)
            alphas_prev = torch.cat([alphas[1:], torch.tensor([1.0]).to(alphas)])
            betas = 1.0 - torch.div(alphas, alphas_prev)
            if gamma:
                ks_cum = ks_cum.index_select(0, steps)
                thetas = thetas.index_select(0, steps)
            steps = steps.tolist()

    images = []
    for i, step in enumerate(steps):
        c_alpha, c_alpha_prev = alphas[i], alphas_prev[i]
        labels = (step * torch.ones(x_mod.shape[0], device=x_mod.device)).long()
        grad = scorenet(x_mod, labels, cond=cond)

        x0 = (1 / c_alpha.sqrt()) * (x_mod - (1 - c_alpha).sqrt() * grad)
        if clip_before:
            x0 = x0.clamp_(-1.0, 1.0)

        if gamma:
            used_k, used_theta = ks_cum[i], thetas[i]
            noise = Gamma(torch.full(x_mod.shape[1:], used_k), torch.full(x_mod.shape[1:], 1 / used_theta)).sample((x_mod.shape[0],)).to(x_mod.device)
            noise = noise - used_k * used_theta
            x_mod = c_alpha_prev.sqrt() * x0 + (1 - c_alpha_prev).sqrt() * grad
        else:
            x_mod = c_alpha_prev.sqrt() * x0 + (1 - c_alpha_prev).sqrt() * grad

        if not final_only:
            images.append(x_mod.to('cpu'))

    if final_only:
        return [x_mod.to('cpu')]
    else:
        return torch.stack(images)


@torch.no_grad()
def ddpm_sampler(x_mod, scorenet, cond=None, just_beta=False, final_only=False, denoise=True, subsample_steps=None,
                 same_noise=False, noise_val=None, frac_steps=None, verbose=False, log=False, clip_before=True,
                 t_min=-1, gamma=False, **kwargs):

    net = scorenet.module if hasattr(scorenet, 'module') else scorenet
    alphas, alphas_prev, betas = net.alphas, net.alphas_prev, net.betas
    steps = np.arange(len(betas))
    if gamma:
        ks_cum, thetas = net.k_cum, net.theta_t

    if subsample_steps is not None:
        if subsample_steps < len(alphas):
            skip = len(alphas) // subsample_steps
            steps = range(0, len(alphas), skip)
            steps = torch.tensor(steps, device=alphas.device)
            alphas = alphas.index_select(0, steps)
            alphas_prev = torch.cat([alphas[1:], torch.tensor([1.0]).to(alphas)])
            betas = 1.0 - torch.div(alphas, alphas_prev)
            if gamma:
                ks_cum = ks_cum.index_select(0, steps)
                thetas = thetas.index_select(0, steps)
            steps = steps.tolist()

    if frac_steps is not None:
        steps = steps[int((1 - frac_steps) * len(steps)):]
        alphas = alphas[int((1 - frac_steps) * len(alphas)):]
        alphas_prev = alphas_prev[int((1 - frac_steps) * len(alphas_prev)):]
        betas = betas[int((1 - frac_steps) * len(betas)):]

    images = []
    for i, step in enumerate(steps):
        labels = (step * torch.ones(x_mod.shape[0], device=x_mod.device)).long()
        grad = scorenet(x_mod, labels, cond=cond)

        x0 = (1 / alphas[i].sqrt()) * (x_mod - (1 - alphas[i]).sqrt() * grad)
        if clip_before:
            x0 = x0.clamp_(-1.0, 1.0)
        x_mod = (alphas_prev[i].sqrt() * betas[i] / (1 - alphas[i])) * x0 + \
                ((1 - betas[i]).sqrt() * (1 - alphas_prev[i]) / (1 - alphas[i])) * x_mod

        if not just_beta:
            if gamma:
                used_k, used_theta = ks_cum[i], thetas[i]
                noise = Gamma(torch.full(x_mod.shape[1:], used_k), torch.full(x_mod.shape[1:], 1 / used_theta)).sample((x_mod.shape[0],)).to(x_mod.device)
                noise = (noise - used_k * used_theta) / (used_k ** 0.5) / used_theta
            elif same_noise:
                noise = noise_val
            else:
                noise = torch.randn_like(x_mod)
            if i < len(steps) - 1 or not denoise:
                x_mod = x_mod + (betas[i] * (1 - alphas_prev[i]) / (1 - alphas[i])).sqrt() * noise

        if not final_only:
            images.append(x_mod.to('cpu'))

    if final_only:
        return [x_mod.to('cpu')]
    else:
        return torch.stack(images)


@torch.no_grad()
def anneal_Langevin_dynamics(x_mod, scorenet, sigmas, n_steps_each=200, step_lr=0.000008,
                             final_only=False, verbose=False, denoise=True, cond=None, **kwargs):
    images = []

    for c, sigma in enumerate(sigmas):
        labels = torch.ones(x_mod.shape[0], device=x_mod.device) * c
        labels = labels.long()
        step_size = step_lr * (sigma / sigmas[-1]) ** 2
        for s in range(n_steps_each):
            grad = scorenet(x_mod, labels, cond=cond)

            noise = torch.randn_like(x_mod)
            x_mod = x_mod + step_size * grad + noise * np.sqrt(step_size * 2)

            if not final_only:
                images.append(x_mod.to('cpu'))

    if denoise:
        last_noise = (len(sigmas) - 1) * torch.ones(x_mod.shape[0], device=x_mod.device)
        last_noise = last_noise.long()
        x_mod = x_mod + sigmas[-1] ** 2 * scorenet(x_mod, last_noise, cond=cond)
        images.append(x_mod.to('cpu'))

    if final_only:
        return [x_mod.to('cpu')]
    else:
        return images


@torch.no_grad()
def anneal_Langevin_dynamics_consistent(x_mod, scorenet, sigmas, n_steps_each=200, step_lr=0.000008,
                                        final_only=False, verbose=False, denoise=True, cond=None, **kwargs):
    images = []
    smallest_invgamma = sigmas[-1] / sigmas[-2]
    lowerbound = sigmas[-1] ** 2 * (1 - smallest_invgamma)
    higherbound = sigmas[-1] ** 2 * (1 + smallest_invgamma)
    assert lowerbound < step_lr < higherbound, f"Could not satisfy {lowerbound} < {step_lr} < {higherbound}"

    eta = step_lr / (sigmas[-1] ** 2)
    for c, sigma in enumerate(sigmas):
        if c == len(sigmas) - 1:
            break
        labels = torch.ones(x_mod.shape[0], device=x_mod.device) * c
        labels = labels.long()
        grad = scorenet(x_mod, labels, cond=cond)
        x_mod = x_mod + eta * sigma ** 2 * grad
        noise = torch.randn_like(x_mod)
        gamma = sigmas[c + 1] / sigma
        beta = (1 - (gamma * (1 - eta)) ** 2) ** 0.5
        x_mod = x_mod + sigmas[c + 1] * beta * noise
        if not final_only:
            images.append(x_mod.to('cpu'))

    if final_only:
        return [x_mod.to('cpu')]
    else:
        return images
