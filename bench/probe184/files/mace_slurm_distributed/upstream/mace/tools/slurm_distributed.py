###########################################################################################
# Slurm environment setup for distributed training.
# This code is refactored from rsarm's contribution at:
# https://github.com/Lumi-supercomputer/lumi-reframe-tests/blob/main/checks/apps/deeplearning/pytorch/src/pt_distr_env.py
# This program is distributed under the MIT License (see MIT.md)
###########################################################################################

import logging
import os
import socket
from typing import Dict, Optional

import hostlist


class DistributedEnvironment:
    """Reads rank / world size / master address from SLURM or torchrun.

    One process is started per GPU. The master address is the first host of the
    allocation, the port is fixed unless MASTER_PORT is already exported.
    """

    def __init__(self, default_port: int = 33333):
        self.default_port = default_port
        if "SLURM_JOB_NODELIST" in os.environ:
            self._setup_slurm()
        elif "TORCHELASTIC_RUN_ID" in os.environ or "LOCAL_RANK" in os.environ:
            self._setup_torchrun()
        else:
            raise RuntimeError(
                "Neither SLURM nor torchrun variables found; cannot set up distributed run"
            )
        self._export_nccl_defaults()

    def _setup_slurm(self) -> None:
        hostnames = hostlist.expand_hostlist(os.environ["SLURM_JOB_NODELIST"])
        self.master_addr = hostnames[0]
        self.master_port = os.environ.get("MASTER_PORT", str(self.default_port))
        self.world_size = int(os.environ["SLURM_NTASKS"])
        if "SLURM_NTASKS_PER_NODE" in os.environ:
            self.local_size = int(os.environ["SLURM_NTASKS_PER_NODE"].split("(")[0])
        else:
            self.local_size = 1
        self.rank = int(os.environ["SLURM_PROCID"])
        self.local_rank = int(os.environ["SLURM_LOCALID"])
        os.environ["MASTER_ADDR"] = self.master_addr
        os.environ["MASTER_PORT"] = str(self.master_port)
        os.environ["WORLD_SIZE"] = str(self.world_size)
        os.environ["LOCAL_RANK"] = str(self.local_rank)
        os.environ["RANK"] = str(self.rank)

        # SLURM with --gpus-per-task binds exactly one device; remap so that
        # every task sees its own GPU as device 0.
        gpus = os.environ.get("SLURM_STEP_GPUS") or os.environ.get("SLURM_JOB_GPUS")
        if gpus and os.environ.get("MACE_BIND_GPU", "0") == "1":
            gpu_list = gpus.split(",")
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu_list[self.local_rank % len(gpu_list)]
            self.local_rank = 0

    def _setup_torchrun(self) -> None:
        self.master_addr = os.environ.get("MASTER_ADDR", socket.gethostname())
        self.master_port = os.environ.get("MASTER_PORT", str(self.default_port))
        self.world_size = int(os.environ["WORLD_SIZE"])
        self.local_size = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ["LOCAL_RANK"])

    @staticmethod
    def _export_nccl_defaults() -> None:
        # Sensible defaults on InfiniBand clusters; users can override them in the job script.
        os.environ.setdefault("NCCL_SOCKET_IFNAME", "ib0")
        os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
        if os.environ.get("MACE_DEBUG_DIST", "0") == "1":
            os.environ["NCCL_DEBUG"] = "INFO"
            os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"

    def as_dict(self) -> Dict[str, Optional[str]]:
        return {
            "master_addr": self.master_addr,
            "master_port": str(self.master_port),
            "world_size": str(self.world_size),
            "local_size": str(self.local_size),
            "rank": str(self.rank),
            "local_rank": str(self.local_rank),
        }

    def __repr__(self) -> str:
        return (
            f"DistributedEnvironment(master_addr={self.master_addr}, "
            f"master_port={self.master_port}, world_size={self.world_size}, "
            f"local_size={self.local_size}, rank={self.rank}, local_rank={self.local_rank})"
        )


def log_environment() -> None:
    keys = [k for k in os.environ if k.startswith(("SLURM_", "NCCL_", "MASTER_"))]
    for key in sorted(keys):
        logging.debug(f"{key}={os.environ[key]}")
