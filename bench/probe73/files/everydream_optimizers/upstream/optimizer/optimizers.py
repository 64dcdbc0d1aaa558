"""
Copyright [2022-2023] Victor C Hall

Licensed under the GNU Affero General Public License;
You may not use this code except in compliance with the License.
You may obtain a copy of the License at

    https://www.gnu.org/licenses/agpl-3.0.en.html
"""

import json
import logging
import math
import os
from itertools import chain

import torch
from colorama import Fore, Style
from torch.cuda.amp import GradScaler
from diffusers.optimization import get_scheduler

BETAS_DEFAULT = [0.9, 0.999]
EPSILON_DEFAULT = 1e-8
WEIGHT_DECAY_DEFAULT = 0.01
LR_DEFAULT = 1e-6
OPTIMIZER_TE_STATE_FILENAME = "optimizer_te.pt"
OPTIMIZER_UNET_STATE_FILENAME = "optimizer_unet.pt"


class EveryDreamOptimizer:
    """
    Wrapper to manage optimizers
    resume_ckpt_path: path to resume checkpoint, will try to load state (.pt) files if they exist
    optimizer_config: config for the optimizers
    text_encoder: text encoder model parameters
    unet: unet model parameters
    """

    def __init__(self, args, optimizer_config, text_encoder, unet, epoch_len, log_writer=None):
        del optimizer_config["doc"]
        print(f"\n raw optimizer_config:")
        print(optimizer_config)
        self.epoch_len = epoch_len
        self.unet = unet  # needed for weight norm logging, unet.parameters() has to be called again, Diffusers quirk
        self.log_writer = log_writer
        self.te_config, self.base_config = self.get_final_optimizer_configs(args, optimizer_config)
        self.te_freeze_config = optimizer_config.get("text_encoder_freezing", {})
        print(f" Final unet optimizer config:")
        print(self.base_config)
        print(f" Final text encoder optimizer config:")
        print(self.te_config)

        self.grad_accum = args.grad_accum
        self.clip_grad_norm = args.clip_grad_norm
        self.apply_grad_scaler_step_tweaks = optimizer_config.get("apply_grad_scaler_step_tweaks", True)
        self.log_grad_norm = optimizer_config.get("log_grad_norm", True)

        self.text_encoder_params = self._apply_text_encoder_freeze(text_encoder)
        self.unet_params = unet.parameters()

        with torch.no_grad():
            log_action = lambda n, label: logging.info(f"{Fore.LIGHTBLUE_EX} {label} weight normal: {n:.1f}{Style.RESET_ALL}")
            self._log_weight_normal(text_encoder.text_model.encoder.layers.parameters(), "text encoder", log_action)
            self._log_weight_normal(unet.parameters(), "unet", log_action)

        self.optimizers = []
        self.optimizer_te, self.optimizer_unet = self.create_optimizers(args, self.text_encoder_params, self.unet_params)
        self.optimizers.append(self.optimizer_te) if self.optimizer_te is not None else None
        self.optimizers.append(self.optimizer_unet) if self.optimizer_unet is not None else None

        self.lr_schedulers = []
        schedulers = self.create_lr_schedulers(args, optimizer_config)
        self.lr_schedulers.extend(schedulers)

        self.load(args.resume_ckpt)

        self.scaler = GradScaler(
            enabled=args.amp,
            init_scale=2**17.5,
            growth_factor=2,
            backoff_factor=1.0 / 2,
            growth_interval=25,
        )

        logging.info(f" Grad scaler enabled: {self.scaler.is_enabled()} (amp mode)")

    def _log_gradient_normal(self, parameters, label: str, log_writer, global_step):
        total_norm = self._get_norm(parameters, lambda p: p.grad)
        log_writer.add_scalar(label, total_norm, global_step)

    def _log_weight_normal(self, parameters, label: str, log_action=None):
        total_norm = self._get_norm(parameters, lambda p: p.data)
        log_action(total_norm, label)

    def _get_norm(self, parameters, param_type):
        total_norm = 0
        for p in parameters:
            param = param_type(p)
            total_norm += self._calculate_norm(param, p)
        total_norm = total_norm ** (1.0 / 2)
        return total_norm

    def _calculate_norm(self, param, p):
        if param is not None:
            return param.norm(2).item() ** 2
        else:
            return 0.0

    def step(self, loss, step, global_step):
        self.scaler.scale(loss).backward()

        if ((global_step + 1) % self.grad_accum == 0) or (step == self.epoch_len - 1):
            if self.clip_grad_norm is not None:
                for optimizer in self.optimizers:
                    self.scaler.unscale_(optimizer)

                torch.nn.utils.clip_grad_norm_(parameters=self.unet.parameters(), max_norm=self.clip_grad_norm)
                torch.nn.utils.clip_grad_norm_(parameters=self.text_encoder_params, max_norm=self.clip_grad_norm)
            for optimizer in self.optimizers:
                self.scaler.step(optimizer)

            self.scaler.update()
            if self.log_grad_norm and self.log_writer is not None:
                self._log_gradient_normal(self.unet.parameters(), "optimizer/unet_grad_norm", self.log_writer, global_step)
            self._zero_grad(set_to_none=True)

        for scheduler in self.lr_schedulers:
            scheduler.step()

    def _zero_grad(self, set_to_none=False):
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=set_to_none)

    def get_scale(self):
        return self.scaler.get_scale()

    def get_unet_lr(self):
        return self.optimizer_unet.param_groups[0]["lr"] if self.optimizer_unet is not None else 0

    def get_textenc_lr(self):
        return self.optimizer_te.param_groups[0]["lr"] if self.optimizer_te is not None else 0

    def save(self, ckpt_path: str):
        """
        Saves the optimizer states to path
        """
        self._save_optimizer(self.optimizer_te, os.path.join(ckpt_path, OPTIMIZER_TE_STATE_FILENAME)) if self.optimizer_te is not None else None
        self._save_optimizer(self.optimizer_unet, os.path.join(ckpt_path, OPTIMIZER_UNET_STATE_FILENAME)) if self.optimizer_unet is not None else None

    def load(self, ckpt_path: str):
        """
        Loads the optimizer states from path
        """
        te_optimizer_state_path = os.path.join(ckpt_path, OPTIMIZER_TE_STATE_FILENAME)
        unet_optimizer_state_path = os.path.join(ckpt_path, OPTIMIZER_UNET_STATE_FILENAME)
        if os.path.exists(te_optimizer_state_path) and self.optimizer_te is not None:
            self._load_optimizer(self.optimizer_te, te_optimizer_state_path)
        if os.path.exists(unet_optimizer_state_path) and self.optimizer_unet is not None:
            self._load_optimizer(self.optimizer_unet, unet_optimizer_state_path)

    @staticmethod
    def _save_optimizer(optimizer, path: str):
        torch.save(optimizer.state_dict(), path)

    @staticmethod
    def _load_optimizer(optimizer, path: str):
        try:
            optimizer.load_state_dict(torch.load(path, map_location="cuda"))
            logging.info(f" Loaded optimizer state from {path}")
        except Exception as e:
            logging.warning(f"{Fore.LIGHTYELLOW_EX}**Failed to load optimizer state from {path}, optimizer state will not be loaded, \n * Exception: {e}{Style.RESET_ALL}")

    def create_lr_schedulers(self, args, optimizer_config):
        unet_config = optimizer_config["base"]
        lr_scheduler = get_scheduler(
            unet_config.get("lr_scheduler", args.lr_scheduler),
            optimizer=self.optimizer_unet,
            num_warmup_steps=int(unet_config.get("lr_warmup_steps", None)) or unet_config.get("lr_decay_steps", 0) // 20,
            num_training_steps=int(unet_config.get("lr_decay_steps", None) or args.max_epochs * self.epoch_len),
        )
        ret_val = [lr_scheduler]
        if self.optimizer_te is not None:
            ret_val.append(get_scheduler(self.te_config.get("lr_scheduler", args.lr_scheduler), optimizer=self.optimizer_te, num_warmup_steps=0, num_training_steps=args.max_epochs * self.epoch_len))
        return ret_val

    def get_final_optimizer_configs(self, args, global_optimizer_config):
        base_config = global_optimizer_config.get("base")
        te_config = global_optimizer_config.get("text_encoder_overrides")
        if args.lr_decay_steps is None or args.lr_decay_steps < 1:
            args.lr_decay_steps = int(self.epoch_len * args.max_epochs)
        if args.lr is not None:
            base_config["lr"] = args.lr
        base_config["optimizer"] = base_config.get("optimizer", None) or "adamw8bit"
        base_config["lr_warmup_steps"] = base_config.get("lr_warmup_steps", None) or args.lr_warmup_steps
        base_config["lr_decay_steps"] = base_config.get("lr_decay_steps", None) or args.lr_decay_steps
        te_config = {**base_config, **{k: v for k, v in (te_config or {}).items() if v is not None}}
        return te_config, base_config

    def create_optimizers(self, args, text_encoder_params, unet_params):
        optimizer_te = None
        if args.disable_textenc_training:
            optimizer_te = None
        else:
            optimizer_te = self._create_optimizer("text encoder", args, self.te_config, text_encoder_params)
        optimizer_unet = self._create_optimizer("unet", args, self.base_config, unet_params)
        return optimizer_te, optimizer_unet

    def _create_optimizer(self, label, args, local_optimizer_config, parameters):
        betas = BETAS_DEFAULT
        epsilon = EPSILON_DEFAULT
        weight_decay = WEIGHT_DECAY_DEFAULT
        opt_class = None
        optimizer = None

        default_lr = 1e-6
        curr_lr = args.lr
        d0 = 1e-6  # dadapt
        decouple = True  # seems bad to turn off, dadapt_adam only

        if local_optimizer_config is not None:
            betas = local_optimizer_config.get("betas", betas)
            epsilon = local_optimizer_config.get("epsilon", epsilon)
            weight_decay = local_optimizer_config.get("weight_decay", weight_decay)
            optimizer_name = local_optimizer_config.get("optimizer", "adamw8bit")
            curr_lr = local_optimizer_config.get("lr", curr_lr)
            if args.lr is not None:
                curr_lr = args.lr
                logging.info(f"Overriding LR from optimizer config with main config/cli LR setting: {curr_lr}")

        if curr_lr is None:
            curr_lr = default_lr
            logging.warning(f"No LR setting found, defaulting to {default_lr}")

        if optimizer_name:
            if optimizer_name == "lion":
                from lion_pytorch import Lion

                opt_class = Lion
                optimizer = opt_class(itertools_chain(parameters), lr=curr_lr, betas=(betas[0], betas[1]), weight_decay=weight_decay)
            elif optimizer_name in ["prodigy"]:
                from prodigyopt import Prodigy

                opt_class = Prodigy
                optimizer = opt_class(itertools_chain(parameters), lr=curr_lr, weight_decay=weight_decay, safeguard_warmup=True, use_bias_correction=True, d_coef=1.0)
            elif optimizer_name in ["adamw"]:
                opt_class = torch.optim.AdamW
            elif optimizer_name in ["dadapt_adam"]:
                import dadaptation

                opt_class = dadaptation.DAdaptAdam
                optimizer = opt_class(itertools_chain(parameters), lr=curr_lr, betas=(betas[0], betas[1]), weight_decay=weight_decay, eps=epsilon, d0=d0, decouple=decouple, log_every=args.log_step, growth_rate=1e5)
            else:
                import bitsandbytes as bnb

                opt_class = bnb.optim.AdamW8bit

        if not optimizer:
            optimizer = opt_class(
                itertools_chain(parameters),
                lr=curr_lr,
                betas=(betas[0], betas[1]),
                eps=epsilon,
                weight_decay=weight_decay,
                amsgrad=False,
            )

        log_optimizer(label, optimizer, betas, epsilon, weight_decay, curr_lr)
        return optimizer

    def _apply_text_encoder_freeze(self, text_encoder) -> chain:
        num_layers = len(text_encoder.text_model.encoder.layers)
        unfreeze_embeddings = True
        unfreeze_last_n_layers = None
        unfreeze_final_layer_norm = True
        if "freeze_embeddings" in self.te_freeze_config:
            unfreeze_embeddings = not self.te_freeze_config["freeze_embeddings"]
        if "freeze_front_n_layers" in self.te_freeze_config:
            logging.warning(" * Found 'freeze_front_n_layers' in JSON, please use 'unfreeze_last_n_layers' instead")
            freeze_front_n_layers = self.te_freeze_config["freeze_front_n_layers"]
            if freeze_front_n_layers < 0:
                # eg -2 = freeze all but the last 2
                freeze_front_n_layers = num_layers + freeze_front_n_layers
            unfreeze_last_n_layers = num_layers - freeze_front_n_layers
        if "unfreeze_last_n_layers" in self.te_freeze_config:
            unfreeze_last_n_layers = self.te_freeze_config["unfreeze_last_n_layers"]
        if "freeze_final_layer_norm" in self.te_freeze_config:
            unfreeze_final_layer_norm = not self.te_freeze_config["freeze_final_layer_norm"]

        parameters = itertools_chain([])

        if unfreeze_embeddings:
            parameters = itertools_chain(parameters, text_encoder.text_model.embeddings.parameters())
        else:
            print(" ❄️ freezing embeddings")

        if unfreeze_last_n_layers is None:
            # nothing specified: default behaviour
            parameters = itertools_chain(parameters, text_encoder.text_model.encoder.layers.parameters())
        else:
            unfreeze_last_n_layers = max(0, min(unfreeze_last_n_layers, num_layers))
            first_layer_to_unfreeze = num_layers - unfreeze_last_n_layers
            for i in range(first_layer_to_unfreeze, num_layers):
                parameters = itertools_chain(parameters, text_encoder.text_model.encoder.layers[i].parameters())

        if unfreeze_final_layer_norm:
            parameters = itertools_chain(parameters, text_encoder.text_model.final_layer_norm.parameters())
        else:
            print(" ❄️ freezing final layer norm")

        return parameters


def itertools_chain(*iterables):
    return chain(*iterables)


def log_optimizer(label: str, optimizer: torch.optim.Optimizer, betas, epsilon, weight_decay, lr):
    """
    logs the optimizer settings
    """
    all_params = sum([g["params"] for g in optimizer.param_groups], [])
    frozen_parameter_count = len([p for p in all_params if not p.requires_grad])
    total_parameter_count = len(all_params)
    if frozen_parameter_count > 0:
        param_info = f"({total_parameter_count} parameters, {frozen_parameter_count} frozen)"
    else:
        param_info = f"({total_parameter_count} parameters)"

    logging.info(f"{Fore.CYAN} * {label} optimizer: {optimizer.__class__.__name__} {param_info} *{Style.RESET_ALL}")
    logging.info(f"{Fore.CYAN}    lr: {lr}, betas: {betas}, epsilon: {epsilon}, weight_decay: {weight_decay} *{Style.RESET_ALL}")
