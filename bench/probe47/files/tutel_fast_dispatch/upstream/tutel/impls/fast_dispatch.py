# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.
#
# Fast encode / decode of MoE dispatch: instead of the GShard einsum with a
# dense [tokens, experts, capacity] mask, tokens are copied straight into their
# (expert, slot) position by JIT-compiled kernels.

import os

import torch
from torch import Tensor

try:
    import tutel_custom_kernel
except ImportError:
    tutel_custom_kernel = None

from ..impls import communicate as C

# -----------------------------------------------------------------------------
# JIT kernels (compiled with NVRTC through tutel_custom_kernel on first use)
# -----------------------------------------------------------------------------

_DISPATCH_FWD_SRC = r"""
extern "C" __global__ __launch_bounds__(1024) void execute(dtype* __restrict__ gates1_s, int* __restrict__ indices1_s, int* __restrict__ locations1_s, dtype* __restrict__ reshaped_input, dtype* __restrict__ dispatched_input, int samples, int hidden, int capacity) {
  for (int i = blockIdx.x; i < samples; i += gridDim.x)
    if (locations1_s[i] < capacity && indices1_s[i] >= 0) {
      #pragma unroll
      for (int j = threadIdx.x; j < hidden; j += 1024)
        atomicAdd(&dispatched_input[(indices1_s[i] * capacity + locations1_s[i]) * (hidden) + j], gates1_s[i] * reshaped_input[i * (hidden) + j]);
    }
}
"""

_COMBINE_FWD_SRC = r"""
extern "C" __global__ __launch_bounds__(1024) void execute(dtype* __restrict__ gates1_s, int* __restrict__ indices1_s, int* __restrict__ locations1_s, dtype* __restrict__ decoded_output, dtype* __restrict__ expert_output, int samples, int hidden, int capacity) {
  for (int i = blockIdx.x; i < samples; i += gridDim.x)
    if (locations1_s[i] < capacity && indices1_s[i] >= 0) {
      #pragma unroll
      for (int j = threadIdx.x; j < hidden; j += 1024)
        decoded_output[i * hidden + j] += gates1_s[i] * expert_output[(indices1_s[i] * capacity + locations1_s[i]) * (hidden) + j];
    }
}
"""

_GATE_BWD_SRC = r"""
extern "C" __global__ __launch_bounds__(32) void execute(dtype* __restrict__ grad_gates1_s, int* __restrict__ indices1_s, int* __restrict__ locations1_s, dtype* __restrict__ reshaped_input, dtype* __restrict__ dispatched_input, int samples, int hidden, int capacity) {
  for (int index = blockIdx.x; index < samples; index += gridDim.x) {
    if (locations1_s[index] >= capacity || indices1_s[index] < 0) {
      if (((int)threadIdx.x) == 0)
        ((float*)grad_gates1_s)[index] = 0;
      continue;
    }
    int indice = indices1_s[index] * capacity + locations1_s[index];
    dtype grad_gates1_s_rf = 0.0;
    for (int i = threadIdx.x; i < hidden; i += 32)
      grad_gates1_s_rf += dispatched_input[indice * (hidden) + i] * reshaped_input[index * (hidden) + i];
    for (int offset = 16; offset > 0; offset /= 2)
      grad_gates1_s_rf += __shfl_down_sync(0xffffffff, grad_gates1_s_rf, offset);
    if (((int)threadIdx.x) == 0)
      grad_gates1_s[index] = grad_gates1_s_rf;
  }
}
"""

_kernel_cache = {}


def _nvrtc_arch():
    if torch.version.hip is not None:
        return "--offload-arch=native"
    major, minor = torch.cuda.get_device_capability()
    return f"-arch=sm_{major}{minor}"


