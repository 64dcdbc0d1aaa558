import gc
from typing import Dict, List, Optional, Tuple

import einops
import numpy as np
import torch
from jaxtyping import Float, Int
from rich import print as rprint
from sae_lens import SAE
from torch import Tensor
from tqdm.auto import tqdm
from transformer_lens import ActivationCache, HookedTransformer

from sae_dashboard.sae_vis_data import SaeVisConfig
from sae_dashboard.transcoder_compatibility import TranscoderWrapper
from sae_dashboard.utils_fns import RollingCorrCoef, TopK

Arr = np.ndarray


class FeatureDataGenerator:
    """Runs the model + SAE over a token dataset in minibatches and collects everything the
    dashboard needs: per-feature activations, top-k examples, feature/neuron correlations and
    direct-logit-attribution vectors."""

    def __init__(
        self,
        cfg: SaeVisConfig,
        tokens: Int[Tensor, "batch seq"],
        model: HookedTransformer,
        encoder: SAE | TranscoderWrapper,
    ):
        self.cfg = cfg
        self.model = model
        self.encoder = encoder
        self.token_minibatches = self.batch_tokens(tokens)

    @torch.inference_mode()
    def batch_tokens(
        self, tokens: Int[Tensor, "batch seq"]
    ) -> list[Int[Tensor, "batch seq"]]:
        # Get tokens into minibatches, for the fwd pass
        token_minibatches = (
            (tokens,)
            if self.cfg.minibatch_size_tokens is None
            else tokens.split(self.cfg.minibatch_size_tokens)
        )
        token_minibatches = [tok.to(self.cfg.device) for tok in token_minibatches]

        return token_minibatches

    @torch.inference_mode()
    def get_feature_data(  # type: ignore
        self,
        feature_indices: list[int],
        progress: list[tqdm] | None = None,  # type: ignore
    ):
        # Create lists to store the feature activations & final values of the residual stream
        all_feat_acts = []
        all_dfa_acts = []
        all_resid_post = []

        # Create objects to store the data for computing rolling stats
        corrcoef_neurons = RollingCorrCoef()
        corrcoef_encoder = RollingCorrCoef(indices=feature_indices, with_self=True)

        # Get encoder & decoder directions
        feature_out_dir = self.encoder.W_dec[feature_indices]  # [feats d_autoencoder]
        feature_resid_dir = feature_out_dir  # [feats d_model]

        # ! Compute & concatenate together all feature activations & post-activation function values
        for i, minibatch in enumerate(self.token_minibatches):
            minibatch.to(self.cfg.device)
            model_activation_dict = self.get_model_acts(i, minibatch)
            primary_acts = model_activation_dict[self.model.activation_config.primary_hook_point].to(
                self.encoder.device
            )  # make sure acts are on the correct device

            # For TopK, compute all activations first, then select features
            feature_acts_all = self.encoder.encode(primary_acts)
            feature_acts = feature_acts_all[..., feature_indices].to(
                self.cfg.device
            )  # [batch seq feats]

            # Sparse storage: most entries are exactly zero, so keep them as COO until the end.
            all_feat_acts.append(feature_acts.to_sparse())

            if self.cfg.use_dfa and "blocks" in self.encoder.cfg.hook_name:
                dfa = self.compute_dfa_for_minibatch(
                    model_activation_dict, feature_indices
                )
                all_dfa_acts.append(dfa)

            # Update the CorrCoef object between feature activation & neurons
            if corrcoef_neurons is not None:
                corrcoef_neurons.update(
                    einops.rearrange(feature_acts, "batch seq feats -> feats (batch seq)"),
                    einops.rearrange(
                        model_activation_dict["post"], "batch seq d_mlp -> d_mlp (batch seq)"
                    ),
                )

            # Update the CorrCoef object between pairwise feature activations
            if corrcoef_encoder is not None:
                corrcoef_encoder.update(
                    einops.rearrange(feature_acts, "batch seq feats -> feats (batch seq)"),
                    einops.rearrange(
                        feature_acts_all, "batch seq d_hidden -> d_hidden (batch seq)"
                    ),
                )

            # Add these to the lists (we'll eventually concat)
            all_resid_post.append(model_activation_dict["resid_post"])

            # Update the 1st progress bar (fwd passes & getting sparse data)
            if progress is not None:
                progress[0].update(1)

            del model_activation_dict, feature_acts_all
            if self.cfg.verbose:
                rprint(
                    f"[dim]minibatch {i}: {torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated, "
                    f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB[/dim]"
                )
            gc.collect()
            torch.cuda.empty_cache()

        all_feat_acts = torch.cat([a.to_dense() for a in all_feat_acts], dim=0)
        all_resid_post = torch.cat(all_resid_post, dim=0)  # [batch seq d_model]
        all_dfa_acts = torch.cat(all_dfa_acts, dim=0) if all_dfa_acts else None

        return (
            all_feat_acts,
            all_dfa_acts,
            all_resid_post,
            feature_resid_dir,
            feature_out_dir,
            corrcoef_neurons,
            corrcoef_encoder,
        )

    @torch.inference_mode()
    def get_model_acts(
        self,
        minibatch_index: int,
        minibatch_tokens: torch.Tensor,
        use_cache: bool = True,
    ) -> Dict[str, torch.Tensor]:
        """
        A function that gets the model activations for a given minibatch of tokens.
        Uses np.memmap for efficient caching.
        """
        if self.cfg.cache_dir is not None:
            cache_path = self.cfg.cache_dir / f"model_activations_{minibatch_index}.pt"
            if use_cache and cache_path.exists():
                activation_dict = torch.load(cache_path, map_location=self.cfg.device)
            else:
                activation_dict = self.model.forward(
                    minibatch_tokens.to("cpu"), return_type="activations"
                )
                torch.save(activation_dict, cache_path)
        else:
            activation_dict = self.model.forward(
                minibatch_tokens.to("cpu"), return_type="activations"
            )

        return activation_dict

    @torch.inference_mode()
    def compute_dfa_for_minibatch(
        self,
        model_activation_dict: Dict[str, torch.Tensor],
        feature_indices: List[int],
    ) -> Float[Tensor, "batch seq seq feats"]:
        """Direct feature attribution from each source position through the attention layer."""
        v = model_activation_dict["v"]  # [batch src n_heads d_head]
        pattern = model_activation_dict["pattern"]  # [batch n_heads dest src]
        W_O = self.model.model.W_O[self.encoder.cfg.hook_layer]  # [n_heads d_head d_model]
        W_enc = self.encoder.W_enc[:, feature_indices]  # [d_model feats]

        per_src_head = einops.einsum(
            v, pattern, "batch src h d_head, batch h dest src -> batch dest src h d_head"
        )
        per_src = einops.einsum(
            per_src_head, W_O, "batch dest src h d_head, h d_head d_model -> batch dest src d_model"
        )
        return einops.einsum(
            per_src, W_enc, "batch dest src d_model, d_model feats -> batch dest src feats"
        )

    @torch.inference_mode()
    def compute_top_k(
        self, all_feat_acts: Float[Tensor, "batch seq feats"], k: int
    ) -> TopK:
        """Top-k activating (batch, seq) positions per feature, computed on the device in chunks
        of features to keep peak memory bounded."""
        n_feats = all_feat_acts.shape[-1]
        chunk = 64
        values, indices = [], []
        for start in range(0, n_feats, chunk):
            acts = all_feat_acts[..., start : start + chunk].flatten(0, 1)  # [(batch seq) chunk]
            v, idx = acts.topk(k, dim=0)
            values.append(v)
            indices.append(idx)
        return TopK(torch.cat(values, dim=1), torch.cat(indices, dim=1))
