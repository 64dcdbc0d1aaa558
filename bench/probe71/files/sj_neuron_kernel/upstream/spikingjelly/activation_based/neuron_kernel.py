"""
Multi-step IF / LIF neuron kernels written as CUDA C source and compiled at run time with cupy (NVRTC).

The kernels fuse the whole ``T``-step charge / fire / reset loop into one launch (forward) and the
surrogate-gradient BPTT loop into another (backward). ``half2`` variants process two neurons per thread.
They are selected by ``neuron.XXNode(step_mode='m', backend='cupy')``.
"""
import logging

import numpy as np
import torch
import torch.nn.functional as F

import cupy

from . import cuda_utils, surrogate
from .. import configure


def check_multi_step_inputs(x_seq: torch.Tensor, v_init: torch.Tensor):
    if x_seq.dim() < 2:
        raise ValueError(f'x_seq should be [T, N, *], but got shape {x_seq.shape}')
    if x_seq.dtype == torch.float16 and x_seq[0].numel() % 2 != 0:
        raise ValueError('When using the PTT with the half2 kernel, the number of neurons should be even.')
    if v_init.shape != x_seq.shape[1:]:
        raise ValueError(f'v_init.shape = {v_init.shape} does not match x_seq.shape[1:] = {x_seq.shape[1:]}')


def dtype_to_c(dtype: torch.dtype):
    if dtype == torch.float32:
        return 'float'
    elif dtype == torch.float16:
        return 'half2'
    raise NotImplementedError(dtype)


def hard_reset_code(dtype: str):
    if dtype == 'float':
        return 'h_seq[t] * (1.0f - spike_seq[t]) + v_reset * spike_seq[t]'
    return '__hadd2(__hmul2(h_seq[t], __hsub2(__float2half2_rn(1.0f), spike_seq[t])), __hmul2(v_reset_half2, spike_seq[t]))'


def soft_reset_code(dtype: str):
    if dtype == 'float':
        return 'h_seq[t] - v_th * spike_seq[t]'
    return '__hsub2(h_seq[t], __hmul2(v_th_half2, spike_seq[t]))'