def _jit(source, dtype):
    key = (source, dtype)
    if key not in _kernel_cache:
        ctype = {torch.float32: "float", torch.float16: "half", torch.bfloat16: "__nv_bfloat16"}[dtype]
        header = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#define dtype %s\n" % ctype
        kernel_id = tutel_custom_kernel.inject_source(header + source, _nvrtc_arch())
        _kernel_cache[key] = lambda *args, blocks=512, threads=1024: tutel_custom_kernel.invoke(kernel_id, list(args), blocks, threads)
    return _kernel_cache[key]


def _cpu_kernels(name):
    # Host implementations shipped in the same extension (OpenMP loops).
    return getattr(tutel_custom_kernel, "cpu_" + name)


def create_forward(dtype, is_cuda):
    if not is_cuda:
        return _cpu_kernels("dispatch")
    return _jit(_DISPATCH_FWD_SRC, dtype)


def create_backward_data(dtype, is_cuda):
    if not is_cuda:
        return _cpu_kernels("combine")
    return _jit(_COMBINE_FWD_SRC, dtype)


def create_backward_gate(dtype, is_cuda):
    if not is_cuda:
        return _cpu_kernels("gate_grad")
    return _jit(_GATE_BWD_SRC, dtype)


def fast_cumsum_sub_one(data, dim=0):
    if data.dim() != 2 or dim != 0:
        raise Exception("Unimplemented fast_cumsum_sub_one() of data = %s and dim = %s" % (data.size(), dim))
    if data.is_cuda and tutel_custom_kernel is not None:
        return tutel_custom_kernel.cumsum(data)
    return torch.cumsum(data, dim=0) - 1


# -----------------------------------------------------------------------------
# autograd wrappers
# -----------------------------------------------------------------------------


class GatingEncoder(torch.autograd.Function):

    @staticmethod
    def forward(ctx: any, config: any, reshaped_input: Tensor, *gates_):
        ctx.reshaped_input = reshaped_input
        ctx.config = config
        if gates_:
            ctx.gates_h2 = [x.view(-1, 1).repeat(1, 2) if x.dtype == torch.float16 else x for x in gates_]
        else:
            ctx.gates_h2 = [ctx.config.ones_helper] * len(ctx.config.indices_)

        dispatched_input = torch.zeros([ctx.config.num_global_experts * ctx.config.capacity, ctx.config.model_dim], dtype=reshaped_input.dtype, device=reshaped_input.device)
        for g, i, l in zip(ctx.gates_h2, ctx.config.indices_, ctx.config.locations_):
            ctx.config.func_fwd(g, i, l, reshaped_input, dispatched_input, ctx.config.sample_size, ctx.config.model_dim, ctx.config.capacity)
        return dispatched_input

    @staticmethod
    def backward(ctx: any, dispatched_input: Tensor):
        dispatched_input = dispatched_input.contiguous()
        last_result = None
        for g, i, l in zip(ctx.gates_h2, ctx.config.indices_, ctx.config.locations_):
            grad_data = torch.empty(ctx.reshaped_input.shape, dtype=dispatched_input.dtype, device=dispatched_input.device)
            ctx.config.func_bwd_data(g, i, l, grad_data, dispatched_input, ctx.config.sample_size, ctx.config.model_dim, ctx.config.capacity)
            last_result = grad_data if last_result is None else last_result + grad_data

        grad_gates = []
        if id(ctx.gates_h2[0]) != id(ctx.config.ones_helper):
            for i, l in zip(ctx.config.indices_, ctx.config.locations_):
                grad_gates1_s = torch.empty([ctx.config.sample_size], dtype=dispatched_input.dtype, device=dispatched_input.device)
                ctx.config.func_bwd_gate(grad_gates1_s, i, l, ctx.reshaped_input, dispatched_input, ctx.config.sample_size, ctx.config.model_dim, ctx.config.capacity)
                grad_gates.append(grad_gates1_s)
        return (None, last_result, *grad_gates)


