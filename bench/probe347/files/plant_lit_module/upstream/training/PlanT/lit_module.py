import logging
from collections import deque

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from transformers import AutoConfig, AutoModel

logger = logging.getLogger(__name__)


class PIDController(object):
    def __init__(self, K_P=1.0, K_I=0.0, K_D=0.0, n=20):
        self._K_P = K_P
        self._K_I = K_I
        self._K_D = K_D
        self._window = deque([0 for _ in range(n)], maxlen=n)

    def step(self, error):
        self._window.append(error)
        if len(self._window) >= 2:
            integral = np.mean(self._window)
            derivative = self._window[-1] - self._window[-2]
        else:
            integral = 0.0
            derivative = 0.0
        return self._K_P * error + self._K_I * integral + self._K_D * derivative


class HFLM(nn.Module):
    """PlanT transformer: object-level tokens -> BERT-style encoder -> GRU waypoint decoder."""

    def __init__(self, config_net, config_all):
        super().__init__()
        self.config_all = config_all
        self.config_net = config_net

        self.object_types = 2 + 1  # vehicles, route +1 for padding and wp embedding
        self.num_attributes = 6  # x,y,yaw,speed/id, extent x, extent y

        precisions = [
            self.config_all.model.pre_training.get("precision_pos", 4),
            self.config_all.model.pre_training.get("precision_pos", 4),
            self.config_all.model.pre_training.get("precision_angle", 4),
            self.config_all.model.pre_training.get("precision_speed", 4),
            self.config_all.model.pre_training.get("precision_pos", 4),
            self.config_all.model.pre_training.get("precision_pos", 4),
        ]

        self.vocab_size = [2**i for i in precisions]

        # model
        config = AutoConfig.from_pretrained(self.config_net.hf_checkpoint)  # load config from hugging face model
        n_embd = config.hidden_size
        self.model = AutoModel.from_config(config=config)

        # sequence padding for batching
        self.cls_emb = nn.Parameter(torch.randn(1, self.num_attributes + 1))  # +1 because at this step we still have the type indicator
        self.eos_emb = nn.Parameter(torch.randn(1, self.num_attributes + 1))  # unnecessary TODO: remove

        # token embedding
        self.tok_emb = nn.Linear(self.num_attributes, n_embd)
        # object type embedding
        self.obj_token = nn.ParameterList(
            [nn.Parameter(torch.randn(1, self.num_attributes)) for _ in range(self.object_types)]
        )
        self.obj_emb = nn.ModuleList([nn.Linear(self.num_attributes, n_embd) for _ in range(self.object_types)])
        self.drop = nn.Dropout(config_net.embd_pdrop)

        # decoder head forecasting
        if self.config_all.model.pre_training.get("pretraining", "none") == "forecast" or \
                self.config_all.model.training.get("pretraining_path", "none") != "none":
            # one head for each attribute type -> we have different precision per attribute
            self.heads = nn.ModuleList(
                [nn.Linear(n_embd, self.vocab_size[i]) for i in range(self.num_attributes)]
            )

        # wp (CLS) decoding
        self.wp_head = nn.Linear(n_embd, 64)
        self.wp_decoder = nn.GRUCell(input_size=4, hidden_size=65)
        self.wp_relu = nn.ReLU()
        self.wp_output = nn.Linear(65, 2)

        # PID controller
        self.turn_controller = PIDController(K_P=0.9, K_I=0.75, K_D=0.3, n=20)
        self.speed_controller = PIDController(K_P=5.0, K_I=0.5, K_D=1.0, n=20)

        self.apply(self._init_weights)

        logger.info("number of parameters: %e", sum(p.numel() for p in self.parameters()))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def configure_optimizers(self, train_config):
        decay = set()
        no_decay = set()
        whitelist_weight_modules = (torch.nn.Linear, torch.nn.Conv2d)
        blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding, torch.nn.BatchNorm2d)
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters():
                fpn = "%s.%s" % (mn, pn) if mn else pn  # full param name

                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                    no_decay.add(fpn)
                elif pn.endswith("_ih") or pn.endswith("_hh"):
                    # all recurrent weights will not be decayed
                    no_decay.add(fpn)
                elif pn.endswith("_emb") or "_token" in pn:
                    no_decay.add(fpn)

        # validate that we considered every parameter
        param_dict = {pn: p for pn, p in self.named_parameters()}
        inter_params = decay & no_decay
        union_params = decay | no_decay
        assert len(inter_params) == 0, "parameters %s made it into both decay/no_decay sets!" % (str(inter_params),)
        assert len(param_dict.keys() - union_params) == 0, \
            "parameters %s were not separated into either decay/no_decay set!" % (str(param_dict.keys() - union_params),)

        optim_groups = [
            {"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": train_config.weight_decay},
            {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(optim_groups, lr=train_config.learning_rate, betas=train_config.betas)
        return optimizer

    def control_pid(self, waypoints, velocity):
        """Predicts vehicle control with a PID controller (runs on host numpy arrays)."""
        assert waypoints.size(0) == 1
        waypoints = waypoints[0].data.cpu().numpy()
        speed = velocity[0].data.cpu().numpy()

        desired_speed = np.linalg.norm(waypoints[0] - waypoints[1]) * 2.0
        brake = desired_speed < 0.4 or (speed / desired_speed) > 1.1

        aim = (waypoints[1] + waypoints[0]) / 2.0
        angle = np.degrees(np.arctan2(aim[1], aim[0])) / 90
        if speed < 0.01:
            angle = 0.0
        steer = np.clip(self.turn_controller.step(angle), -1.0, 1.0)

        delta = np.clip(desired_speed - speed, 0.0, 0.25)
        throttle = np.clip(self.speed_controller.step(delta), 0.0, 0.75)
        throttle = throttle if not brake else 0.0
        return steer, throttle, brake

    def forward(self, idx, target=None, target_point=None, light_hazard=None):

        # create batch of same size as input
        x_batched = torch.cat(idx, dim=0)
        input_batch = self.pad_sequence_batch(x_batched)
        input_batch_type = input_batch[:, :, 0]  # car or map
        input_batch_data = input_batch[:, :, 1:]

        # create same for output in case of multitask training to use this as ground truth
        if target is not None:
            y_batched = torch.cat(target, dim=0)
            output_batch = self.pad_sequence_batch(y_batched)
            output_batch_type = output_batch[:, :, 0]  # car or map
            output_batch_data = output_batch[:, :, 1:]

        # create masks by object type
        car_mask = (input_batch_type == 1).unsqueeze(-1)
        route_mask = (input_batch_type == 2).unsqueeze(-1)
        other_mask = torch.logical_and(route_mask.logical_not(), car_mask.logical_not())
        masks = [car_mask, route_mask, other_mask]

        # get size of input
        (B, O, A) = (input_batch_data.shape)  # batch size, number of objects, number of attributes

        # embed tokens object wise (one object -> one token embedding)
        input_batch_data = rearrange(input_batch_data, "b objects attributes -> (b objects) attributes")
        embedding = self.tok_emb(input_batch_data)
        embedding = rearrange(embedding, "(b o) features -> b o features", b=B, o=O)

        # create object type embedding
        obj_embeddings = [self.obj_emb[i](self.obj_token[i]) for i in range(self.object_types)]  # list of a tensors of size 1 x features

        # add object type embedding to embedding (mask needed to only add to the correct tokens)
        embedding = [(embedding + obj_embeddings[i]) * masks[i] for i in range(self.object_types)]
        embedding = torch.sum(torch.stack(embedding, dim=1), dim=1)

        # embedding dropout
        x = self.drop(embedding)

        # Transformer Encoder; use embedding for hugging face model and get output states and attention map
        output = self.model(**{"inputs_embeds": embedding}, output_attentions=True)
        x, attn_map = output.last_hidden_state, output.attentions

        # get waypoint predictions
        z = self.wp_head(x[:, 0, :])
        # add traffic ligth flag
        z = torch.cat((z, light_hazard), 1)

        output_wp = list()

        # initial input variable to GRU
        x = torch.zeros(size=(z.shape[0], 2), dtype=z.dtype).type_as(z)

        # autoregressive generation of output waypoints
        for _ in range(self.config_all.model.training.pred_len):
            x_in = torch.cat([x, target_point], dim=1)
            z = self.wp_decoder(x_in, z)
            dx = self.wp_output(z)
            x = dx + x
            output_wp.append(x)

        pred_wp = torch.stack(output_wp, dim=1)

        # get forecasting predictions
        if self.config_all.model.pre_training.get("pretraining", "none") == "forecast" or \
                self.config_all.model.training.get("pretraining_path", "none") != "none":
            logits = [self.heads[i](x) for i in range(len(self.heads))]
            logits = [rearrange(logits[i], "b objects vocab_size -> (b objects) vocab_size") for i in range(len(logits))]
            targets = [output_batch_data[:, :, i].long() for i in range(output_batch_data.shape[-1])]
            targets = [rearrange(targets[i], "b objects -> (b objects)") for i in range(len(targets))]
        else:
            logits = None
            targets = None

        return logits, targets, pred_wp, attn_map

    def pad_sequence_batch(self, x_batched):
        """
        Pads a batch of sequences to the longest sequence in the batch.
        """
        # split input into components
        x_batch_ids = x_batched[:, 0]

        x_tokens = x_batched[:, 1:]

        B = int(x_batch_ids[-1].item()) + 1
        input_batch = []
        for batch_id in range(B):
            # get the batch of elements
            x_batch_id_mask = x_batch_ids == batch_id

            # get the batch of types
            x_tokens_batch = x_tokens[x_batch_id_mask]

            x_seq = torch.cat([self.cls_emb, x_tokens_batch, self.eos_emb], dim=0)

            input_batch.append(x_seq)

        padded = torch.swapaxes(torch.nn.utils.rnn.pad_sequence(input_batch), 0, 1)
        input_batch = padded[:B]

        return input_batch


class LitHFLM(pl.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.save_hyperparameters()
        self.cfg = cfg
        self.cfg_train = self.cfg.model.training
        self.model = HFLM(self.cfg.model.network, self.cfg)

        if self.cfg.model.pre_training.get("pretraining", "none") == "forecast":
            self.criterion_forecast = nn.CrossEntropyLoss(ignore_index=-999)

    def forward(self, x, y=None, target_point=None, light_hazard=None):
        return self.model(x, y, target_point, light_hazard)

    def configure_optimizers(self):
        optimizer = self.model.configure_optimizers(self.cfg.model.training)
        scheduler = torch.optim.lr_scheduler.MultiStepLR(
            optimizer, milestones=[self.cfg.model.training.max_epochs - 10], gamma=0.1
        )
        return [optimizer], [scheduler]

    def training_step(self, batch, batch_idx):
        x, y, wp, tp, light = batch

        # training with only waypoint loss
        if self.cfg.model.pre_training.get("pretraining", "none") == "none":
            logits, targets, pred_wp, _ = self(x, y, target_point=tp, light_hazard=light)

            loss_pred = F.l1_loss(pred_wp, wp)
            loss_all = loss_pred

            self.log("train/loss_pred", loss_pred, on_step=False, on_epoch=True, prog_bar=False, sync_dist=self.cfg.gpus > 1)

        elif self.cfg.model.pre_training.get("pretraining", "none") == "forecast":
            logits, targets, pred_wp, _ = self(x, y, target_point=tp, light_hazard=light)
            loss = 0
            for i in range(len(logits)):
                loss += self.criterion_forecast(logits[i], targets[i])
            loss_all = loss * self.cfg.model.pre_training.get("forecastLoss_weight", 1.0)
            self.log("train/loss_forecast", loss, on_step=False, on_epoch=True, prog_bar=False, sync_dist=self.cfg.gpus > 1)

            loss_pred = F.l1_loss(pred_wp, wp)
            loss_all += loss_pred
            self.log("train/loss_pred", loss_pred, on_step=False, on_epoch=True, prog_bar=False, sync_dist=self.cfg.gpus > 1)

        self.log("train/loss_all", loss_all, on_step=False, on_epoch=True, prog_bar=True, sync_dist=self.cfg.gpus > 1)

        return loss_all

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y, wp, tp, light = batch
        logits, targets, pred_wp, _ = self(x, y, target_point=tp, light_hazard=light)
        loss_pred = F.l1_loss(pred_wp, wp)
        self.log("val/loss_pred", loss_pred, on_step=False, on_epoch=True, sync_dist=self.cfg.gpus > 1)
        return loss_pred

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            peak_gb = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3
            self.log("sys/peak_mem_gb", peak_gb, rank_zero_only=True)
            torch.cuda.reset_peak_memory_stats(self.device)
