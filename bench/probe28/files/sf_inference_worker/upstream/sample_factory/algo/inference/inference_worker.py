from __future__ import annotations

import time
from collections import deque
from typing import Dict, List, Optional

import numpy as np
import torch
from signal_slot.signal_slot import EventLoop, Timer, signal
from torch import Tensor

from sample_factory.algo.utils.context import SampleFactoryContext
from sample_factory.algo.utils.misc import POLICY_ID_KEY, SAMPLES_COLLECTED, STATS_KEY, TIMING_STATS
from sample_factory.algo.utils.model_sharing import ParameterServer
from sample_factory.algo.utils.shared_buffers import BufferMgr
from sample_factory.algo.utils.tensor_dict import TensorDict, to_numpy
from sample_factory.algo.utils.torch_utils import inference_context
from sample_factory.model.model_utils import get_rnn_size
from sample_factory.utils.gpu_utils import cuda_envvars_for_policy
from sample_factory.utils.timing import Timing
from sample_factory.utils.utils import debug_log_every_n, log


def init_inference_process(sf_context: SampleFactoryContext, worker: InferenceWorker):
    set_global_context(sf_context)
    log.info(f"{worker.object_id}\tpid {os.getpid()}\tparent {os.getppid()}")

    import signal as os_signal

    os_signal.signal(os_signal.SIGINT, os_signal.SIG_IGN)

    cfg = worker.cfg
    try:
        if cfg.num_workers > 1:
            psutil.Process().nice(min(cfg.default_niceness + 2, 20))
    except psutil.AccessDenied:
        log.error("Low niceness requires sudo!")

    if cfg.device == "gpu":
        cuda_envvars_for_policy(worker.policy_id, "inference")
    init_torch_runtime(cfg)


class InferenceWorker:
    def __init__(self, event_loop, policy_id, worker_idx, buffer_mgr: BufferMgr, param_server: ParameterServer, cfg, env_info):
        self.timing = Timing(name=f"InferenceWorker_p{policy_id}-w{worker_idx}")
        self.policy_id = policy_id
        self.worker_idx = worker_idx
        self.cfg = cfg
        self.env_info = env_info
        self.param_server = param_server
        self.buffer_mgr = buffer_mgr
        self.device = None
        self.traj_tensors = buffer_mgr.traj_tensors_torch
        self.policy_output_tensors = buffer_mgr.policy_output_tensors_torch[policy_id]
        self.requests = []
        self.total_num_samples = 0
        self.rnn_size = get_rnn_size(cfg)
        self.is_initialized = False

    def init(self, reporting_queue, learner_workers):
        with self.timing.timeit("init"):
            self.param_server.init(self.device, self.cfg.serial_mode)
            self.device = self.param_server.device
            if self.device.type == "cuda":
                # separate stream so that policy updates from the learner overlap with inference
                self.inference_stream = torch.cuda.Stream(device=self.device)
            else:
                self.inference_stream = None
            self.is_initialized = True

    def _prepare_batch(self, obs: TensorDict, rnn_states: Tensor):
        with self.timing.add_time("obs_to_device"):
            for key, x in obs.items():
                obs[key] = x.to(self.device, non_blocking=True).float()
            rnn_states = rnn_states.to(self.device, non_blocking=True).float()
        return obs, rnn_states

    def _handle_policy_steps(self, timing):
        with inference_context(self.cfg.serial_mode):
            obs, rnn_states, num_samples = self._gather_requests()
            if num_samples == 0:
                return
            with timing.add_time("inference"):
                stream_ctx = torch.cuda.stream(self.inference_stream) if self.inference_stream is not None else nullcontext()
                with stream_ctx:
                    obs, rnn_states = self._prepare_batch(obs, rnn_states)
                    with torch.autocast("cuda", dtype=torch.float16, enabled=self.cfg.inference_fp16):
                        policy_outputs = self.param_server.actor_critic(obs, rnn_states)
                if self.inference_stream is not None:
                    self.inference_stream.synchronize()
            with timing.add_time("post_process"):
                self._write_outputs(policy_outputs, num_samples)
            self.total_num_samples += num_samples

    def _gather_requests(self):
        obs_list, rnn_list, n = [], [], 0
        for req in self.requests:
            obs_list.append(self.traj_tensors["obs"][req])
            rnn_list.append(self.traj_tensors["rnn_states"][req])
            n += len(req)
        self.requests = []
        if n == 0:
            return None, None, 0
        obs = TensorDict({k: torch.cat([o[k] for o in obs_list]) for k in obs_list[0].keys()})
        return obs, torch.cat(rnn_list), n

    def _write_outputs(self, policy_outputs, num_samples):
        for key, value in policy_outputs.items():
            # GPU -> shared CPU memory
            self.policy_output_tensors[key][:num_samples].copy_(value[:num_samples].cpu())
        if self.device.type == "cuda":  # D2H copies above are async
            torch.cuda.synchronize(self.device)

    def report_memory(self):
        if self.device is not None and self.device.type == "cuda":
            mem = torch.cuda.max_memory_allocated(self.device) / 2**30
            log.debug("Inference worker %d-%d max GPU memory %.2fGiB", self.policy_id, self.worker_idx, mem)


from contextlib import nullcontext  # noqa: E402
import os  # noqa: E402
import psutil  # noqa: E402
from sample_factory.algo.utils.context import set_global_context  # noqa: E402
from sample_factory.algo.utils.torch_utils import init_torch_runtime  # noqa: E402
