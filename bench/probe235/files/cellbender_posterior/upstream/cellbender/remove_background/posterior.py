"""Posterior generation and regularization."""

import argparse
import gc
import logging
import os
from typing import Callable, Dict, Optional, Tuple, Union

import numpy as np
import pyro
import scipy.sparse as sp
import torch
from pyro import poutine
from tqdm import tqdm

import cellbender.remove_background.consts as consts
from cellbender.remove_background.checkpoint import load_from_checkpoint, unpack_tarball
from cellbender.remove_background.data.dataprep import DataLoader
from cellbender.remove_background.data.dataset import SingleCellRNACountsDataset
from cellbender.remove_background.estimation import (
    EstimationMethod,
    MultipleChoiceKnapsack,
    SingleSample,
    ThresholdCDF,
)
from cellbender.remove_background.model import RemoveBackgroundPyroModel
from cellbender.remove_background.sparse_utils import log_prob_sparse_to_dense

logger = logging.getLogger("cellbender")


def load_or_compute_posterior_and_save(
    dataset_obj: SingleCellRNACountsDataset,
    inferred_model: "RemoveBackgroundPyroModel",
    args: argparse.Namespace,
) -> "Posterior":
    """After inference, compute the full posterior noise count log probabilities.

    This will either load them from a file (if one exists) or compute them and
    save them to disk.
    """
    posterior_file = args.checkpoint_filename + "_posterior.h5"
    if os.path.exists(posterior_file):
        logger.info("Loading saved posterior from " + posterior_file)
        posterior = Posterior(
            dataset_obj=dataset_obj,
            vi_model=inferred_model,
            posterior_batch_size=args.posterior_batch_size,
            debug=args.debug,
        )
        if posterior.load(file=posterior_file):
            return posterior

    logger.info("Computing posterior noise count probabilities in mini-batches.")
    posterior = Posterior(
        dataset_obj=dataset_obj,
        vi_model=inferred_model,
        posterior_batch_size=args.posterior_batch_size,
        debug=args.debug,
    )
    posterior.cell_noise_count_posterior_coo()
    posterior.latents_map
    posterior.save(file=posterior_file)
    logger.info(f"Posterior saved to {posterior_file}")
    return posterior


