"""Definition of the model used for remove-background, in pyro.

Inference proceeds via stochastic variational inference.  The guide uses a
composite encoder (z + cell probability + droplet efficiency) and the model
describes each droplet's counts as a mixture of ambient RNA and (optionally)
cell RNA, with a negative binomial or Poisson observation model.
"""

import logging
from typing import Dict, List, Optional, Union

import numpy as np
import pyro
import pyro.distributions as dist
import torch
from pyro.distributions.torch_distribution import TorchDistributionMixin
from pyro.infer import config_enumerate
from pyro.nn.module import PyroModule, pyro_method
from torch.distributions import constraints
from torch.distributions.utils import broadcast_all, logits_to_probs, probs_to_logits

import cellbender.remove_background.consts as consts
from cellbender.remove_background.distributions.NegativeBinomialPoissonConv import (
    NegativeBinomialPoissonConv as NBPC,
)
from cellbender.remove_background.distributions.NullDist import NullDist
from cellbender.remove_background.exceptions import NanException
from cellbender.remove_background.vae import encoder as encoder_module
from cellbender.remove_background.vae.decoder import Decoder

logger = logging.getLogger("cellbender")


class RemoveBackgroundPyroModel(PyroModule):
    """Class that contains the model and guide used for variational inference.

    Args:
        model_type: Which generative model to use.  Choice of
            ['naive', 'simple', 'ambient', 'swapping', 'full'].
        encoder: An instance of an encoder object.  Can be a CompositeEncoder.
        decoder: An instance of a decoder object.
        dataset_obj_priors: Dict of priors computed from the dataset.
        n_analyzed_genes: Number of genes in the analyzed subset.
        n_droplets: Number of droplets in the analyzed subset.
        empty_UMI_threshold: UMI count below which droplets are surely empty.
        log_counts_crossover: Log UMI count halfway between cells and empties.
        use_cuda: Will use GPU if True.
        analyzed_gene_names: Here only so that when we save a checkpoint, if we
            ever want to look at it, we will know which genes are which.
        phi_loc_prior: Mean of gamma distribution for global overdispersion.
        phi_scale_prior: Scale of gamma distribution for global overdispersion.
        rho_alpha_prior: Param of beta distribution for swapping fraction.
        rho_beta_prior: Param of beta distribution for swapping fraction.
        use_exact_log_prob: False to use an approximate log_prob computation,
            which can be much faster on GPU.

    Attributes:
        All the above, plus
        device: Device on which model operates.  Choice of ['cuda', 'cpu'].
        loss: Record of the ELBO loss during training.
    """

    def __init__(
        self,
        model_type: str,
        encoder: Union[encoder_module.EncodeZ, encoder_module.CompositeEncoder],
        decoder: Decoder,
        dataset_obj_priors: Dict[str, float],
        n_analyzed_genes: int,
        n_droplets: int,
        empty_UMI_threshold: int,
        log_counts_crossover: float,
        analyzed_gene_names: np.ndarray,
        use_cuda: bool,
        phi_loc_prior: float = consts.PHI_LOC_PRIOR,
        phi_scale_prior: float = consts.PHI_SCALE_PRIOR,
        rho_alpha_prior: float = consts.RHO_ALPHA_PRIOR,
        rho_beta_prior: float = consts.RHO_BETA_PRIOR,
        epsilon_prior: float = consts.EPSILON_PRIOR,
        use_exact_log_prob: bool = consts.USE_EXACT_LOG_PROB,
    ):
        super().__init__()

        self.model_type = model_type
        self.include_empties = True
        if self.model_type == "simple":
            self.include_empties = False
        self.include_rho = False
        if (self.model_type == "full") or (self.model_type == "swapping"):
            self.include_rho = True

        self.n_genes = n_analyzed_genes
        self.n_droplets = n_droplets
        self.analyzed_gene_names = analyzed_gene_names
        self.z_dim = decoder.input_dim
        self.encoder = encoder
        self.decoder = decoder
        self.use_exact_log_prob = use_exact_log_prob
        self.loss = {"train": {"epoch": [], "elbo": []},
                     "test": {"epoch": [], "elbo": []},
                     "learning_rate": {"epoch": [], "value": []}}

        # Determine whether we are working on a GPU.
        if use_cuda:
            # Calling cuda() here will put all the parameters of
            # the encoder and decoder networks into GPU memory.
            self.cuda()
            try:
                for key, value in self.encoder.items():
                    value.cuda()
            except KeyError:
                pass
            self.device = "cuda"
        else:
            self.device = "cpu"
        self.use_cuda = use_cuda

        # Priors
        assert dataset_obj_priors["d_std"] > 0, \
            f"Issue with prior: d_std is {dataset_obj_priors['d_std']}, but should be > 0."
        assert dataset_obj_priors["cell_counts"] > 0, \
            f"Issue with prior: cell_counts is {dataset_obj_priors['cell_counts']}, but should be > 0."

        self.d_cell_loc_prior = torch.tensor(np.log1p(dataset_obj_priors["cell_counts"])).float().to(self.device)
        self.d_cell_scale_prior = torch.tensor(dataset_obj_priors["d_std"]).to(self.device)
        self.z_loc_prior = torch.zeros(torch.Size([self.z_dim])).to(self.device)
        self.z_scale_prior = torch.ones(torch.Size([self.z_dim])).to(self.device)
        self.epsilon_prior = torch.tensor(epsilon_prior).to(self.device)

        self.phi_loc_prior = phi_loc_prior * torch.ones(torch.Size([])).to(self.device)
        self.phi_scale_prior = phi_scale_prior * torch.ones(torch.Size([])).to(self.device)
        self.phi_conc_prior = ((phi_loc_prior ** 2 / phi_scale_prior ** 2) * torch.ones(torch.Size([])).to(self.device))
        self.phi_rate_prior = ((phi_loc_prior / phi_scale_prior ** 2) * torch.ones(torch.Size([])).to(self.device))

        if self.model_type != "simple":
            self.d_empty_loc_prior = torch.tensor(np.log1p(dataset_obj_priors["empty_counts"])).float().to(self.device)
            self.d_empty_scale_prior = torch.tensor(dataset_obj_priors["empty_count_std"]).to(self.device)
            self.p_logit_prior = torch.tensor(dataset_obj_priors["logit_cell_prob"]).float().to(self.device)
            self.empty_UMI_threshold = torch.tensor(empty_UMI_threshold).float().to(self.device)
            self.log_counts_crossover = torch.tensor(log_counts_crossover).float().to(self.device)

            # Ambient expression profile as a global parameter, initialised from empties.
            self.chi_ambient_init = dataset_obj_priors["chi_ambient"].to(self.device)

        self.rho_alpha_prior = rho_alpha_prior * torch.ones(torch.Size([])).to(self.device)
        self.rho_beta_prior = rho_beta_prior * torch.ones(torch.Size([])).to(self.device)

    def _calculate_mu(self, epsilon, d_cell, chi, y=None, rho=None):
        """Calculate mean expression for each droplet (cell + ambient)."""
        mu = (y.unsqueeze(-1) * epsilon.unsqueeze(-1) * d_cell.unsqueeze(-1) * chi) if y is not None else 0.0
        return mu

    def _calculate_lambda(self, epsilon, chi_ambient, d_empty, y=None, d_cell=None, rho=None, chi_bar=None):
        """Calculate the Poisson rate of background counts for each droplet."""
        if self.include_rho:
            lam = (epsilon.unsqueeze(-1) * d_empty.unsqueeze(-1) * chi_ambient.unsqueeze(0)
                   + rho.unsqueeze(-1) * d_cell.unsqueeze(-1) * chi_bar)
        else:
            lam = epsilon.unsqueeze(-1) * d_empty.unsqueeze(-1) * chi_ambient.unsqueeze(0)
        return lam

    @config_enumerate(default="parallel")
    def model(self, x: torch.Tensor):
        """Data likelihood model.

        Args:
            x: Mini-batch of data. Barcodes are rows, genes are columns.
        """
        # Register the decoder with pyro.
        pyro.module("decoder", self.decoder, update_module_params=True)

        # Register the hyperparameter for ambient gene expression.
        if self.include_empties:
            chi_ambient = pyro.param("chi_ambient", self.chi_ambient_init * torch.ones(torch.Size([])).to(self.device),
                                     constraint=constraints.simplex)
        else:
            chi_ambient = None

        # Sample phi from Gamma prior.
        phi = pyro.sample("phi", dist.Gamma(self.phi_conc_prior, self.phi_rate_prior))

        # Happens in parallel for each data point (cell barcode) independently:
        with pyro.plate("data", x.shape[0], use_cuda=self.use_cuda, device=self.device):

            # Sample z from prior.
            z = pyro.sample("z", dist.Normal(loc=self.z_loc_prior, scale=self.z_scale_prior)
                            .expand_by([x.size(0)]).to_event(1))

            # Decode the latent code z to get fractional gene expression, chi.
            chi = self.decoder(z)

            # Sample d_cell based on priors.
            d_cell = pyro.sample("d_cell", dist.LogNormal(loc=self.d_cell_loc_prior, scale=self.d_cell_scale_prior)
                                 .expand_by([x.size(0)]))

            # Sample swapping fraction rho.
            if self.include_rho:
                rho = pyro.sample("rho", dist.Beta(self.rho_alpha_prior, self.rho_beta_prior).expand_by([x.size(0)]))
            else:
                rho = None

            # Sample epsilon based on priors.
            epsilon = pyro.sample("epsilon", dist.Gamma(concentration=self.epsilon_prior, rate=self.epsilon_prior)
                                  .expand_by([x.size(0)]))

            # If modelling empty droplets:
            if self.include_empties:
                d_empty = pyro.sample("d_empty", dist.LogNormal(loc=self.d_empty_loc_prior,
                                                                scale=self.d_empty_scale_prior).expand_by([x.size(0)]))
                p_logit_prior = self.p_logit_prior * torch.ones(x.size(0)).to(self.device)
                y = pyro.sample("y", dist.Bernoulli(logits=p_logit_prior))

                mu_cell = self._calculate_mu(epsilon=epsilon, d_cell=d_cell, chi=chi, y=y, rho=rho)
                lam = self._calculate_lambda(epsilon=epsilon, chi_ambient=chi_ambient, d_empty=d_empty,
                                             y=y, d_cell=d_cell, rho=rho, chi_bar=chi_ambient)

                c = pyro.sample("obs", NBPC(mu=mu_cell + consts.POISSON_EPS_SAFEGAURD,
                                            alpha=phi.unsqueeze(-1).pow(-1),
                                            lam=lam + consts.POISSON_EPS_SAFEGAURD,
                                            use_exact_log_prob=self.use_exact_log_prob).to_event(1),
                                obs=x.reshape(-1, self.n_genes))
            else:
                mu = chi * d_cell.unsqueeze(-1) * epsilon.unsqueeze(-1)
                c = pyro.sample("obs", dist.NegativeBinomial(total_count=phi.pow(-1),
                                                             logits=(mu * phi.unsqueeze(-1) + 1e-10).log()).to_event(1),
                                obs=x.reshape(-1, self.n_genes))

    def store_vars(self, x, params):
        """Temp method to store params for inspection during debugging."""
        if x.is_cuda:
            x = x.cpu()
        return {k: v.detach().cpu().numpy() for k, v in params.items()}