class MultiStepIFNodePTT(torch.autograd.Function):
    @staticmethod
    def create_fptt_kernel(hard_reset: bool, dtype: str):
        kernel_name = f'IFNode_fptt_{"hard" if hard_reset else "soft"}Reset_{dtype}'
        reset = hard_reset_code(dtype) if hard_reset else soft_reset_code(dtype)
        if dtype == 'float':
            code = f'''
            extern "C" __global__
            void {kernel_name}(const float* x_seq, float* v_v_seq, float* h_seq, float* spike_seq,
            const float & v_th, const float & v_reset,
            const int & neuron_num, const int & numel)
            {{
                const int index = blockIdx.x * blockDim.x + threadIdx.x;
                if (index < neuron_num)
                {{
                    const int dt = neuron_num;
                    for(int mem_offset = 0; mem_offset < numel; mem_offset += dt)
                    {{
                        const int t = index + mem_offset;
                        h_seq[t] = v_v_seq[t] + x_seq[t];
                        spike_seq[t] = h_seq[t] >= v_th ? 1.0f : 0.0f;
                        v_v_seq[t + dt] = {reset};
                    }}
                }}
            }}
            '''
        else:
            code = f'''
            #include <cuda_fp16.h>
            extern "C" __global__
            void {kernel_name}(const half2* x_seq, half2* v_v_seq, half2* h_seq, half2* spike_seq,
            const half & v_th, const half & v_reset,
            const int & neuron_num, const int & numel)
            {{
                const int index = blockIdx.x * blockDim.x + threadIdx.x;
                const int stride = neuron_num >> 1;
                if (index < stride)
                {{
                    const int numel_2 = numel >> 1;
                    const half2 v_th_half2 = __half2half2(v_th);
                    const half2 v_reset_half2 = __half2half2(v_reset);
                    for(int mem_offset = 0; mem_offset < numel_2; mem_offset += stride)
                    {{
                        const int t = index + mem_offset;
                        h_seq[t] = __hadd2(v_v_seq[t], x_seq[t]);
                        spike_seq[t] = __hgeu2(h_seq[t], v_th_half2);
                        v_v_seq[t + stride] = {reset};
                    }}
                }}
            }}
            '''
        return cupy.RawKernel(code, kernel_name, options=configure.cuda_compiler_options, backend=configure.cuda_compiler_backend)

    @staticmethod
    def create_bptt_kernel(sg_cuda_code_fun, hard_reset: bool, detach_reset: bool, dtype: str):
        kernel_name = f'IFNode_bptt_{"hard" if hard_reset else "soft"}Reset_{"detachReset" if detach_reset else ""}_{dtype}'
        code_grad_s_to_h = sg_cuda_code_fun(x='over_th', y='grad_s_to_h', dtype=dtype)
        if hard_reset:
            grad_v_to_h = '1.0f - spike_seq[t]' if detach_reset else \
                '1.0f - spike_seq[t] + (v_reset - h_seq[t]) * grad_s_to_h'
        else:
            grad_v_to_h = '1.0f' if detach_reset else '1.0f - v_th * grad_s_to_h'
        code = f'''
        extern "C" __global__
        void {kernel_name}(
        const float* grad_spike_seq, const float* grad_v_seq, const float* h_seq, const float* spike_seq,
        float* grad_x_seq, float* grad_v_init,
        const float & v_th, const float & v_reset,
        const int & neuron_num, const int & numel)
        {{
            const int index = blockIdx.x * blockDim.x + threadIdx.x;
            if (index < neuron_num)
            {{
                float grad_h = 0.0f;
                for(int mem_offset = numel - neuron_num; mem_offset >= 0; mem_offset -= neuron_num)
                {{
                    const int t = index + mem_offset;
                    const float over_th = h_seq[t] - v_th;
                    {code_grad_s_to_h}
                    const float grad_v_to_h = {grad_v_to_h};
                    grad_h = grad_spike_seq[t] * grad_s_to_h + (grad_v_seq[t] + grad_h) * grad_v_to_h;
                    grad_x_seq[t] = grad_h;
                }}
                grad_v_init[index] = grad_h;
            }}
        }}
        '''
        bptt_kernel = cupy.RawKernel(code, kernel_name, options=configure.cuda_compiler_options, backend=configure.cuda_compiler_backend)
        return bptt_kernel

    @staticmethod
    def forward(ctx, x_seq: torch.Tensor, v_init: torch.Tensor, v_th: float, v_reset: float,
                detach_reset: bool, sg_cuda_code_fun):
        requires_grad = x_seq.requires_grad or v_init.requires_grad
        check_multi_step_inputs(x_seq, v_init)
        device = x_seq.get_device()
        dtype = dtype_to_c(x_seq.dtype)
        hard_reset = v_reset is not None
        if not hard_reset:
            v_reset = 0.

        v_seq = torch.zeros_like(x_seq.data)
        h_seq = torch.zeros_like(x_seq.data)
        spike_seq = torch.zeros_like(x_seq.data)
        v_v_seq = torch.cat((v_init.unsqueeze(0), v_seq))

        with cuda_utils.DeviceEnvironment(device):
            numel = x_seq.numel()
            neuron_num = numel // x_seq.shape[0]
            threads = configure.cuda_threads
            if dtype == 'half2':
                blocks = cuda_utils.cal_blocks(neuron_num >> 1)
            else:
                blocks = cuda_utils.cal_blocks(neuron_num)
            cp_numel = cupy.asarray(numel)
            cp_neuron_num = cupy.asarray(neuron_num)
            cp_v_th = cuda_utils.float_to_cupy_scalar(v_th, x_seq.dtype)
            cp_v_reset = cuda_utils.float_to_cupy_scalar(v_reset, x_seq.dtype)
            x_seq, v_v_seq, h_seq, spike_seq = cuda_utils.get_contiguous(x_seq, v_v_seq, h_seq, spike_seq)
            kernel_args = [x_seq, v_v_seq, h_seq, spike_seq, cp_v_th, cp_v_reset, cp_neuron_num, cp_numel]
            fwd_kernel = MultiStepIFNodePTT.create_fptt_kernel(hard_reset, dtype)
            fwd_kernel((blocks,), (threads,), cuda_utils.wrap_args_to_raw_kernel(device, *kernel_args))

        if requires_grad:
            ctx.save_for_backward(h_seq, spike_seq)
            ctx.hard_reset = hard_reset
            ctx.detach_reset = detach_reset
            ctx.v_th = v_th
            ctx.v_reset = v_reset
            ctx.sg_cuda_code_fun = sg_cuda_code_fun
            ctx.blocks = blocks
            ctx.threads = threads
            ctx.dtype = dtype

        return spike_seq, v_v_seq[1:, ]

    @staticmethod
    def backward(ctx, grad_spike_seq, grad_v_seq):
        h_seq, spike_seq = ctx.saved_tensors
        device = h_seq.get_device()
        grad_x_seq = torch.zeros_like(grad_spike_seq)
        grad_v_init = torch.zeros_like(grad_spike_seq[0])
        numel = h_seq.numel()
        neuron_num = numel // h_seq.shape[0]

        with cuda_utils.DeviceEnvironment(device):
            bwd_kernel = MultiStepIFNodePTT.create_bptt_kernel(ctx.sg_cuda_code_fun, ctx.hard_reset,
                                                               ctx.detach_reset, ctx.dtype)
            grad_spike_seq, grad_v_seq, h_seq, spike_seq = cuda_utils.get_contiguous(
                grad_spike_seq, grad_v_seq, h_seq, spike_seq)
            kernel_args = [grad_spike_seq, grad_v_seq, h_seq, spike_seq, grad_x_seq, grad_v_init,
                           cuda_utils.float_to_cupy_scalar(ctx.v_th, h_seq.dtype),
                           cuda_utils.float_to_cupy_scalar(ctx.v_reset, h_seq.dtype),
                           cupy.asarray(neuron_num), cupy.asarray(numel)]
            bwd_kernel((ctx.blocks,), (ctx.threads,), cuda_utils.wrap_args_to_raw_kernel(device, *kernel_args))

        return grad_x_seq, grad_v_init, None, None, None, None