class GatingDecoder(torch.autograd.Function):

    @staticmethod
    def forward(ctx: any, config: any, expert_output: Tensor, *gates_):
        ctx.expert_output = expert_output
        ctx.config = config
        if gates_:
            ctx.gates_h2 = [x.view(-1, 1).repeat(1, 2) if x.dtype == torch.float16 else x for x in gates_]
        else:
            ctx.gates_h2 = [ctx.config.ones_helper] * len(ctx.config.indices_)

        last_result = None
        for g, i, l in zip(ctx.gates_h2, ctx.config.indices_, ctx.config.locations_):
            single_output = torch.empty([config.sample_size, config.model_dim], dtype=expert_output.dtype, device=expert_output.device)
            config.func_bwd_data(g, i, l, single_output, expert_output, config.sample_size, config.model_dim, config.capacity)
            last_result = single_output if last_result is None else last_result + single_output
        return last_result

    @staticmethod
    def backward(ctx: any, combined_output: Tensor):
        combined_output = combined_output.contiguous()
        grad_expert_output = torch.zeros(ctx.expert_output.shape, dtype=combined_output.dtype, device=combined_output.device)
        for g, i, l in zip(ctx.gates_h2, ctx.config.indices_, ctx.config.locations_):
            ctx.config.func_fwd(g, i, l, combined_output, grad_expert_output, ctx.config.sample_size, ctx.config.model_dim, ctx.config.capacity)

        grad_gates = []
        if id(ctx.gates_h2[0]) != id(ctx.config.ones_helper):
            for i, l in zip(ctx.config.indices_, ctx.config.locations_):
                grad_gates1_s = torch.empty([ctx.config.sample_size], dtype=combined_output.dtype, device=combined_output.device)
                ctx.config.func_bwd_gate(grad_gates1_s, i, l, combined_output, ctx.expert_output, ctx.config.sample_size, ctx.config.model_dim, ctx.config.capacity)
                grad_gates.append(grad_gates1_s)
        return (None, grad_expert_output, *grad_gates)


class TutelMoeFastDispatcher:

    kernel_pool = dict()
    ones_helper = None

    def __init__(self, num_global_experts, capacity, model_dim, dispatch_dtype):
        self.num_global_experts = int(num_global_experts)
        self.capacity = int(capacity)
        self.model_dim = int(model_dim)
        self.dtype = dispatch_dtype
        if not isinstance(self.dtype, torch.dtype):
            self.dtype = torch.float16 if self.dtype == "float16" else torch.float32

    def update(self, indices_, locations_, gates_, capacity=None, is_postscore=True):
        self.indices_ = [x.to(torch.int32).view(-1) for x in indices_]
        self.locations_ = [x.to(torch.int32) for x in locations_]
        self.gates_ = [x.to(self.dtype) for x in gates_]
        self.is_postscore = is_postscore
        self.sample_size, self.capacity = int(self.indices_[0].size(0)), int(capacity) or self.capacity

        if self.ones_helper is None or self.ones_helper.size(0) < self.sample_size:
            self.ones_helper = torch.ones([self.sample_size, 2], dtype=self.dtype, device=self.indices_[0].device)

        tensor_key = (self.dtype, self.indices_[0].device)
        if tensor_key not in TutelMoeFastDispatcher.kernel_pool:
            self.func_fwd = create_forward(self.dtype, indices_[0].is_cuda)
            self.func_bwd_data = create_backward_data(self.dtype, indices_[0].is_cuda)
            self.func_bwd_gate = create_backward_gate(self.dtype, indices_[0].is_cuda)
            TutelMoeFastDispatcher.kernel_pool[tensor_key] = self.func_fwd, self.func_bwd_data, self.func_bwd_gate
        else:
            self.func_fwd, self.func_bwd_data, self.func_bwd_gate = TutelMoeFastDispatcher.kernel_pool[tensor_key]

    def encode(self, data):
        if self.is_postscore:
            return GatingEncoder.apply(self, data)
        return GatingEncoder.apply(self, data, *self.gates_)

    def decode(self, data):
        if self.is_postscore:
            return GatingDecoder.apply(self, data, *self.gates_)
        return GatingDecoder.apply(self, data)


