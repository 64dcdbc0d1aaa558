"""Flow-based sampling for 2-D scalar phi^4 lattice field theory.

Script version of the "Introduction to Normalizing Flows for Lattice Field Theory"
tutorial: affine coupling layers with checkerboard masks, trained by reverse KL,
then used as an independence proposal in a Metropolis chain.
"""
import argparse
import base64
import io
import pickle
import time

import numpy as np
import torch
import torch.nn as nn

# Use the GPU when there is one; everything else picks this up through torch_device
if torch.cuda.is_available():
    torch_device = 'cuda'
    float_dtype = np.float32  # single
    torch.set_default_tensor_type(torch.cuda.FloatTensor)
else:
    torch_device = 'cpu'
    float_dtype = np.float64  # double
    torch.set_default_tensor_type(torch.DoubleTensor)
print(f"TORCH DEVICE: {torch_device}")


def torch_mod(x):
    return torch.remainder(x, 2 * np.pi)


def grab(var):
    return var.detach().cpu().numpy()


class SimpleNormal:
    def __init__(self, loc, var):
        self.dist = torch.distributions.normal.Normal(torch.flatten(loc), torch.flatten(var))
        self.shape = loc.shape

    def log_prob(self, x):
        logp = self.dist.log_prob(x.reshape(x.shape[0], -1))
        return torch.sum(logp, dim=1)

    def sample_n(self, batch_size):
        x = self.dist.sample((batch_size,))
        return x.reshape(batch_size, *self.shape)


class ScalarPhi4Action:
    def __init__(self, M2, lam):
        self.M2 = M2
        self.lam = lam

    def __call__(self, cfgs):
        # potential term
        action_density = self.M2 * cfgs ** 2 + self.lam * cfgs ** 4
        # kinetic term (discrete Laplacian)
        Nd = len(cfgs.shape) - 1
        dims = range(1, Nd + 1)
        for mu in dims:
            action_density += 2 * cfgs ** 2
            action_density -= cfgs * torch.roll(cfgs, -1, mu)
            action_density -= cfgs * torch.roll(cfgs, 1, mu)
        return torch.sum(action_density, dim=tuple(dims))


def make_checker_mask(shape, parity):
    checker = torch.ones(shape, dtype=torch.uint8) - parity
    checker[::2, ::2] = parity
    checker[1::2, 1::2] = parity
    return checker.to(torch_device)


class AffineCoupling(nn.Module):
    def __init__(self, net, *, mask_shape, mask_parity):
        super().__init__()
        self.mask = make_checker_mask(mask_shape, mask_parity)
        self.net = net

    def forward(self, x):
        x_frozen = self.mask * x
        x_active = (1 - self.mask) * x
        net_out = self.net(x_frozen.unsqueeze(1))
        s, t = net_out[:, 0], net_out[:, 1]
        fx = (1 - self.mask) * t + x_active * torch.exp(s) + x_frozen
        axes = range(1, len(s.size()))
        logJ = torch.sum((1 - self.mask) * s, dim=tuple(axes))
        return fx, logJ

    def reverse(self, fx):
        fx_frozen = self.mask * fx
        fx_active = (1 - self.mask) * fx
        net_out = self.net(fx_frozen.unsqueeze(1))
        s, t = net_out[:, 0], net_out[:, 1]
        x = (fx_active - (1 - self.mask) * t) * torch.exp(-s) + fx_frozen
        axes = range(1, len(s.size()))
        logJ = torch.sum((1 - self.mask) * (-s), dim=tuple(axes))
        return x, logJ


