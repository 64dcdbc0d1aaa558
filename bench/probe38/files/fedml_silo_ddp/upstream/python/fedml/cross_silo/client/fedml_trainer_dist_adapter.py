import logging
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from fedml.constants import FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL
from fedml.core import ClientTrainer
from fedml.core.dp.fedml_differential_privacy import FedMLDifferentialPrivacy
from fedml.ml.engine import ml_engine_adapter

from .fedml_trainer import FedMLTrainer


class ProcessGroupManager:
    """Owns the torch.distributed group that spans the processes of *one* silo."""

    def __init__(self, rank, world_size, master_address, master_port, backend):
        logging.info("Start process group")
        logging.info(
            "rank: %d, world_size: %d, master_address: %s, master_port: %s, backend: %s"
            % (rank, world_size, master_address, master_port, backend)
        )
        env_dict = {key: os.environ[key] for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE") if key in os.environ}
        logging.info(f"[{os.getpid()}] Initializing process group with: {env_dict}")

        self.messaging_pg = dist.init_process_group(
            backend=backend,
            init_method="tcp://{}:{}".format(master_address, master_port),
            rank=rank,
            world_size=world_size,
            timeout=timedelta(minutes=30),
        )
        # gloo group for small control messages (round index, early-stop flags)
        self.control_pg = dist.new_group(backend="gloo")
        logging.info("Initialized process group with backend %s" % backend)

    def cleanup(self):
        dist.destroy_process_group()

    def get_process_group(self):
        return self.messaging_pg


class TrainerDistAdapter:
    def __init__(self, args, device, client_rank, model, train_data_num, train_data_local_num_dict,
                 train_data_local_dict, test_data_local_dict, model_trainer: ClientTrainer = None):
        ml_engine_adapter.model_to_device(args, model, device)

        if args.scenario == FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL:
            self.process_group_manager, model = self._init_silo_ddp(args, device, model)
        else:
            self.process_group_manager = None

        if model_trainer is None:
            model_trainer = self._default_trainer(args, model)
        model_trainer.set_id(client_rank)

        self.client_index = client_rank - 1
        self.trainer = FedMLTrainer(
            self.client_index, train_data_local_dict, train_data_local_num_dict, test_data_local_dict,
            train_data_num, device, args, model_trainer,
        )
        self.args = args
        self.device = device

    def _init_silo_ddp(self, args, device, model):
        backend = getattr(args, "silo_dist_backend", "nccl")
        only_gpu = args.using_gpu
        pg = ProcessGroupManager(
            args.proc_rank_in_silo,
            args.n_proc_in_silo,
            args.pg_master_address,
            args.pg_master_port,
            backend,
        )
        if only_gpu:
            torch.cuda.set_device(args.local_rank)
            model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
        else:
            model = DDP(model)
        return pg, model

    def _default_trainer(self, args, model):
        return AmpClassificationTrainer(model, args)

    def train(self, round_idx):
        t0 = time.time()
        weights, local_sample_num = self.trainer.train(round_idx)
        logging.info("silo %d local training took %.1fs" % (self.client_index, time.time() - t0))
        return weights, local_sample_num

    def update_model(self, model_params):
        self.trainer.update_model(model_params)

    def update_dataset(self, client_index=None):
        _client_index = client_index or self.client_index
        self.trainer.update_dataset(int(_client_index))

    def cleanup_pg(self):
        if self.process_group_manager is not None:
            logging.info("Cleaning up process group for client %s in silo %s" % (self.args.proc_rank_in_silo, self.args.rank_in_node))
            self.process_group_manager.cleanup()


class AmpClassificationTrainer(ClientTrainer):
    """Local SGD inside a silo, optionally with AMP and with DP-SGD noise."""

    def __init__(self, model, args):
        super().__init__(model, args)
        self.use_amp = getattr(args, "use_amp", False)
        self.amp_dtype = torch.float16 if getattr(args, "amp_dtype", "float16") == "float16" else torch.bfloat16
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)

    def get_model_params(self):
        m = self.model.module if isinstance(self.model, DDP) else self.model
        return {k: v.cpu() for k, v in m.state_dict().items()}

    def set_model_params(self, model_parameters):
        m = self.model.module if isinstance(self.model, DDP) else self.model
        m.load_state_dict(model_parameters)

    def train(self, train_data, device, args):
        model = self.model
        model.train()
        criterion = torch.nn.CrossEntropyLoss().to(device)
        if args.client_optimizer == "sgd":
            optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=args.learning_rate, momentum=0.9, weight_decay=args.weight_decay)
        else:
            optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=args.learning_rate, weight_decay=args.weight_decay, amsgrad=True)

        epoch_loss = []
        for epoch in range(args.epochs):
            batch_loss = []
            torch.cuda.synchronize()  # start the epoch clock on an idle device
            start = time.time()
            for batch_idx, (x, labels) in enumerate(train_data):
                x, labels = x.to(device, non_blocking=True), labels.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):
                    log_probs = model(x)
                    loss = criterion(log_probs, labels)
                self.scaler.scale(loss).backward()
                if FedMLDifferentialPrivacy.get_instance().is_local_dp_enabled():
                    self.scaler.unscale_(optimizer)
                    FedMLDifferentialPrivacy.get_instance().add_local_noise(model, args)
                self.scaler.step(optimizer)
                self.scaler.update()
                batch_loss.append(loss.item())
            torch.cuda.synchronize()
            elapsed = time.time() - start
            if len(batch_loss) == 0:
                epoch_loss.append(0.0)
            else:
                epoch_loss.append(sum(batch_loss) / len(batch_loss))
            logging.info(
                "Client Index = {}\tEpoch: {}\tLoss: {:.6f}\t{:.1f}s on device {}".format(
                    self.id, epoch, epoch_loss[-1], elapsed, torch.cuda.current_device()
                )
            )
