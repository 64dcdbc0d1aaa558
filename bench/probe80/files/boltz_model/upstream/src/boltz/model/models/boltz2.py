import gc
from typing import Any, Optional

import numpy as np
import torch
import torch._dynamo
from pytorch_lightning import Callback, LightningModule
from torch import Tensor, nn
from torchmetrics import MeanMetric

import boltz.model.layers.initialize as init
from boltz.data import const
from boltz.data.mol import minimum_lddt_symmetry_coords
from boltz.model.layers.pairformer import PairformerModule
from boltz.model.loss.bfactor import bfactor_loss_fn
from boltz.model.loss.confidencev2 import confidence_loss
from boltz.model.loss.distogramv2 import distogram_loss
from boltz.model.modules.confidencev2 import ConfidenceModule
from boltz.model.modules.diffusion_conditioning import DiffusionConditioning
from boltz.model.modules.diffusionv2 import AtomDiffusion
from boltz.model.modules.encodersv2 import RelativePositionEncoder
from boltz.model.modules.trunkv2 import (
    BFactorModule,
    ContactConditioning,
    DistogramModule,
    InputEmbedder,
    MSAModule,
    TemplateV2Module,
)
from boltz.model.optim.ema import EMA
from boltz.model.optim.scheduler import AlphaFoldLRScheduler


