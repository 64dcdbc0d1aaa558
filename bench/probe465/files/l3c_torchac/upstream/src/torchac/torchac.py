"""
Copyright 2019, ETH Zurich

This file is part of L3C-PyTorch.

L3C-PyTorch is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
any later version.

L3C-PyTorch is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
GNU General Public License for more details.

You should have received a copy of the GNU General Public License
along with L3C-PyTorch.  If not, see <https://www.gnu.org/licenses/>.

--------------------------------------------------------------------------------

This file wraps the torchac backends (CPU and GPU). Which one is used
depends on where the `cdf` tensor lives.

"""

# torchac can be built with and without CUDA support.
# Here, we try to import both torchac_backend_gpu and torchac_backend_cpu.
# If both fail, an exception is thrown here already.
#
# The right version is then picked in the functions below.
#
# NOTE:
# Without a clean build, multiple versions might be installed. You may use python seutp.py clean --all to prevent this.
# But it should not be an issue.


import_errors = []


try:
    import torchac_backend_gpu
    CUDA_SUPPORTED = True
except ImportError as e:
    CUDA_SUPPORTED = False
    import_errors.append(e)

try:
    import torchac_backend_cpu
    CPU_SUPPORTED = True
except ImportError as e:
    CPU_SUPPORTED = False
    import_errors.append(e)


imported_at_least_one = CUDA_SUPPORTED or CPU_SUPPORTED


# if import_errors:
#     import_errors_str = '\n'.join(map(str, import_errors))
#     print(f'*** Import errors:\n{import_errors_str}')


if not imported_at_least_one:
    raise ImportError('*** Failed to import any torchac_backend! Make sure to install torchac.\n'
                      'Import errors:\n' + '\n'.join(map(str, import_errors)))


def encode_cdf(cdf, sym):
    """
    :param cdf: CDF as 1HWLp, as int16, on CPU!
    :param sym: the symbols to encode, as int16, on CPU
    :return: byte-string, encoding `sym`
    """
    if cdf.is_cuda and not CUDA_SUPPORTED:
        raise ValueError('CUDA support not available! Move the tensors to CPU (or install torchac with CUDA).')
    if cdf.is_cuda:
        return torchac_backend_gpu.encode_cdf(cdf, sym)
    return torchac_backend_cpu.encode_cdf(cdf, sym)


def decode_cdf(cdf, input_string):
    """
    :param cdf: CDF as 1HWLp, as int16, on CPU
    :return: decoded `sym`.
    """
    if cdf.is_cuda and not CUDA_SUPPORTED:
        raise ValueError('CUDA support not available! Move the tensors to CPU (or install torchac with CUDA).')
    if cdf.is_cuda:
        return torchac_backend_gpu.decode_cdf(cdf, input_string)
    return torchac_backend_cpu.decode_cdf(cdf, input_string)


def encode_logistic_mixture(
        targets, means, log_scales, logit_probs_softmax,  # CDF
        sym):
    """
    NOTE: This function uses either the CUDA or CPU backend, depending on the device of the input tensors.
    NOTE: targets, means, log_scales, logit_probs_softmax must all be on the same device (CPU or GPU)
    In the following, we use
        Lp: Lp = L+1, where L = number of symbols.
        K: number of mixtures
    :param targets: values of symbols, tensor of length Lp, float32
    :param means: tensor of shape NCKHW, float32
    :param log_scales: tensor of shape NCKHW, float32
    :param logit_probs_softmax: tensor of shape NCKHW, float32
    :param sym: symbols to encode. int16
    :return: byte-string, encoding `sym`.
    """
    if not (targets.is_cuda == means.is_cuda == log_scales.is_cuda == logit_probs_softmax.is_cuda):
        raise ValueError('targets, means, log_scales, logit_probs_softmax must all be on the same device! Got '
                         f'{targets.device}, {means.device}, {log_scales.device}, {logit_probs_softmax.device}.')
    if targets.is_cuda:
        return torchac_backend_gpu.encode_logistic_mixture(
            targets, means, log_scales, logit_probs_softmax, sym)
    return torchac_backend_cpu.encode_logistic_mixture(targets, means, log_scales, logit_probs_softmax, sym)


def decode_logistic_mixture(
        targets, means, log_scales, logit_probs_softmax,  # CDF
        input_string):
    """
    NOTE: This function uses either the CUDA or CPU backend, depending on the device of the input tensors.
    NOTE: targets, means, log_scales, logit_probs_softmax must all be on the same device (CPU or GPU)
    In the following, we use
        Lp: Lp = L+1, where L = number of symbols.
        K: number of mixtures
    :param targets: values of symbols, tensor of length Lp, float32
    :param means: tensor of shape NCKHW, float32
    :param log_scales: tensor of shape NCKHW, float32
    :param logit_probs_softmax: tensor of shape NCKHW, float32
    :param input_string: byte-string, encoding some symbols `sym`.
    :return: decoded `sym`.
    """
    if not (targets.is_cuda == means.is_cuda == log_scales.is_cuda == logit_probs_softmax.is_cuda):
        raise ValueError('targets, means, log_scales, logit_probs_softmax must all be on the same device! Got '
                         f'{targets.device}, {means.device}, {log_scales.device}, {logit_probs_softmax.device}.')
    if targets.is_cuda:
        return torchac_backend_gpu.decode_logistic_mixture(
            targets, means, log_scales, logit_probs_softmax, input_string)
    return torchac_backend_cpu.decode_logistic_mixture(targets, means, log_scales, logit_probs_softmax, input_string)
