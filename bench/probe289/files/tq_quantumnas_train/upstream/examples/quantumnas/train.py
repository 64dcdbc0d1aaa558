import argparse
import os
import sys
import pdb
import random
import numpy as np
import torch
import torch.backends.cudnn
import torch.cuda
import torch.nn as nn
import torch.utils.data
import tqdm

from torchpack import distributed as dist
from torchpack.environ import set_run_dir
from torchpack.utils.config import configs
from torchpack.utils.logging import logger
from torchpack.callbacks import (
    InferenceRunner,
    MeanAbsoluteError,
    MaxSaver,
    MinSaver,
    Saver,
    SaverRestore,
    CategoricalAccuracy,
)

from torchquantum.datasets import MNIST, Vowel
from torchquantum.plugin import QiskitProcessor
from torchquantum.super_utils import get_n_params
from torchquantum.util import build_module_op_list

from examples.quantumnas.core import builder
from examples.quantumnas.core.callbacks import (
    NLLError,
    AddNoiseCallback,
    TrainerRestore,
)
from examples.quantumnas.core.trainers import QTrainer


def get_subcallbacks(config):
    subcallbacks = []
    for subcallback in config:
        if subcallback["metrics"] == "CategoricalAccuracy":
            subcallbacks.append(
                CategoricalAccuracy(name=subcallback["name"])
            )
        elif subcallback["metrics"] == "MeanAbsoluteError":
            subcallbacks.append(
                MeanAbsoluteError(name=subcallback["name"])
            )
        elif subcallback["metrics"] == "NLLError":
            subcallbacks.append(
                NLLError(name=subcallback["name"])
            )
        else:
            raise NotImplementedError(subcallback["metrics"])
    return subcallbacks


def get_callbacks(config, dataflow):
    callbacks = []
    for callback in config:
        if callback["callback"] == "InferenceRunner":
            callbacks.append(
                InferenceRunner(
                    dataflow=dataflow[callback["split"]],
                    callbacks=get_subcallbacks(callback["subcallbacks"]),
                )
            )
        elif callback["callback"] == "SaverRestore":
            callbacks.append(SaverRestore())
        elif callback["callback"] == "Saver":
            callbacks.append(Saver(max_to_keep=callback["max_to_keep"]))
        elif callback["callback"] == "MaxSaver":
            callbacks.append(MaxSaver(callback["name"]))
        elif callback["callback"] == "MinSaver":
            callbacks.append(MinSaver(callback["name"]))
        elif callback["callback"] == "AddNoiseCallback":
            callbacks.append(AddNoiseCallback(noise_total_prob=callback["noise_total_prob"]))
        else:
            raise NotImplementedError(callback["callback"])

    return callbacks


