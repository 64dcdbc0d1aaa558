"""
This script reproduces the Proximal Policy Optimization (PPO) Algorithm
results from Schulman et al. 2017 for the on MuJoCo Environments.
"""
import hydra
from torchrl._utils import logger as torchrl_logger


@hydra.main(config_path="", config_name="config_mujoco", version_base="1.1")
def main(cfg: "DictConfig"):  # noqa: F821
    import time

    import torch.optim
    import tqdm

    from tensordict import TensorDict
    from tensordict.nn import CudaGraphModule
    from torchrl.collectors import SyncDataCollector
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.envs import ExplorationType, set_exploration_type
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value.advantages import GAE
    from utils_mujoco import eval_model, make_env, make_ppo_models

    device = cfg.optim.device
    if device in ("", None):
        if torch.cuda.is_available():
            device = "cuda:0"
        else:
            device = "cpu"
    device = torch.device(device)

    num_mini_batches = cfg.collector.frames_per_batch // cfg.loss.mini_batch_size
    total_network_updates = (
        (cfg.collector.total_frames // cfg.collector.frames_per_batch) * cfg.loss.ppo_epochs * num_mini_batches
    )

    actor, critic = make_ppo_models(cfg.env.env_name, device=device)

    collector = SyncDataCollector(
        create_env_fn=make_env(cfg.env.env_name, device),
        policy=actor,
        frames_per_batch=cfg.collector.frames_per_batch,
        total_frames=cfg.collector.total_frames,
        device=device,
        storing_device=device,
        max_frames_per_traj=-1,
        compile_policy={"mode": cfg.compile.compile_mode, "warmup": 1} if cfg.compile.compile else False,
        cudagraph_policy=cfg.compile.cudagraphs,
    )

    sampler = SamplerWithoutReplacement()
    data_buffer = TensorDictReplayBuffer(
        storage=LazyTensorStorage(cfg.collector.frames_per_batch, device=device),
        sampler=sampler,
        batch_size=cfg.loss.mini_batch_size,
    )

    adv_module = GAE(
        gamma=cfg.loss.gamma,
        lmbda=cfg.loss.gae_lambda,
        value_network=critic,
        average_gae=False,
        device=device,
    )
    loss_module = ClipPPOLoss(
        actor_network=actor,
        critic_network=critic,
        clip_epsilon=cfg.loss.clip_epsilon,
        loss_critic_type=cfg.loss.loss_critic_type,
        entropy_coef=cfg.loss.entropy_coef,
        critic_coef=cfg.loss.critic_coef,
        normalize_advantage=True,
    )

    actor_optim = torch.optim.Adam(actor.parameters(), lr=torch.tensor(cfg.optim.lr, device=device), eps=1e-5, fused=True)
    critic_optim = torch.optim.Adam(critic.parameters(), lr=torch.tensor(cfg.optim.lr, device=device), eps=1e-5, fused=True)

    def update(batch, num_network_updates):
        actor_optim.zero_grad(set_to_none=True)
        critic_optim.zero_grad(set_to_none=True)
        loss = loss_module(batch)
        critic_loss = loss["loss_critic"]
        actor_loss = loss["loss_objective"] + loss["loss_entropy"]
        total_loss = critic_loss + actor_loss
        total_loss.backward()
        actor_optim.step()
        critic_optim.step()
        return loss.detach().set("alpha", torch.ones((), device=device))

    if cfg.compile.compile:
        compile_mode = cfg.compile.compile_mode
        if compile_mode in ("", None):
            compile_mode = "default" if cfg.compile.cudagraphs else "reduce-overhead"
        update = torch.compile(update, mode=compile_mode)
        adv_module = torch.compile(adv_module, mode=compile_mode)

    if cfg.compile.cudagraphs:
        torchrl_logger.warning("CudaGraphModule is experimental and may lead to silently wrong results.")
        update = CudaGraphModule(update, in_keys=[], out_keys=[], warmup=5)
        adv_module = CudaGraphModule(adv_module)

    collected_frames = 0
    num_network_updates = torch.zeros((), dtype=torch.int64, device=device)
    pbar = tqdm.tqdm(total=cfg.collector.total_frames)
    start_time = time.time()

    for i, data in enumerate(collector):
        frames_in_batch = data.numel()
        collected_frames += frames_in_batch
        pbar.update(frames_in_batch)

        for j in range(cfg.loss.ppo_epochs):
            with torch.no_grad():
                data = adv_module(data)
            data_reshape = data.reshape(-1)
            data_buffer.extend(data_reshape)
            for k, batch in enumerate(data_buffer):
                torch.compiler.cudagraph_mark_step_begin()
                loss = update(batch, num_network_updates=num_network_updates)
                num_network_updates += 1

        if i % 10 == 0:
            with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
                test_rewards = eval_model(actor, make_env(cfg.env.env_name, device), num_episodes=3)
            torchrl_logger.info(f"iter {i}: test reward {test_rewards.mean().item():.2f}")

        collector.update_policy_weights_()

    collector.shutdown()
    torchrl_logger.info(f"Training took {time.time() - start_time:.2f}s")


if __name__ == "__main__":
    main()