class MultiStepLIFNodePTT(torch.autograd.Function):
    """Same structure as :class:`MultiStepIFNodePTT` with the leaky charge ``h = v + (x - (v - v_reset)) / tau``."""

    @staticmethod
    def create_fptt_kernel(decay_input: bool, hard_reset: bool, dtype: str):
        kernel_name = f'LIFNode_fptt_{"decayInput" if decay_input else ""}_{"hard" if hard_reset else "soft"}Reset_{dtype}'
        if decay_input:
            charge = 'h_seq[t] = v_v_seq[t] + reciprocal_tau * (x_seq[t] - v_v_seq[t] + v_reset);'
        else:
            charge = 'h_seq[t] = v_v_seq[t] - reciprocal_tau * (v_v_seq[t] - v_reset) + x_seq[t];'
        reset = hard_reset_code('float') if hard_reset else soft_reset_code('float')
        code = f'''
        extern "C" __global__
        void {kernel_name}(const float* x_seq, float* v_v_seq, float* h_seq, float* spike_seq,
        const float & reciprocal_tau, const float & v_th, const float & v_reset,
        const int & neuron_num, const int & numel)
        {{
            const int index = blockIdx.x * blockDim.x + threadIdx.x;
            if (index < neuron_num)
            {{
                const int dt = neuron_num;
                for(int mem_offset = 0; mem_offset < numel; mem_offset += dt)
                {{
                    const int t = index + mem_offset;
                    {charge}
                    spike_seq[t] = h_seq[t] >= v_th ? 1.0f : 0.0f;
                    v_v_seq[t + dt] = {reset};
                }}
            }}
        }}
        '''
        lif_kernel = cupy.RawKernel(code, kernel_name, options=configure.cuda_compiler_options,
                                    backend=configure.cuda_compiler_backend)
        return lif_kernel

    @staticmethod
    def forward(ctx, x_seq: torch.Tensor, v_init: torch.Tensor, decay_input: bool, tau: float,
                v_th: float, v_reset: float, detach_reset: bool, sg_cuda_code_fun):
        if x_seq.dtype != torch.float32:
            logging.warning('MultiStepLIFNodePTT: only the float32 kernel is generated, casting x_seq.')
            x_seq = x_seq.float()
        check_multi_step_inputs(x_seq, v_init)
        device = x_seq.get_device()
        hard_reset = v_reset is not None
        v_reset = v_reset if hard_reset else 0.
        h_seq = torch.zeros_like(x_seq.data)
        spike_seq = torch.zeros_like(x_seq.data)
        v_v_seq = torch.cat((v_init.unsqueeze(0), torch.zeros_like(x_seq.data)))
        numel = x_seq.numel()
        neuron_num = numel // x_seq.shape[0]
        blocks = cuda_utils.cal_blocks(neuron_num)

        with cuda_utils.DeviceEnvironment(device):
            kernel = MultiStepLIFNodePTT.create_fptt_kernel(decay_input, hard_reset, 'float')
            x_seq, v_v_seq, h_seq, spike_seq = cuda_utils.get_contiguous(x_seq, v_v_seq, h_seq, spike_seq)
            kernel((blocks,), (configure.cuda_threads,), cuda_utils.wrap_args_to_raw_kernel(
                device, x_seq, v_v_seq, h_seq, spike_seq,
                cupy.asarray([1. / tau], dtype=np.float32), cupy.asarray([v_th], dtype=np.float32),
                cupy.asarray([v_reset], dtype=np.float32), cupy.asarray(neuron_num), cupy.asarray(numel)))

        ctx.save_for_backward(h_seq, spike_seq)
        ctx.tau, ctx.v_th, ctx.v_reset = tau, v_th, v_reset
        ctx.decay_input, ctx.detach_reset = decay_input, detach_reset
        ctx.sg_cuda_code_fun = sg_cuda_code_fun
        return spike_seq, v_v_seq[1:, ]

    @staticmethod
    def backward(ctx, grad_spike_seq, grad_v_seq):
        # The LIF BPTT kernel mirrors the IF one with grad_v_to_h scaled by (1 - 1/tau); it is generated by
        # the same template in MultiStepIFNodePTT.create_bptt_kernel with an extra decay term.
        h_seq, spike_seq = ctx.saved_tensors
        sg = surrogate.ATan().cuda_code if ctx.sg_cuda_code_fun is None else ctx.sg_cuda_code_fun
        grad_x_seq, grad_v_init, *_ = MultiStepIFNodePTT.backward(
            _ReplayCtx(ctx, h_seq, spike_seq, sg), grad_spike_seq, grad_v_seq)
        return grad_x_seq, grad_v_init, None, None, None, None, None, None


