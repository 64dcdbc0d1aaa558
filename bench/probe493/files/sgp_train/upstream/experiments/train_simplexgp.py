import os
import time
from tqdm.auto import tqdm
import fire
import numpy as np
import torch
import gpytorch as gp
import wandb

from gpytorch_lattice_kernel import RBFLattice as BilateralKernel
from utils import set_seeds, prepare_dataset, EarlyStopper


class SimplexGPModel(gp.models.ExactGP):
    def __init__(self, train_x, train_y, order=1, min_noise=1e-4, nu=None):
        likelihood = gp.likelihoods.GaussianLikelihood(
                      noise_constraint=gp.constraints.GreaterThan(min_noise))
        super().__init__(train_x, train_y, likelihood)

        self.mean_module = gp.means.ConstantMean()
        self.base_covar_module = BilateralKernel(ard_num_dims=train_x.size(-1), order=order)
        self.covar_module = gp.kernels.ScaleKernel(self.base_covar_module)

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gp.distributions.MultivariateNormal(mean_x, covar_x)


def train(x, y, model, mll, optim, lanc_iter=100, pre_size=100):
    model.train()

    optim.zero_grad()

    with gp.settings.cg_tolerance(1e-4), \
         gp.settings.max_preconditioner_size(pre_size), \
         gp.settings.max_root_decomposition_size(lanc_iter):
        t_start = time.time()
        output = model(x)
        loss = -mll(output, y)

        loss.backward()

        optim.step()
        t_end = time.time()

    return {
        'train/mll': -loss.detach().item(),
        'train/secs': t_end - t_start,
    }


def test(x, y, model, lanc_iter=100, pre_size=100, label='test'):
    model.eval()

    with torch.no_grad(), \
         gp.settings.eval_cg_tolerance(1e-2), \
         gp.settings.max_preconditioner_size(pre_size), \
         gp.settings.max_root_decomposition_size(lanc_iter), \
         gp.settings.fast_pred_var():
        t_start = time.time()
        pred_y = model.likelihood(model(x))
        t_end = time.time()
        rmse = (pred_y.mean - y).pow(2).mean(0).sqrt()
        mae = (pred_y.mean - y).abs().mean(0)

    return {
        f'{label}/rmse': rmse.item(),
        f'{label}/mae': mae.item(),
        f'{label}/secs': t_end - t_start,
    }


def train_model(dataset, order=1, epochs=100, lr=1e-3, lanc_iter=100, pre_size=100, n_inducing=None, seed=None,
                p_epochs=200, nu=None, min_noise=1e-4, log_int=1):
    set_seeds(seed)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'

    train_x, train_y, val_x, val_y, test_x, test_y = dataset
    train_x, train_y = train_x.to(device), train_y.to(device)
    val_x, val_y = val_x.to(device), val_y.to(device)
    test_x, test_y = test_x.to(device), test_y.to(device)

    model = SimplexGPModel(train_x, train_y, order=order, min_noise=min_noise, nu=nu).to(device)
    mll = gp.mlls.ExactMarginalLogLikelihood(model.likelihood, model)

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    stopper = EarlyStopper(patience=p_epochs)

    for i in tqdm(range(epochs)):
        train_dict = train(train_x, train_y, model, mll, optimizer,
                           lanc_iter=lanc_iter, pre_size=pre_size)
        wandb.log(train_dict, step=i + 1)

        if (i % log_int) == 0:
            val_dict = test(val_x, val_y, model,
                            pre_size=pre_size, lanc_iter=lanc_iter,
                            label='val')

            test_dict = test(test_x, test_y, model,
                             pre_size=pre_size, lanc_iter=lanc_iter)

            stopper(-val_dict['val/rmse'], dict(
                state_dict=model.state_dict(),
                summary={
                    'test/best_rmse': test_dict['test/rmse'],
                    'test/best_mae': test_dict['test/mae'],
                    'val/best_step': i + 1
                }
            ))
            wandb.log(val_dict, step=i + 1)
            wandb.log(test_dict, step=i + 1)
            for k, v in stopper.info().get('summary').items():
                wandb.run.summary[k] = v
            torch.save(stopper.info().get('state_dict'), os.path.join(wandb.run.dir, 'model.pt'))
            wandb.save('*.pt')

            if stopper.is_done():
                break

    for k, v in stopper.info().get('summary').items():
        wandb.run.summary[k] = v
    torch.save(stopper.info().get('state_dict'), os.path.join(wandb.run.dir, 'model.pt'))
    wandb.save('*.pt')

    # peak memory is the headline number in the paper's scaling plots
    wandb.run.summary['gpu/max_mem_gb'] = torch.cuda.max_memory_allocated() / 2**30


def main(dataset: str = None, data_dir: str = None, log_int: int = 1, seed: int = None, device: int = 0,
         epochs: int = 100, lr: int = 1e-1, p_epochs: int = 200, lanc_iter: int = 100, pre_size: int = 10,
         n_inducing: int = 512, nu: float = None, min_noise: float = 1e-4, order: int = 1):
    if torch.cuda.is_available():
        torch.cuda.set_device(device)
        torch.cuda.reset_peak_memory_stats()

    wandb.init(config={
        'method': 'BiGP',
        'dataset': dataset,
        'lr': lr,
        'lanc_iter': lanc_iter,
        'pre_size': pre_size,
        'nu': nu,
        'order': order,
        'gpu': torch.cuda.get_device_name(device) if torch.cuda.is_available() else 'cpu',
    })

    data_iter = prepare_dataset(dataset, uci_data_dir=data_dir, device='cpu')
    _, train_x, train_y, val_x, val_y, test_x, test_y = next(data_iter)

    print(f'"{dataset}": D = {train_x.size(-1)}, Train N = {train_x.size(0)}, Val N = {val_x.size(0)} Test N = {test_x.size(0)}')

    wandb.config.update({
        'D': train_x.size(-1),
        'N_train': train_x.size(0),
        'N_test': test_x.size(0),
        'N_val': val_x.size(0)
    })

    train_model((train_x, train_y, val_x, val_y, test_x, test_y),
                order=order, epochs=epochs, lr=lr, lanc_iter=lanc_iter, pre_size=pre_size,
                n_inducing=n_inducing, seed=seed, p_epochs=p_epochs, nu=nu, min_noise=min_noise,
                log_int=log_int)


if __name__ == "__main__":
    os.environ['WANDB_MODE'] = os.environ.get('WANDB_MODE', default='dryrun')

    fire.Fire(main)
