import math
from logging import getLogger

import numpy as np
import torch
import torch.nn as nn
import transformers

logger = getLogger(__name__)

try:
    import autogptq_cuda_256
    import autogptq_cuda_64

    _autogptq_cuda_available = True
except ImportError:
    logger.warning("CUDA extension not installed.")
    autogptq_cuda_256 = None
    autogptq_cuda_64 = None
    _autogptq_cuda_available = False


class QuantLinear(nn.Module):
    QUANT_TYPE = "cuda"

    def __init__(self, bits, group_size, infeatures, outfeatures, bias, kernel_switch_threshold=128,
                 trainable=False, weight_dtype=torch.float16):
        super().__init__()
        global _autogptq_cuda_available
        if bits not in [2, 3, 4, 8]:
            raise NotImplementedError("Only 2,3,4,8 bits are supported.")
        if trainable:
            _autogptq_cuda_available = False

        self.infeatures = infeatures
        self.outfeatures = outfeatures
        self.bits = bits
        self.group_size = group_size if group_size != -1 else infeatures
        self.maxq = 2 ** self.bits - 1

        self.register_buffer("qweight", torch.zeros((infeatures // 32 * self.bits, outfeatures), dtype=torch.int32))
        self.register_buffer("qzeros", torch.zeros((math.ceil(infeatures / self.group_size),
                                                    outfeatures // 32 * self.bits), dtype=torch.int32))
        self.register_buffer("scales", torch.zeros((math.ceil(infeatures / self.group_size), outfeatures),
                                                   dtype=weight_dtype))
        self.register_buffer("g_idx", torch.tensor([i // self.group_size for i in range(infeatures)],
                                                   dtype=torch.int32))
        if bias:
            self.register_buffer("bias", torch.zeros((outfeatures), dtype=weight_dtype))
        else:
            self.bias = None

        # is performed by unpacking the weights and using torch.matmul
        if self.bits in [2, 4, 8]:
            self.wf = torch.tensor(list(range(0, 32, self.bits)), dtype=torch.int32).unsqueeze(0)
        elif self.bits == 3:
            self.wf = torch.tensor([[0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0],
                                    [0, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31],
                                    [0, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0]],
                                   dtype=torch.int32).reshape(1, 3, 12)

        self.kernel_switch_threshold = kernel_switch_threshold
        self.autogptq_cuda_available = _autogptq_cuda_available
        self.autogptq_cuda = autogptq_cuda_256
        if infeatures % 256 != 0 or outfeatures % 256 != 0:
            self.autogptq_cuda = autogptq_cuda_64
        if infeatures % 64 != 0 or outfeatures % 64 != 0:
            self.autogptq_cuda_available = False

        self.trainable = trainable

    def post_init(self):
        pass

    def pack(self, linear, scales, zeros, g_idx=None):
        """Quantise and pack a float nn.Linear into int32 words on the CPU (numpy)."""
        W = linear.weight.data.clone()
        if isinstance(linear, nn.Conv2d):
            W = W.flatten(1)
        if isinstance(linear, transformers.pytorch_utils.Conv1D):
            W = W.t()

        self.g_idx = g_idx.clone() if g_idx is not None else self.g_idx

        scales = scales.t().contiguous()
        zeros = zeros.t().contiguous()
        scale_zeros = zeros * scales
        self.scales = scales.clone().half()
        if linear.bias is not None:
            self.bias = linear.bias.clone().half()

        intweight = []
        for idx in range(self.infeatures):
            intweight.append(
                torch.round((W[:, idx] + scale_zeros[self.g_idx[idx]]) / self.scales[self.g_idx[idx]]).to(torch.int)[:, None])
        intweight = torch.cat(intweight, dim=1)
        intweight = intweight.t().contiguous()
        intweight = intweight.numpy().astype(np.uint32)

        i = 0
        row = 0
        qweight = np.zeros((intweight.shape[0] // 32 * self.bits, intweight.shape[1]), dtype=np.uint32)
        while row < qweight.shape[0]:
            for j in range(i, i + (32 // self.bits)):
                qweight[row] |= intweight[j] << (self.bits * (j - i))
            i += 32 // self.bits
            row += 1
        self.qweight = torch.from_numpy(qweight.astype(np.int32))

    def forward(self, x: torch.Tensor):
        out_shape = x.shape[:-1] + (self.outfeatures,)
        x = x.reshape(-1, x.shape[-1])
        x_dtype = x.dtype
        if (x.device.type == "cuda" and self.autogptq_cuda_available and
                (self.kernel_switch_threshold == 0 or x.shape[0] < self.kernel_switch_threshold)):
            out = torch.zeros((x.shape[0], self.outfeatures), device=x.device, dtype=torch.float32)
            if self.bits == 2:
                self.autogptq_cuda.vecquant2matmul(x.float(), self.qweight, out, self.scales.float(),
                                                   self.qzeros, self.g_idx)
            elif self.bits == 3:
                self.autogptq_cuda.vecquant3matmul(x.float(), self.qweight, out, self.scales.float(),
                                                   self.qzeros, self.g_idx)
            elif self.bits == 4:
                self.autogptq_cuda.vecquant4matmul(x.float(), self.qweight, out, self.scales.float(),
                                                   self.qzeros, self.g_idx)
            elif self.bits == 8:
                self.autogptq_cuda.vecquant8matmul(x.float(), self.qweight, out, self.scales.float(),
                                                   self.qzeros, self.g_idx)
            else:
                raise NotImplementedError("Only 2,3,4,8 bits are supported.")
        else:
            if self.wf.device != self.qzeros.device:
                self.wf = self.wf.to(self.qzeros.device)

            if self.bits in [2, 4, 8]:
                zeros = torch.bitwise_right_shift(torch.unsqueeze(self.qzeros, 2).expand(-1, -1, 32 // self.bits),
                                                  self.wf.unsqueeze(0)).to(torch.int16 if self.bits == 8 else torch.int8)
                zeros = torch.bitwise_and(zeros, (2 ** self.bits) - 1)

                zeros = zeros + 1
                zeros = zeros.reshape(self.scales.shape)

                weight = torch.bitwise_right_shift(torch.unsqueeze(self.qweight, 1).expand(-1, 32 // self.bits, -1),
                                                   self.wf.unsqueeze(-1)).to(torch.int16 if self.bits == 8 else torch.int8)
                weight = torch.bitwise_and(weight, (2 ** self.bits) - 1)
            else:
                raise NotImplementedError("3-bit dequant path omitted in this excerpt")

            weight = weight.reshape(weight.shape[0] * weight.shape[1], weight.shape[2])
            num_itr = self.g_idx.shape[0] // x.shape[-1]
            if num_itr == 1:
                weights = self.scales[self.g_idx.long()] * (weight - zeros[self.g_idx.long()])
            else:
                num_dim = self.g_idx.shape[0] // num_itr
                weights = []
                for i in range(num_itr):
                    scale_i = self.scales[:, i * num_dim: (i + 1) * num_dim]
                    weight_i = weight[:, i * num_dim: (i + 1) * num_dim]
                    zeros_i = zeros[:, i * num_dim: (i + 1) * num_dim]
                    g_idx_i = self.g_idx[i * num_dim: (i + 1) * num_dim]
                    weights.append(scale_i[g_idx_i.long()] * (weight_i - zeros_i[g_idx_i.long()]))
                weights = torch.cat(weights, dim=1)
            out = torch.matmul(x, weights)
        out = out.to(x_dtype)
        out = out.reshape(out_shape)
        out = out + self.bias if self.bias is not None else out
        return out


def autogptq_post_init(model, use_act_order: bool, max_input_length=None):
    """Allocate the shared temp buffers needed by exllama-style kernels, one per CUDA device."""
    device_to_buffers_size = {}
    for name, submodule in model.named_modules():
        if hasattr(submodule, "QUANT_TYPE") and submodule.QUANT_TYPE == "exllama":
            device = submodule.qweight.device
            if device not in device_to_buffers_size:
                device_to_buffers_size[device] = {"max_dq_buffer_size": 1, "max_inner_outer_dim": 1}
    if device_to_buffers_size:
        from exllama_kernels import prepare_buffers, set_tuning_params
        for device, buffers_size in device_to_buffers_size.items():
            temp_state = torch.zeros((max_input_length or 2048, buffers_size["max_inner_outer_dim"]),
                                     dtype=torch.float16, device=device)
            temp_dq = torch.zeros((1, buffers_size["max_dq_buffer_size"]), dtype=torch.float16, device=device)
            prepare_buffers(device, temp_state, temp_dq)
        set_tuning_params(8, 32, 128, 8, False, False)
    torch.cuda.empty_cache()
    return model
