"""
Distributed data-parallel offline training (one process per GPU).

Usage:
    torchrun \
        --nnodes=1 \
        --nproc_per_node=4 \
        --rdzv_id=100 \
        --rdzv_backend=c10d \
        --rdzv_endpoint=localhost:29400 \
        examples/distributed_offline_training.py
"""
import argparse

import d3rlpy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=str, default="hopper-medium-v2")
    parser.add_argument("--algo", type=str, default="cql", choices=["cql", "iql"])
    parser.add_argument("--n-steps", type=int, default=500000)
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()

    # CPU version:
    # rank = d3rlpy.distributed.init_process_group("gloo")
    rank = d3rlpy.distributed.init_process_group("nccl")
    print(f"Start running on rank={rank}.")

    # CPU version:
    # device = "cpu:0"
    device = f"cuda:{rank}"

    # setup algorithm
    dataset, env = d3rlpy.datasets.get_d4rl(args.dataset)
    if args.algo == "cql":
        algo = d3rlpy.algos.CQLConfig(
            actor_learning_rate=1e-4,
            critic_learning_rate=3e-4,
            temp_learning_rate=1e-4,
            actor_encoder_factory=d3rlpy.models.VectorEncoderFactory([256, 256, 256]),
            critic_encoder_factory=d3rlpy.models.VectorEncoderFactory([256, 256, 256]),
            batch_size=256,
            n_action_samples=10,
            alpha_learning_rate=0.0,
            conservative_weight=5.0,
            compile_graph=args.compile,
        ).create(device=device, enable_ddp=True)
    else:
        reward_scaler = d3rlpy.preprocessing.ReturnBasedRewardScaler(
            multiplier=1000.0
        )
        algo = d3rlpy.algos.IQLConfig(
            actor_learning_rate=3e-4,
            critic_learning_rate=3e-4,
            batch_size=256,
            weight_temp=3.0,
            max_weight=100.0,
            expectile=0.7,
            reward_scaler=reward_scaler,
            compile_graph=args.compile,
        ).create(device=device, enable_ddp=True)

    # disable logging on rank != 0 workers
    logger_adapter: d3rlpy.logging.LoggerAdapterFactory
    evaluators = {}
    if rank == 0:
        evaluators["environment"] = d3rlpy.metrics.EnvironmentEvaluator(env)
        logger_adapter = d3rlpy.logging.FileAdapterFactory()
    else:
        logger_adapter = d3rlpy.logging.NoopAdapterFactory()

    # start training
    algo.fit(
        dataset,
        n_steps=args.n_steps,
        n_steps_per_epoch=1000,
        evaluators=evaluators,
        logger_adapter=logger_adapter,
        show_progress=rank == 0,
        enable_ddp=True,
    )

    d3rlpy.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