fast_dispatcher = TutelMoeFastDispatcher


def extract_critical(scores, top_k, loss_fn=None, capacity_factor=1.0, batch_prioritized_routing=False, normalize_gate=True, group=None, alignment=1, inequivalent_tokens=False):
    num_global_experts = int(scores.size(1))
    top_k, top_k_original = min(top_k, num_global_experts), top_k
    topk_indices = torch.topk(scores, top_k, dim=1).indices

    indices_s = [x.view(-1) for x in topk_indices.chunk(top_k, dim=1)]

    masks_se = [torch.nn.functional.one_hot(x, num_classes=num_global_experts).to(x.dtype) for x in indices_s]
    gates_s = [(scores * x).sum(dim=1) for x in masks_se]

    l_loss = loss_fn(scores, topk_indices) if loss_fn is not None else None

    if batch_prioritized_routing:
        importance_scores = -1 * scores.max(dim=1)[0]
        compute_location = lambda x: fast_cumsum_sub_one(x.index_select(0, importance_scores.argsort())).index_select(0, importance_scores.argsort().argsort())
    else:
        compute_location = fast_cumsum_sub_one

    locations1 = compute_location(masks_se[0])

    locations_s = [torch.sum(locations1 * masks_se[0], dim=1).to(torch.int32)]

    if top_k > 1:
        acc_base = None
        for k in range(1, top_k):
            acc_base = torch.sum(masks_se[k - 1], dim=0, keepdim=True) if acc_base is None else acc_base + torch.sum(masks_se[k - 1], dim=0, keepdim=True)
            locations2 = compute_location(masks_se[k])
            locations2 += acc_base
            locations_s.append(torch.sum(locations2 * masks_se[k], dim=1).to(torch.int32))

        if normalize_gate:
            denom_s = torch.clamp(sum(gates_s), min=torch.finfo(gates_s[0].dtype).eps)
            gates_s = [x / denom_s for x in gates_s]

    indices_s = [x.to(torch.int32) for x in indices_s]

    if inequivalent_tokens:
        num_samples = torch.tensor(scores.size(0), device=scores.device)
        if C.get_world_size(group) > 1:
            torch.distributed.all_reduce(num_samples, op=torch.distributed.ReduceOp.MAX, group=group)
        num_samples = int(num_samples)
    else:
        num_samples = int(scores.size(0))

    samples_per_expert = (num_samples + num_global_experts - 1) // num_global_experts
    if capacity_factor > 0:
        capacity = top_k * int(capacity_factor * samples_per_expert)
    else:
        capacity = torch.max(torch.cat(locations_s, dim=0))
        capacity = int(C.simple_all_reduce(capacity, group=group, op=torch.distributed.ReduceOp.MAX)) + 1
        if capacity_factor < 0:
            capacity = min(capacity, top_k * int(-capacity_factor * samples_per_expert))

    remainder = capacity % alignment
    if remainder > 0:
        capacity = capacity + alignment - remainder

    if int(os.environ.get("CHECK_TUTEL_CAP", 0)) != 0:
        print(f"[Tutel] capacity = {capacity} (top_k={top_k_original}, alignment={alignment})")

    return (num_global_experts, indices_s, locations_s, gates_s, capacity), l_loss


def fast_encode(data, critial_data, is_postscore=True):
    num_global_experts = critial_data[0]
    dispatcher = TutelMoeFastDispatcher(num_global_experts, 0, data.size(-1), data.dtype)
    dispatcher.update(*critial_data[1:], is_postscore=is_postscore)
    return dispatcher.encode(data).view(num_global_experts, -1, data.size(-1))


def fast_decode(data, critial_data, is_postscore=True):
    num_global_experts = critial_data[0]
    dispatcher = TutelMoeFastDispatcher(num_global_experts, 0, data.size(-1), data.dtype)
    dispatcher.update(*critial_data[1:], is_postscore=is_postscore)
    return dispatcher.decode(data).view(-1, data.size(-1))
