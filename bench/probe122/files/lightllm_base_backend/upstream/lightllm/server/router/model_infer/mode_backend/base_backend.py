import os
import asyncio
import random
import numpy as np
import rpyc
import torch
import torch.distributed as dist
import socket
from datetime import timedelta
from typing import Dict, List, Tuple, Optional
from transformers.configuration_utils import PretrainedConfig
from lightllm.models.llama.model import LlamaTpPartModel
from lightllm.models.mixtral.model import MixtralTpPartModel
from lightllm.models.qwen2.model import Qwen2TpPartModel
from lightllm.models.deepseek2.model import Deepseek2TpPartModel
from lightllm.utils.infer_utils import set_random_seed
from lightllm.utils.log_utils import init_logger
from lightllm.utils.dist_utils import (
    set_global_rank,
    set_global_world_size,
    set_current_device_id,
    set_current_rank_in_node,
    set_node_world_size,
    get_node_world_size,
)
from lightllm.server.router.model_infer.infer_batch import InferBatch, InferReq, g_infer_context
from lightllm.server.router.token_load import TokenLoad
from lightllm.common.basemodel.infer_lock import g_infer_state_lock, InferStateLock
from lightllm.utils.envs_utils import get_unique_server_name
from lightllm.utils.device_utils import init_p2p, kv_trans_use_p2p

logger = init_logger(__name__)

_MODEL_CLASSES = {
    "llama": LlamaTpPartModel,
    "mistral": LlamaTpPartModel,
    "mixtral": MixtralTpPartModel,
    "qwen2": Qwen2TpPartModel,
    "deepseek_v2": Deepseek2TpPartModel,
    "deepseek_v3": Deepseek2TpPartModel,
}


def init_distributed_env(kvargs):
    assert kvargs["world_size"] % kvargs["args"].nnodes == 0, "world_size should be divided by nnodes"
    node_world_size = kvargs["world_size"] // kvargs["args"].nnodes
    set_global_rank(kvargs["rank_id"])
    set_global_world_size(kvargs["world_size"])
    set_node_world_size(node_world_size)
    set_current_rank_in_node(kvargs["rank_id"] % node_world_size)

    device_id = kvargs["rank_id"] % get_node_world_size()
    set_current_device_id(device_id)
    torch.cuda.set_device(device_id)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://{kvargs['nccl_host']}:{kvargs['nccl_port']}",
        rank=kvargs["rank_id"],
        world_size=kvargs["world_size"],
        timeout=timedelta(seconds=int(os.getenv("LIGHTLLM_NCCL_TIMEOUT", "1800"))),
    )
    # warmup nccl communicator
    _a = torch.zeros([1]).to(f"cuda:{device_id}")
    dist.all_reduce(_a)
    del _a


