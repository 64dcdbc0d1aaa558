import logging
import time

import numpy as np
import ray
import torch
import torch.nn.functional as F
import torch.optim as optim
from torch.cuda.amp import GradScaler as GradScaler
from torch.nn import L1Loss

from core.log import _log
from core.replay_buffer import ReplayBuffer
from core.selfplay_worker import DataWorker
from core.storage import QueueStorage, SharedStorage
from core.reanalyze_worker import BatchWorker_CPU, BatchWorker_GPU
from core.test import _test

train_logger = logging.getLogger("train")


def consist_loss_func(f1, f2):
    f1 = F.normalize(f1, p=2.0, dim=-1, eps=1e-5)
    f2 = F.normalize(f2, p=2.0, dim=-1, eps=1e-5)
    return -(f1 * f2).sum(dim=1)


def adjust_lr(config, optimizer, step_count):
    if step_count < config.lr_warm_step:
        lr = config.lr_init * step_count / config.lr_warm_step
    else:
        lr = config.lr_init * config.lr_decay_rate ** ((step_count - config.lr_warm_step) // config.lr_decay_steps)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


def update_weights(model, batch, optimizer, replay_buffer, config, scaler, vis_result=False):
    inputs_batch, targets_batch = batch
    obs_batch_ori, action_batch, mask_batch, indices, weights_lst, make_time = inputs_batch
    target_value_prefix, target_value, target_policy = targets_batch

    if config.image_based:
        obs_batch_ori = torch.from_numpy(obs_batch_ori).to(config.device).float() / 255.0
    else:
        obs_batch_ori = torch.from_numpy(obs_batch_ori).to(config.device).float()

    obs_batch = obs_batch_ori[:, 0: config.stacked_observations * config.image_channel, :, :]
    action_batch = torch.from_numpy(action_batch).to(config.device).unsqueeze(-1).long()
    mask_batch = torch.from_numpy(mask_batch).to(config.device).float()
    target_value_prefix = torch.from_numpy(target_value_prefix).to(config.device).float()
    target_value = torch.from_numpy(target_value).to(config.device).float()
    target_policy = torch.from_numpy(target_policy).to(config.device).float()
    weights = torch.from_numpy(weights_lst).to(config.device).float()

    batch_size = obs_batch.size(0)
    transformed_target_value_prefix = config.scalar_transform(target_value_prefix)
    target_value_prefix_phi = config.reward_phi(transformed_target_value_prefix)
    transformed_target_value = config.scalar_transform(target_value)
    target_value_phi = config.value_phi(transformed_target_value)

    if config.amp_type == "torch_amp":
        with autocast():
            value, _, policy_logits, hidden_state, reward_hidden = model.initial_inference(obs_batch)
    else:
        value, _, policy_logits, hidden_state, reward_hidden = model.initial_inference(obs_batch)

    value_loss = config.scalar_value_loss(value, target_value_phi[:, 0])
    policy_loss = -(torch.log_softmax(policy_logits, dim=1) * target_policy[:, 0]).sum(1)
    value_prefix_loss = torch.zeros(batch_size, device=config.device)
    consistency_loss = torch.zeros(batch_size, device=config.device)

    for step_i in range(config.num_unroll_steps):
        if config.amp_type == "torch_amp":
            with autocast():
                value, value_prefix, policy_logits, hidden_state, reward_hidden = model.recurrent_inference(
                    hidden_state, reward_hidden, action_batch[:, step_i])
        else:
            value, value_prefix, policy_logits, hidden_state, reward_hidden = model.recurrent_inference(
                hidden_state, reward_hidden, action_batch[:, step_i])
        policy_loss += -(torch.log_softmax(policy_logits, dim=1) * target_policy[:, step_i + 1]).sum(1)
        value_loss += config.scalar_value_loss(value, target_value_phi[:, step_i + 1])
        value_prefix_loss += config.scalar_reward_loss(value_prefix, target_value_prefix_phi[:, step_i])

    loss = (config.consistency_coeff * consistency_loss + config.policy_loss_coeff * policy_loss +
            config.value_loss_coeff * value_loss + config.reward_loss_coeff * value_prefix_loss)
    weighted_loss = (weights * loss).mean()

    parameters = model.parameters()
    if config.amp_type == "torch_amp":
        with autocast():
            total_loss = weighted_loss
            total_loss.register_hook(lambda grad: grad * gradient_scale)
    else:
        total_loss = weighted_loss
    optimizer.zero_grad()

    if config.amp_type == "none":
        total_loss.backward()
    elif config.amp_type == "torch_amp":
        scaler.scale(total_loss).backward()
        scaler.unscale_(optimizer)

    torch.nn.utils.clip_grad_norm_(parameters, config.max_grad_norm)
    if config.amp_type == "torch_amp":
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss.mean().item()


gradient_scale = 0.2


def _train(model, target_model, replay_buffer, shared_storage, batch_storage, config, summary_writer):
    model = model.to(config.device)
    target_model = target_model.to(config.device)
    optimizer = optim.SGD(model.parameters(), lr=config.lr_init, momentum=config.momentum,
                          weight_decay=config.weight_decay)
    scaler = GradScaler()
    model.train()
    target_model.eval()
    step_count = 0
    while step_count < config.training_steps + config.last_steps:
        batch = batch_storage.pop()
        if batch is None:
            time.sleep(0.3)
            continue
        shared_storage.incr_counter.remote()
        lr = adjust_lr(config, optimizer, step_count)
        if step_count % config.checkpoint_interval == 0:
            shared_storage.set_weights.remote(model.get_weights())
        loss = update_weights(model, batch, optimizer, replay_buffer, config, scaler)
        step_count += 1
        if step_count % 1000 == 0:
            torch.cuda.empty_cache()
    shared_storage.set_weights.remote(model.get_weights())
    return model.get_weights()


def train(config, summary_writer, model_path=None):
    model = config.get_uniform_network()
    target_model = config.get_uniform_network()
    if model_path:
        model.load_state_dict(torch.load(model_path, map_location=torch.device("cuda")))
    storage = SharedStorage.remote(model, target_model)
    batch_storage = QueueStorage(15, 20)
    mcts_storage = QueueStorage(18, 25)
    replay_buffer = ReplayBuffer.remote(config=config)
    workers = [DataWorker.options(num_cpus=1, num_gpus=config.selfplay_gpu_per_actor).remote(
        rank, replay_buffer, storage, config) for rank in range(config.num_actors)]
    workers += [BatchWorker_GPU.options(num_cpus=1, num_gpus=config.gpu_actor / config.gpu_actor).remote(
        idx, replay_buffer, storage, batch_storage, mcts_storage, config) for idx in range(config.gpu_actor)]
    model = _train(model, target_model, replay_buffer, storage, batch_storage, config, summary_writer)
    return model


from torch.cuda.amp import autocast as autocast  # noqa: E402