def main() -> None:
    dist.init()

    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(dist.local_rank())

    parser = argparse.ArgumentParser()
    parser.add_argument("config", metavar="FILE", help="config file")
    parser.add_argument("--run-dir", metavar="DIR", help="run directory")
    parser.add_argument("--pdb", action="store_true", help="pdb")
    parser.add_argument("--gpu", type=str, help="gpu ids", default=None)
    parser.add_argument(
        "--print-configs", action="store_true", help="print ALL configs"
    )
    parser.add_argument("--jobs", type=int, default=None, help="max parallel job on api")
    parser.add_argument("--ckpt-dir", type=str, default=None)
    parser.add_argument("--hub", type=str, default=None, help="IBMQ provider")
    args, opts = parser.parse_known_args()

    configs.load(os.path.join(args.run_dir, "metainfo", "configs.yaml"))
    configs.load(args.config, recursive=True)
    configs.update(opts)

    if configs.debug.pdb or args.pdb:
        pdb.set_trace()

    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    if configs.run.device == "gpu":
        device = torch.device("cuda")
    elif configs.run.device == "cpu":
        device = torch.device("cpu")
    else:
        raise ValueError(configs.run.device)

    if isinstance(configs.optimizer.lr, str):
        configs.optimizer.lr = eval(configs.optimizer.lr)

    if args.run_dir is None:
        args.run_dir = os.path.join("runs", os.path.basename(args.config))
    set_run_dir(args.run_dir)

    logger.info(" ".join([sys.executable] + sys.argv))

    if args.print_configs:
        print_conf = configs
    else:
        print_conf = {
            "dataset": configs.dataset,
            "trainer": configs.trainer,
            "criterion": configs.criterion,
            "optimizer": configs.optimizer,
            "scheduler": configs.scheduler,
        }

    logger.info(f"Training started: {args.run_dir}." + "\n" + f"{print_conf}")

    if configs.qiskit.use_qiskit:
        IBMQ_TOKEN = os.environ.get("IBMQ_TOKEN", None)
        processor = QiskitProcessor(
            use_real_qc=configs.qiskit.use_real_qc,
            token=IBMQ_TOKEN,
            backend_name=configs.qiskit.backend_name,
            noise_model_name=configs.qiskit.noise_model_name,
            coupling_map_name=configs.qiskit.coupling_map_name,
            basis_gates_name=configs.qiskit.basis_gates_name,
            n_shots=configs.qiskit.n_shots,
            initial_layout=configs.qiskit.initial_layout,
            seed_transpiler=configs.qiskit.seed_transpiler,
            seed_simulator=configs.qiskit.seed_simulator,
            optimization_level=configs.qiskit.optimization_level,
            max_jobs=args.jobs,
            hub=args.hub,
        )
    else:
        processor = None

    if configs.run.manual_seed is not None:
        random.seed(configs.run.manual_seed)
        np.random.seed(configs.run.manual_seed)
        torch.manual_seed(configs.run.manual_seed)
        torch.cuda.manual_seed_all(configs.run.manual_seed)

    dataset = builder.make_dataset()
    dataflow = dict()

    # for split in dataset:
    #     sampler = torch.utils.data.distributed.DistributedSampler(
    #         dataset[split],
    #         num_replicas=dist.size(),
    #         rank=dist.rank(),
    #         shuffle=(split == 'train'))
    #     dataflow[split] = torch.utils.data.DataLoader(
    #         dataset[split],
    #         batch_size=configs.run.bsz,
    #         sampler=sampler,
    #         num_workers=configs.run.workers_per_gpu,
    #         pin_memory=True)

    for split in dataset:
        if split == "train":
            sampler = torch.utils.data.RandomSampler(dataset[split])
            batch_size = configs.run.bsz
        else:
            # for valid and test, use SequentialSampler to make the train.py
            # and eval.py results consistent
            sampler = torch.utils.data.SequentialSampler(dataset[split])
            batch_size = getattr(configs.run, "eval_bsz", configs.run.bsz)

        dataflow[split] = torch.utils.data.DataLoader(
            dataset[split],
            batch_size=batch_size,
            sampler=sampler,
            num_workers=configs.run.workers_per_gpu,
            pin_memory=True,
        )

    model = builder.make_model()

    if configs.trainer.name == "pruning_trainer":
        model.set_pruning_enabled(True)

    state_dict = {}
    solution = None
    score = None
    if configs.ckpt.load_ckpt:
        logger.warning("Loading checkpoint!")
        state_dict = torch.load(configs.ckpt.name, map_location="cuda:0")
        if "model" in state_dict.keys():
            try:
                model.load_state_dict(state_dict["model"])
            except RuntimeError:
                logger.warning(
                    "Can not load from checkpoint, possibly because the arch is different"
                )
        if "solution" in state_dict.keys():
            solution = state_dict["solution"]
            logger.info(f"Loading the solution {solution}")
            logger.info(f"Original score: {state_dict['score']}")
            model.set_sample_arch(solution["arch"])
            score = state_dict["score"]

        if "v_c_reg_mean" in state_dict.keys():
            logger.warning("Loading v_c_reg_mean to the model")
            model.measure.set_v_c_reg_mean(state_dict["v_c_reg_mean"])

    if configs.ckpt.load_trainer:
        assert configs.ckpt.load_ckpt, "Must load ckpt when loading trainer"

    model.to(device)
    model = torch.nn.parallel.DistributedDataParallel(
        model.cuda(),
        device_ids=[dist.local_rank()],
        find_unused_parameters=True,
    )
    if getattr(model.module, "sample_arch", None) is not None and not configs.model.transpile_before_run:
        logger.info(
            f"Sample arch {model.module.sample_arch} with "
            f"{build_module_op_list(model.module.q_layer)} ops"
        )

    total_params = get_n_params(model)
    logger.info(f"Model Size: {total_params}")

    if configs.run.get("bsz_per_gpu", None) is not None:
        logger.info(
            f"Per-GPU batch size {configs.run.bsz_per_gpu}, "
            f"world size {dist.size()}"
        )

    criterion = builder.make_criterion()
    optimizer = builder.make_optimizer(model)
    scheduler = builder.make_scheduler(optimizer)
    trainer = builder.make_trainer(
        model=model,
        criterion=criterion,
        optimizer=optimizer,
        scheduler=scheduler,
    )
    trainer.set_solution(solution)
    trainer.set_score(score)

    if configs.ckpt.load_trainer:
        trainer.load_state_dict(state_dict)

    callbacks = get_callbacks(configs.callbacks, dataflow)
    if configs.trainer.name == "pruning_trainer":
        callbacks.append(builder.make_callback(configs.callbacks.pruning, model))

    trainer.train_with_defaults(
        dataflow["train"],
        num_epochs=configs.run.n_epochs,
        callbacks=callbacks,
    )


if __name__ == "__main__":
    main()