class ModeBackend:
    def __init__(self) -> None:
        self.cache = {}
        self.model = None
        self.is_multimodal = False

    def init_model(self, kvargs):
        self.args = kvargs.get("args", None)
        # p d 分离模式下会有特殊的一些初始化, 所以需要传递
        # 模式参数到模型的初始化过程中进行控制
        self.run_mode = "normal" if self.args is None else self.args.run_mode
        self.nnodes = self.args.nnodes
        self.node_rank = self.args.node_rank
        self.tp_rank = kvargs["rank_id"]
        self.world_size = kvargs["world_size"]
        self.dp_size = kvargs.get("dp_size", 1)
        self.load_way = kvargs["load_way"]
        self.mode = kvargs["mode"]
        self.disable_chunked_prefill = kvargs.get("disable_chunked_prefill", False)
        self.chunked_prefill_size = kvargs.get("chunked_prefill_size", None)
        self.return_all_prompt_logprobs = kvargs.get("return_all_prompt_logprobs", False)
        self.use_dynamic_prompt_cache = not kvargs.get("disable_dynamic_prompt_cache", False)
        self.eos_id: List[int] = kvargs.get("eos_id", [2])
        self.disable_cudagraph = kvargs.get("disable_cudagraph", False)
        self.graph_max_batch_size = kvargs.get("graph_max_batch_size", 16)
        self.graph_max_len_in_batch = kvargs.get("graph_max_len_in_batch", 8192)

        self.weight_dir = kvargs["weight_dir"]
        self.logger = init_logger(__name__)

        init_distributed_env(kvargs)

        # TF32 for the few fp32 matmuls (lm_head in fp32 mode, sampling)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

        if kv_trans_use_p2p():
            init_p2p(torch.cuda.current_device())

        self.shared_token_load = TokenLoad(f"{get_unique_server_name()}_shared_token_load", self.dp_size)

        model_cfg, _ = PretrainedConfig.get_config_dict(self.weight_dir)
        model_kvargs = {
            "weight_dir": self.weight_dir,
            "max_total_token_num": kvargs["max_total_token_num"],
            "load_way": self.load_way,
            "mode": self.mode,
            "max_req_num": kvargs.get("max_req_num", 1000),
            "max_seq_length": kvargs.get("max_seq_length", 1024 * 5),
            "is_token_healing": kvargs.get("is_token_healing", False),
            "return_all_prompt_logics": self.return_all_prompt_logprobs,
            "use_dynamic_prompt_cache": self.use_dynamic_prompt_cache,
            "data_type": kvargs.get("data_type", "float16"),
            "graph_max_batch_size": self.graph_max_batch_size,
            "graph_max_len_in_batch": self.graph_max_len_in_batch,
            "disable_cudagraph": self.disable_cudagraph,
            "mem_fraction": kvargs.get("mem_fraction", 0.9),
            "batch_max_tokens": kvargs.get("batch_max_tokens", None),
            "quant_type": kvargs.get("quant_type", None),
            "quant_cfg": kvargs.get("quant_cfg", None),
            "run_mode": self.run_mode,
        }

        try:
            self.model_type = model_cfg.get("model_type", "")
            model_class = _MODEL_CLASSES.get(self.model_type, None)
            if model_class is None:
                raise Exception(f"can not support {self.model_type} now")
            self.model = model_class(model_kvargs)
        except Exception as e:
            self.logger.exception(str(e))
            raise e

        set_random_seed(2147483647)
        self.radix_cache = None
        self.logger.info(f"loaded model class {self.model.__class__}")
        self.logger.info(
            f"rank {self.tp_rank}: allocated {torch.cuda.memory_allocated() / 1024 ** 3:.2f} GB, "
            f"reserved {torch.cuda.memory_reserved() / 1024 ** 3:.2f} GB after model init"
        )
        g_infer_context.register(
            req_manager=self.model.req_manager,
            radix_cache=self.radix_cache,
            shm_req_manager=None,
            vocab_size=self.model.vocab_size,
        )
        self.init_custom()
        return

    def init_custom(self):
        pass

    def prefill(self, reqs: List[Tuple]):
        """This method can be overridden in subclasses."""
        raise NotImplementedError()

    def decode(self):
        """This method can be overridden in subclasses."""
        raise NotImplementedError()

    def pause_reqs(self, req_ids):
        if self.dp_size != 1:
            req_ids = [req_id for req_id in req_ids if req_id in g_infer_context.requests_mapping]
        g_infer_state_lock.acquire()
        g_infer_context.pause_reqs(req_ids)
        g_infer_state_lock.release()
        return

    def _get_dp_rank_in_node(self) -> int:
        return self.tp_rank % (self.world_size // self.nnodes) // (self.world_size // self.dp_size)

    def _sync_step_time(self) -> float:
        # used by the router to balance batches across dp ranks
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        _t = torch.empty((1,), device="cuda")
        dist.all_reduce(_t)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def _overlap_req_init_and_filter(self, uninit_reqs: List[InferReq], ok_finished_reqs: List[InferReq], clear_list=False):
        if len(uninit_reqs) == 0 and len(ok_finished_reqs) == 0:
            return
        with torch.cuda.stream(g_infer_context.get_overlap_stream()):
            if ok_finished_reqs:
                g_infer_state_lock.acquire()
                self._filter_reqs(ok_finished_reqs)
                g_infer_state_lock.release()

            if uninit_reqs:
                g_infer_state_lock.acquire()
                self._post_init_reqs(uninit_reqs)
                g_infer_state_lock.release()

        torch.cuda.current_stream().wait_stream(g_infer_context.get_overlap_stream())
        if clear_list:
            uninit_reqs.clear()
            ok_finished_reqs.clear()
        return

    def _filter_reqs(self, finished_reqs: List[InferReq]):
        finished_req_ids = [req.shm_req.request_id for req in finished_reqs]
        g_infer_context.filter(finished_req_ids)
        return

    def _post_init_reqs(self, uninit_reqs: List[InferReq]):
        for req in uninit_reqs:
            req.init_all()
        return