class Posterior:
    """Posterior handles posteriors on latent variables and denoised counts.

    Args:
        dataset_obj: Dataset object.
        vi_model: Trained RemoveBackgroundPyroModel.
        posterior_batch_size: Number of barcodes in a minibatch, used to
            calculate posterior probabilities (memory hungry).
        counts_dtype: Data type of posterior count matrix.  Can be one of
            [np.uint32, np.float]
        float_threshold: For floating point count matrices, counts below
            this threshold will be set to zero, for the purposes of constructing
            a sparse matrix.  Unused if counts_dtype is np.uint32
        debug: True to print debugging messages (involves extra compute)

    Properties:
        full_noise_count_posterior_csr: The posterior noise log probability
            distribution, as a sparse matrix.
        latents_map: MAP estimate of latent variables

    Examples:

        posterior = Posterior()

    """

    def __init__(
        self,
        dataset_obj: SingleCellRNACountsDataset,
        vi_model: Optional[RemoveBackgroundPyroModel],
        posterior_batch_size: int = 128,
        debug: bool = False,
    ):
        self.dataset_obj = dataset_obj
        self.vi_model = vi_model
        if vi_model is not None:
            self.vi_model.eval()
            self.vi_model.encoder["z"].eval()
            self.vi_model.encoder["other"].eval()
            self.vi_model.decoder.eval()
        self.use_cuda = torch.cuda.is_available() if vi_model is None else vi_model.use_cuda
        self.device = "cuda" if self.use_cuda else "cpu"
        self.analyzed_gene_inds = (None if (dataset_obj is None) else dataset_obj.analyzed_gene_inds)
        self.count_matrix_shape = (None if (dataset_obj is None) else dataset_obj.data["matrix"].shape)
        self.barcode_inds = (None if (dataset_obj is None) else np.arange(0, self.count_matrix_shape[0]))
        self.dtype = np.uint32
        self.debug = debug
        self.batch_size = posterior_batch_size
        self._noise_count_posterior_coo = None
        self._noise_count_posterior_kwargs = None
        self._noise_count_posterior_coo_offsets = None
        self._noise_count_integer_csr = None
        self._noise_count_floating_csr = None
        self._latents = None
        self.index_converter = None

    def _get_mask(self, x: torch.Tensor) -> torch.Tensor:
        """Mask of nonzero entries, used to keep the posterior sparse."""
        return x > 0

    @torch.no_grad()
    def cell_noise_count_posterior_coo(self, n_samples: int = 20, y_map: bool = True) -> sp.coo_matrix:
        """Compute the full-blown posterior on noise counts for all cells,
        and store log probability in COO sparse format on CPU.

        Args:
            n_samples: Number of samples to use to compute the posterior log
                probability distribution.  Samples have high variance, so it is
                important to use at least 20.
            y_map: Use the MAP value for y (cell / no cell) when sampling, to
                avoid samples with a cell and samples without a cell.

        Returns:
            noise_count_posterior_coo: This sparse COO object contains all
                the information about the posterior noise count distribution.
        """
        # Compute posterior in mini-batches.
        logger.info("Computing posterior noise count probabilities in mini-batches.")
        torch.cuda.empty_cache()  # training leaves a lot of cached blocks behind

        # Dataloader for cells only.
        analyzed_bcs_only = True
        count_matrix = self.dataset_obj.get_count_matrix()  # analyzed barcodes
        cell_logic = (self.latents_map["p"] > consts.CELL_PROB_CUTOFF)

        # Raise an error if there are no cells found.
        if cell_logic.sum() == 0:
            logger.error(f"ERROR: Found zero droplets with posterior cell "
                         f"probability > {consts.CELL_PROB_CUTOFF}.  Please "
                         f"check the log for estimated priors on expected cells, "
                         f"total droplets included, UMI counts per cell, and "
                         f"UMI counts in empty droplets, and see whether any "
                         f"values seem off.  Consider setting --expected-cells "
                         f"and/or --total-droplets-included.")
            raise RuntimeError("Zero cells found!")

        dataloader_index_to_analyzed_bc_index = np.where(cell_logic)[0]
        cell_data_loader = DataLoader(
            count_matrix[cell_logic],
            empty_drop_dataset=None,
            batch_size=self.batch_size,
            fraction_empties=0.0,
            shuffle=False,
            use_cuda=self.use_cuda,
        )

        bcs = []  # barcode index
        genes = []  # gene index
        c = []  # noise count value
        c_offset = []  # noise count offsets from zero
        log_probs = []
        ind = 0
        n_minibatches = len(cell_data_loader)
        analyzed_gene_inds = torch.tensor(self.analyzed_gene_inds.copy())
        if self.use_cuda:
            analyzed_gene_inds = analyzed_gene_inds.to("cuda:0")

        logger.info("Performing posterior sampling for count matrix in mini-batches...")

        for i, data in enumerate(tqdm(cell_data_loader, total=n_minibatches)):

            if self.debug:
                logger.debug(f"Posterior minibatch [{i + 1} / {n_minibatches}]")

            noise_log_pdf, noise_offsets = self.noise_log_pdf(
                data=data,
                n_samples=n_samples,
                y_map=y_map,
            )

            # Get a tensor of barcode indices.
            s = noise_log_pdf.shape
            bcs_i_chunk = np.arange(ind, ind + s[0])
            bcs.append(torch.tensor(dataloader_index_to_analyzed_bc_index[bcs_i_chunk]).repeat_interleave(s[1] * s[2]))
            genes.append(analyzed_gene_inds.repeat(s[0]).repeat_interleave(s[2]).cpu())
            c.append(torch.arange(s[2]).repeat(s[0] * s[1]))
            c_offset.append(noise_offsets.flatten().repeat_interleave(s[2]).cpu())
            log_probs.append(noise_log_pdf.flatten().cpu())
            ind = ind + s[0]

            # keep GPU memory flat across minibatches
            del noise_log_pdf, noise_offsets, data
            if self.use_cuda and (i % 10 == 0):
                gc.collect()
                torch.cuda.empty_cache()

        logger.info("Finished posterior sampling.")

        # Convert the lists to numpy arrays.
        log_probs = torch.cat(log_probs).numpy()
        c = torch.cat(c).numpy().astype(np.uint32)
        barcodes = torch.cat(bcs).numpy().astype(np.uint64)
        genes = torch.cat(genes).numpy().astype(np.uint64)
        c_offset = torch.cat(c_offset).numpy().astype(np.uint32)

        # Translate (barcode, gene) inds to 'm' format index.
        m = self.index_converter.get_m_indices(barcode_inds=barcodes, gene_inds=genes)

        # Put the counts into a sparse csr_matrix.
        self._noise_count_posterior_coo = sp.coo_matrix(
            (log_probs, (m, c)),
            shape=[np.prod(self.count_matrix_shape, dtype=np.uint64), n_samples],
        )
        noise_offset_dict = dict(zip(m, c_offset))
        self._noise_count_posterior_coo_offsets = noise_offset_dict
        return self._noise_count_posterior_coo

    @torch.no_grad()
    def noise_log_pdf(
        self,
        data: torch.Tensor,
        n_samples: int = 1,
        y_map: bool = True,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Compute the posterior noise-count probability density function
        using n_samples samples.  This is a big matrix [batch, genes, n_samples]

        Args:
            data: Count matrix (dense) on the device.
            n_samples: Number of samples to draw from the guide.
            y_map: True to use the MAP value of y (cell probability)

        Returns:
            noise_logpdf: Log probability of each noise count value, summed over
                samples, of shape [batch, genes, max_noise_count]
            offsets: Minimum noise count per (barcode, gene)
        """
        # Sample from the guide and run the model with those samples.
        guide_trace = poutine.trace(self.vi_model.guide).get_trace(x=data)
        if y_map:
            guide_trace.nodes["y"]["value"] = (guide_trace.nodes["y"]["fn"].probs > 0.5).float()
        model_trace = poutine.trace(poutine.replay(self.vi_model.model, guide_trace)).get_trace(x=data)

        mu = model_trace.nodes["obs"]["fn"].base_dist.mu
        lam = model_trace.nodes["obs"]["fn"].base_dist.lam
        alpha = model_trace.nodes["obs"]["fn"].base_dist.alpha

        max_n = int(data.max().item()) + 1
        noise_counts = torch.arange(max_n, device=data.device).float()
        log_pdf = torch.distributions.Poisson(lam.unsqueeze(-1)).log_prob(noise_counts)
        log_pdf = log_pdf + torch.distributions.NegativeBinomial(
            total_count=alpha.unsqueeze(-1), logits=(mu / alpha).log().unsqueeze(-1)
        ).log_prob((data.unsqueeze(-1) - noise_counts).clamp(min=0))
        offsets = torch.zeros_like(data, dtype=torch.long)
        return log_pdf, offsets

    @property
    def latents_map(self) -> Dict[str, np.ndarray]:
        if self._latents is None:
            self._latents = self._get_latents_map()
        return self._latents

    @torch.no_grad()
    def _get_latents_map(self) -> Dict[str, np.ndarray]:
        """Calculate the encoded latent variables."""
        data_loader = self.dataset_obj.get_dataloader(
            use_cuda=self.use_cuda,
            analyzed_bcs_only=True,
            batch_size=500,
            shuffle=False,
        )
        z = np.zeros((len(data_loader.dataset), self.vi_model.encoder["z"].output_dim))
        d = np.zeros(len(data_loader.dataset))
        p = np.zeros(len(data_loader.dataset))
        epsilon = np.zeros(len(data_loader.dataset))

        for i, data in enumerate(data_loader):
            enc = self.vi_model.encoder(x=data, chi_ambient=pyro.param("chi_ambient").detach(), cell_prior_log=self.vi_model.d_cell_loc_prior)
            ind = i * data_loader.batch_size
            z[ind:(ind + data.shape[0]), :] = enc["z"]["loc"].detach().cpu().numpy()
            d[ind:(ind + data.shape[0])] = enc["d_loc"].detach().exp().cpu().numpy()
            p[ind:(ind + data.shape[0])] = enc["p_y"].detach().sigmoid().cpu().numpy()
            epsilon[ind:(ind + data.shape[0])] = enc["epsilon"].detach().cpu().numpy()

        return {"z": z, "d": d, "p": p, "epsilon": epsilon}