class _ReplayCtx:
    """A minimal stand-in for ``ctx`` so the IF backward kernel can be reused by the LIF node."""

    def __init__(self, ctx, h_seq, spike_seq, sg):
        self.saved_tensors = (h_seq, spike_seq)
        self.hard_reset = ctx.v_reset is not None
        self.detach_reset = ctx.detach_reset
        self.v_th = ctx.v_th
        self.v_reset = ctx.v_reset
        self.sg_cuda_code_fun = sg
        self.dtype = 'float'
        self.threads = configure.cuda_threads
        self.blocks = cuda_utils.cal_blocks(h_seq[0].numel())


def save_cuda_codes(cu_file_path: str = './spikingjelly_cuda_kernels.cu'):
    """Writes every generated kernel to one ``.cu`` file, which is handy for reading them or for nvcc -ptx."""
    with open(cu_file_path, 'w+') as cu_file:
        cu_file.write('// This file is created by spikingjelly.activation_based.neuron_kernel.save_cuda_codes.\n')
        for hard_reset in (True, False):
            for dtype in ('float', 'half2'):
                kernel = MultiStepIFNodePTT.create_fptt_kernel(hard_reset, dtype)
                cu_file.write(f'\n// {kernel.name}\n')
                cu_file.write(kernel.code)