def make_conv_net(*, hidden_sizes, kernel_size, in_channels, out_channels, use_final_tanh):
    sizes = [in_channels] + hidden_sizes + [out_channels]
    assert kernel_size % 2 == 1, 'kernel size must be odd for PyTorch >= 1.5.0'
    padding_size = (kernel_size // 2)
    net = []
    for i in range(len(sizes) - 1):
        net.append(nn.Conv2d(sizes[i], sizes[i + 1], kernel_size, padding=padding_size,
                             stride=1, padding_mode='circular'))
        if i != len(sizes) - 2:
            net.append(nn.LeakyReLU())
        else:
            if use_final_tanh:
                net.append(nn.Tanh())
    return nn.Sequential(*net)


def make_phi4_affine_layers(*, n_layers, lattice_shape, hidden_sizes, kernel_size):
    layers = []
    for i in range(n_layers):
        parity = i % 2
        net = make_conv_net(in_channels=1, out_channels=2, hidden_sizes=hidden_sizes,
                            kernel_size=kernel_size, use_final_tanh=True)
        coupling = AffineCoupling(net, mask_shape=lattice_shape, mask_parity=parity)
        layers.append(coupling)
    return nn.ModuleList(layers)


def apply_flow_to_prior(prior, coupling_layers, *, batch_size):
    x = prior.sample_n(batch_size)
    logq = prior.log_prob(x)
    for layer in coupling_layers:
        x, logJ = layer.forward(x)
        logq = logq - logJ
    return x, logq


def calc_dkl(logp, logq):
    return (logq - logp).mean()  # reverse KL, assuming samples from q


def compute_ess(logp, logq):
    logw = logp - logq
    log_ess = 2 * torch.logsumexp(logw, dim=0) - torch.logsumexp(2 * logw, dim=0)
    ess_per_cfg = torch.exp(log_ess) / len(logw)
    return ess_per_cfg


def train_step(model, action, loss_fn, optimizer, metrics, batch_size):
    layers, prior = model['layers'], model['prior']
    optimizer.zero_grad()

    x, logq = apply_flow_to_prior(prior, layers, batch_size=batch_size)
    logp = -action(x)
    loss = calc_dkl(logp, logq)
    loss.backward()

    optimizer.step()

    metrics['loss'].append(grab(loss))
    metrics['logp'].append(grab(logp))
    metrics['logq'].append(grab(logq))
    metrics['ess'].append(grab(compute_ess(logp, logq)))


def serial_sample_generator(model, action, batch_size, N_samples):
    layers, prior = model['layers'], model['prior']
    layers.eval()
    x, logq, logp = None, None, None
    for i in range(N_samples):
        batch_i = i % batch_size
        if batch_i == 0:
            # we're out of samples to propose, generate a new batch
            x, logq = apply_flow_to_prior(prior, layers, batch_size=batch_size)
            logp = -action(x)
        yield x[batch_i], logq[batch_i], logp[batch_i]


def make_mcmc_ensemble(model, action, batch_size, N_samples):
    history = {'x': [], 'logq': [], 'logp': [], 'accepted': []}

    # build Markov chain
    sample_gen = serial_sample_generator(model, action, batch_size, N_samples)
    for new_x, new_logq, new_logp in sample_gen:
        if len(history['logp']) == 0:
            # always accept first proposal, Markov chain must start somewhere
            accepted = True
        else:
            # Metropolis acceptance condition
            last_logp = history['logp'][-1]
            last_logq = history['logq'][-1]
            p_accept = torch.exp((new_logp - new_logq) - (last_logp - last_logq))
            p_accept = min(1, p_accept)
            draw = torch.rand(1)  # ~ [0,1]
            if draw < p_accept:
                accepted = True
            else:
                accepted = False
                new_x = history['x'][-1]
                new_logp = last_logp
                new_logq = last_logq
        # Update Markov chain
        history['logp'].append(new_logp)
        history['logq'].append(new_logq)
        history['x'].append(new_x)
        history['accepted'].append(accepted)
    return history


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--L', type=int, default=8)
    parser.add_argument('--M2', type=float, default=-4.0)
    parser.add_argument('--lam', type=float, default=8.0)
    parser.add_argument('--n-era', type=int, default=25)
    parser.add_argument('--n-epoch', type=int, default=100)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--out', default='phi4_flow.pt')
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    if torch_device == 'cuda':  # seed the device generator as well
        torch.cuda.manual_seed_all(args.seed)

    lattice_shape = (args.L, args.L)
    phi4_action = ScalarPhi4Action(M2=args.M2, lam=args.lam)

    prior = SimpleNormal(torch.zeros(lattice_shape), torch.ones(lattice_shape))
    layers = make_phi4_affine_layers(lattice_shape=lattice_shape, n_layers=16,
                                     hidden_sizes=[8, 8], kernel_size=3)
    model = {'layers': layers, 'prior': prior}

    optimizer = torch.optim.Adam(model['layers'].parameters(), lr=1e-3)
    metrics = {'loss': [], 'logp': [], 'logq': [], 'ess': []}

    t0 = time.time()
    for era in range(args.n_era):
        for epoch in range(args.n_epoch):
            train_step(model, phi4_action, calc_dkl, optimizer, metrics, args.batch_size)
        avg_loss = np.mean(metrics['loss'][-args.n_epoch:])
        avg_ess = np.mean(metrics['ess'][-args.n_epoch:])
        print(f"era {era:3d}  loss {avg_loss:8.4f}  ess {avg_ess:6.4f}  ({time.time() - t0:.1f}s)")

    ensemble_size = 8192
    phi4_ens = make_mcmc_ensemble(model, phi4_action, args.batch_size, ensemble_size)
    print("Accept rate:", np.mean(phi4_ens['accepted']))

    torch.save({'layers': model['layers'].state_dict(), 'args': vars(args)}, args.out)
    if torch_device == 'cuda':
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == '__main__':
    main()