class Boltz2(LightningModule):
    """Boltz2 model."""

    def __init__(
        self,
        atom_s: int,
        atom_z: int,
        token_s: int,
        token_z: int,
        num_bins: int,
        training_args: dict[str, Any],
        validation_args: dict[str, Any],
        embedder_args: dict[str, Any],
        msa_args: dict[str, Any],
        pairformer_args: dict[str, Any],
        score_model_args: dict[str, Any],
        diffusion_process_args: dict[str, Any],
        diffusion_loss_args: dict[str, Any],
        confidence_model_args: Optional[dict[str, Any]] = None,
        atom_feature_dim: int = 128,
        confidence_prediction: bool = True,
        ema: bool = False,
        ema_decay: float = 0.999,
        min_dist: float = 2.0,
        max_dist: float = 22.0,
        predict_args: Optional[dict[str, Any]] = None,
        steering_args: Optional[dict[str, Any]] = None,
        use_kernels: bool = False,
        compile_pairformer: bool = False,
        compile_structure: bool = False,
        compile_confidence: bool = False,
        bond_type_feature: bool = False,
        **kwargs,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["validators"])

        self.training_args = training_args
        self.validation_args = validation_args
        self.diffusion_loss_args = diffusion_loss_args
        self.predict_args = predict_args
        self.steering_args = steering_args
        self.use_kernels = use_kernels
        self.confidence_prediction = confidence_prediction
        self.num_bins = num_bins
        self.min_dist = min_dist
        self.max_dist = max_dist

        # EMA
        self.use_ema = ema
        self.ema_decay = ema_decay

        # Input embeddings
        full_embedder_args = {
            "atom_s": atom_s,
            "atom_z": atom_z,
            "token_s": token_s,
            "token_z": token_z,
            "atoms_per_window_queries": 32,
            "atoms_per_window_keys": 128,
            "atom_feature_dim": atom_feature_dim,
            **embedder_args,
        }
        self.input_embedder = InputEmbedder(**full_embedder_args)

        self.s_init = nn.Linear(token_s, token_s, bias=False)
        self.z_init_1 = nn.Linear(token_s, token_z, bias=False)
        self.z_init_2 = nn.Linear(token_s, token_z, bias=False)
        self.rel_pos = RelativePositionEncoder(token_z, fix_sym_check=True, cyclic_pos_enc=True)
        self.token_bonds = nn.Linear(1, token_z, bias=False)
        self.contact_conditioning = ContactConditioning(token_z=token_z, cutoff_min=4.0, cutoff_max=20.0)

        # Normalization layers
        self.s_norm = nn.LayerNorm(token_s)
        self.z_norm = nn.LayerNorm(token_z)

        # Recycling projections
        self.s_recycle = nn.Linear(token_s, token_s, bias=False)
        self.z_recycle = nn.Linear(token_z, token_z, bias=False)
        init.gating_init_(self.s_recycle.weight)
        init.gating_init_(self.z_recycle.weight)

        # Pairwise stack
        self.msa_module = MSAModule(token_z=token_z, token_s=token_s, **msa_args)
        self.pairformer_module = PairformerModule(token_s, token_z, **pairformer_args)
        if compile_pairformer:
            # Big models hit the default cache limit (8)
            torch._dynamo.config.cache_size_limit = 512
            torch._dynamo.config.accumulated_cache_size_limit = 512
            self.pairformer_module = torch.compile(self.pairformer_module, dynamic=False, fullgraph=False)

        # Output modules
        self.diffusion_conditioning = DiffusionConditioning(
            token_s=token_s,
            token_z=token_z,
            atom_s=atom_s,
            atom_z=atom_z,
            atoms_per_window_queries=32,
            atoms_per_window_keys=128,
            atom_encoder_depth=score_model_args["atom_encoder_depth"],
            atom_encoder_heads=score_model_args["atom_encoder_heads"],
            token_transformer_depth=score_model_args["token_transformer_depth"],
            token_transformer_heads=score_model_args["token_transformer_heads"],
            atom_decoder_depth=score_model_args["atom_decoder_depth"],
            atom_decoder_heads=score_model_args["atom_decoder_heads"],
            atom_feature_dim=atom_feature_dim,
            conditioning_transition_layers=score_model_args["conditioning_transition_layers"],
        )

        self.structure_module = AtomDiffusion(
            score_model_args={"token_s": token_s, "atom_s": atom_s, **score_model_args},
            compile_score=compile_structure,
            **diffusion_process_args,
        )
        self.distogram_module = DistogramModule(token_z, num_bins)

        if self.confidence_prediction:
            self.confidence_module = ConfidenceModule(token_s, token_z, compile_pairformer=compile_confidence,
                                                      **(confidence_model_args or {}))

        self.train_confidence_loss_logger = MeanMetric()

    def forward(
        self,
        feats: dict[str, Tensor],
        recycling_steps: int = 0,
        num_sampling_steps: Optional[int] = None,
        multiplicity_diffusion_train: int = 1,
        diffusion_samples: int = 1,
        max_parallel_samples: Optional[int] = None,
        run_confidence_sequentially: bool = False,
    ) -> dict[str, Tensor]:
        with torch.set_grad_enabled(self.training and self.structure_prediction_training):
            s_inputs = self.input_embedder(feats)

            # Initialize the sequence embeddings
            s_init = self.s_init(s_inputs)

            # Initialize pairwise embeddings
            z_init = self.z_init_1(s_inputs)[:, :, None] + self.z_init_2(s_inputs)[:, None, :]
            relative_position_encoding = self.rel_pos(feats)
            z_init = z_init + relative_position_encoding
            z_init = z_init + self.token_bonds(feats["token_bonds"].float())
            z_init = z_init + self.contact_conditioning(feats)

            # Perform rounds of the pairwise stack
            s = torch.zeros_like(s_init)
            z = torch.zeros_like(z_init)

            # Compute pairwise mask
            mask = feats["token_pad_mask"].float()
            pair_mask = mask[:, :, None] * mask[:, None, :]

            for i in range(recycling_steps + 1):
                with torch.set_grad_enabled(self.training and (i == recycling_steps)):
                    # Issue with unused parameters in autocast
                    if self.training and (i == recycling_steps) and torch.is_autocast_enabled():
                        torch.clear_autocast_cache()

                    # Apply recycling
                    s = s_init + self.s_recycle(self.s_norm(s))
                    z = z_init + self.z_recycle(self.z_norm(z))

                    # Compute pairwise stack
                    z = z + self.msa_module(z, s_inputs, feats, use_kernels=self.use_kernels)

                    s, z = self.pairformer_module(s, z, mask=mask, pair_mask=pair_mask, use_kernels=self.use_kernels)

            pdistogram = self.distogram_module(z)
            dict_out = {"pdistogram": pdistogram, "s": s, "z": z}

        q, c, to_keys, atom_enc_bias, atom_dec_bias, token_trans_bias = self.diffusion_conditioning(
            s_trunk=s, z_trunk=z, relative_position_encoding=relative_position_encoding, feats=feats,
        )
        diffusion_conditioning = {
            "q": q, "c": c, "to_keys": to_keys,
            "atom_enc_bias": atom_enc_bias, "atom_dec_bias": atom_dec_bias, "token_trans_bias": token_trans_bias,
        }

        with torch.autocast("cuda", enabled=False):
            struct_out = self.structure_module.sample(
                s_trunk=s.float(),
                s_inputs=s_inputs.float(),
                feats=feats,
                num_sampling_steps=num_sampling_steps,
                atom_mask=feats["atom_pad_mask"].float(),
                multiplicity=diffusion_samples,
                max_parallel_samples=max_parallel_samples,
                steering_args=self.steering_args,
                diffusion_conditioning=diffusion_conditioning,
            )
            dict_out.update(struct_out)

        if self.confidence_prediction:
            dict_out.update(
                self.confidence_module(
                    s_inputs=s_inputs.detach(),
                    s=s.detach(),
                    z=z.detach(),
                    x_pred=dict_out["sample_atom_coords"].detach(),
                    feats=feats,
                    pred_distogram_logits=dict_out["pdistogram"][:, :, :, 0].detach(),
                    multiplicity=diffusion_samples,
                    run_sequentially=run_confidence_sequentially,
                    use_kernels=self.use_kernels,
                )
            )
        return dict_out

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        # Sample recycling steps
        recycling_steps = np.random.randint(0, self.training_args.recycling_steps + 1)

        out = self(
            feats=batch,
            recycling_steps=recycling_steps,
            num_sampling_steps=self.training_args.sampling_steps,
            multiplicity_diffusion_train=self.training_args.diffusion_multiplicity,
            diffusion_samples=self.training_args.diffusion_samples,
        )

        disto_loss, _ = distogram_loss(out, batch)
        diffusion_loss_dict = self.structure_module.compute_loss(
            batch, out, multiplicity=self.training_args.diffusion_multiplicity, **self.diffusion_loss_args,
        )
        loss = self.training_args.diffusion_loss_weight * diffusion_loss_dict["loss"] \
            + self.training_args.distogram_loss_weight * disto_loss

        self.log("train/distogram_loss", disto_loss)
        self.log("train/diffusion_loss", diffusion_loss_dict["loss"])
        self.log("train/loss", loss)
        self.log("train/max_mem_gib", torch.cuda.max_memory_allocated() / 1024 ** 3)
        return loss

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        norms = [p.grad.detach().norm(2) for p in self.parameters() if p.grad is not None]
        if norms:
            self.log("train/grad_norm", torch.stack(norms).norm(2), prog_bar=False)

    def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
        try:
            out = self(
                batch,
                recycling_steps=self.predict_args["recycling_steps"],
                num_sampling_steps=self.predict_args["sampling_steps"],
                diffusion_samples=self.predict_args["diffusion_samples"],
                max_parallel_samples=self.predict_args["max_parallel_samples"],
                run_confidence_sequentially=True,
            )
            pred_dict = {"exception": False}
            pred_dict["masks"] = batch["atom_pad_mask"]
            pred_dict["coords"] = out["sample_atom_coords"]
            if self.confidence_prediction:
                pred_dict["pde"] = out["pde"]
                pred_dict["plddt"] = out["plddt"]
                pred_dict["confidence_score"] = (4 * out["complex_plddt"] + (
                    out["iptm"] if not torch.allclose(out["iptm"], torch.zeros_like(out["iptm"])) else out["ptm"]
                )) / 5
                pred_dict["ptm"] = out["ptm"]
                pred_dict["iptm"] = out["iptm"]
            return pred_dict

        except RuntimeError as e:  # catch out of memory exceptions
            if "out of memory" in str(e):
                print("| WARNING: ran out of memory, skipping batch")
                torch.cuda.empty_cache()
                gc.collect()
                return {"exception": True}
            else:
                raise

    def configure_optimizers(self) -> torch.optim.Optimizer:
        """Configure the optimizer."""
        param_dict = dict(self.named_parameters())

        if self.structure_prediction_training:
            all_parameter_names = [pn for pn, p in self.named_parameters()]
        else:
            all_parameter_names = [pn for pn, p in self.named_parameters() if "confidence_module" in pn]

        optimizer = torch.optim.Adam(
            [param_dict[pn] for pn in all_parameter_names],
            betas=(self.training_args.adam_beta_1, self.training_args.adam_beta_2),
            eps=self.training_args.adam_eps,
            lr=self.training_args.base_lr,
        )
        if self.training_args.lr_scheduler == "af3":
            scheduler = AlphaFoldLRScheduler(
                optimizer,
                base_lr=self.training_args.base_lr,
                max_lr=self.training_args.max_lr,
                warmup_no_steps=self.training_args.lr_warmup_no_steps,
                start_decay_after_n_steps=self.training_args.lr_start_decay_after_n_steps,
                decay_every_n_steps=self.training_args.lr_decay_every_n_steps,
                decay_factor=self.training_args.lr_decay_factor,
            )
            return [optimizer], [{"scheduler": scheduler, "interval": "step"}]

        return optimizer

    def configure_callbacks(self) -> list[Callback]:
        """Configure model callbacks."""
        return [EMA(self.ema_decay)] if self.use_ema else []
