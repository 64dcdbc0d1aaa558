# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import math

import torch
from torch import nn

from ..entropy_models.entropy_models import BitEstimator, GaussianEncoder, EntropyCoder
from ..layers.cuda_inference import process_with_mask, combine_for_reading_2x, \
    restore_y_2x, build_index_enc, build_index_dec, round_and_to_int8
from ..utils.stream_helper import get_padding_size


class CompressionModel(nn.Module):
    def __init__(self, z_channel, ec_thread=False, stream_part=1):
        super().__init__()

        self.z_channel = z_channel
        self.entropy_coder = None
        self.bit_estimator_z = BitEstimator(64, z_channel)
        self.gaussian_encoder = GaussianEncoder()
        self.ec_thread = ec_thread
        self.stream_part = stream_part

        self.masks = {}
        self.cuda_streams = {}
        self.host_buffers = {}
        self.force_zero_thres = None

    def get_cuda_stream(self, device, idx=0, priority=0):
        key = f"{device}_{priority}_{idx}"
        if key not in self.cuda_streams:
            self.cuda_streams[key] = torch.cuda.Stream(device, priority=priority)
        return self.cuda_streams[key]

    def get_host_buffer(self, key, numel, dtype):
        buf = self.host_buffers.get(key)
        if buf is None or buf.numel() < numel or buf.dtype != dtype:
            buf = torch.empty(numel, dtype=dtype, pin_memory=True)
            self.host_buffers[key] = buf
        return buf[:numel]

    def to_host_async(self, t, key):
        """Copy `t` into a pinned host buffer on a side stream; returns (host_view, event)."""
        host = self.get_host_buffer(key, t.numel(), t.dtype).view(t.shape)
        stream = self.get_cuda_stream(t.device, idx=1, priority=-1)
        stream.wait_stream(torch.cuda.current_stream(t.device))
        with torch.cuda.stream(stream):
            host.copy_(t, non_blocking=True)
        t.record_stream(stream)
        event = torch.cuda.Event()
        event.record(stream)
        return host, event

    def update(self, force_zero_thres=None):
        self.entropy_coder = EntropyCoder(self.ec_thread, self.stream_part)
        self.gaussian_encoder.update(self.entropy_coder)
        self.bit_estimator_z.update(self.entropy_coder)
        self.force_zero_thres = force_zero_thres

    def set_use_two_entropy_coders(self, use_two_entropy_coders):
        self.entropy_coder.set_use_two_entropy_coders(use_two_entropy_coders)

    @staticmethod
    def get_padding_size(height, width, p=64):
        return get_padding_size(height, width, p)

    @staticmethod
    def pad_for_y(x, padding_r, padding_b):
        if padding_r == 0 and padding_b == 0:
            return x
        return torch.nn.functional.pad(x, (0, padding_r, 0, padding_b), mode="replicate")

    @staticmethod
    def get_downsampled_shape(height, width, p):
        new_h = (height + p - 1) // p * p
        new_w = (width + p - 1) // p * p
        return int(new_h / p + 0.5), int(new_w / p + 0.5)

    # ------------------------------------------------------------------ training

    @staticmethod
    def probs_to_bits(probs):
        factor = -1.0 / math.log(2.0)
        bits = torch.log(probs + 1e-5) * factor
        bits = torch.clamp(bits, 0, None)
        return bits

    def get_y_gaussian_bits(self, y, sigma):
        mu = torch.zeros_like(sigma)
        sigma = sigma.clamp(0.11, 1e10)
        gaussian = torch.distributions.normal.Normal(mu, sigma)
        probs = gaussian.cdf(y + 0.5) - gaussian.cdf(y - 0.5)
        return CompressionModel.probs_to_bits(probs)

    def get_y_laplace_bits(self, y, sigma):
        mu = torch.zeros_like(sigma)
        sigma = sigma.clamp(1e-5, 1e10)
        gaussian = torch.distributions.laplace.Laplace(mu, sigma)
        probs = gaussian.cdf(y + 0.5) - gaussian.cdf(y - 0.5)
        return CompressionModel.probs_to_bits(probs)

    def get_z_bits(self, z, bit_estimator, index):
        probs = bit_estimator.get_cdf(z + 0.5, index) - bit_estimator.get_cdf(z - 0.5, index)
        return CompressionModel.probs_to_bits(probs)

    # ------------------------------------------------------------------ masks

    def get_mask_2x(self, batch, channel, height, width, dtype, device):
        curr_mask_str = f"{batch}_{channel}x{width}x{height}_{dtype}_{device}"
        with torch.no_grad():
            if curr_mask_str not in self.masks:
                assert channel % 2 == 0
                m = torch.ones((batch, channel // 2, height, width), dtype=dtype, device=device)
                m0 = m.clone()
                m0[:, :, 0::2, 0::2] = 0
                m0[:, :, 1::2, 1::2] = 0
                m1 = m - m0
                mask_0 = torch.cat((m0, m1), dim=1)
                mask_1 = 1 - mask_0
                self.masks[curr_mask_str] = [mask_0, mask_1]
        return self.masks[curr_mask_str]

    # ------------------------------------------------------------------ coding

    def compress_prior_2x(self, y, common_params, y_spatial_prior):
        y, q_dec, scales, means = common_params
        dtype = y.dtype
        device = y.device
        B, C, H, W = y.size()
        mask_0, mask_1 = self.get_mask_2x(B, C, H, W, dtype, device)

        y_res_0, y_q_0, y_hat_0, s_hat_0 = process_with_mask(y, scales, means, mask_0,
                                                             self.force_zero_thres)
        y_hat_so_far = y_hat_0
        params = torch.cat((y_hat_so_far, common_params[-1]), dim=1)
        scales, means = y_spatial_prior(params).chunk(2, 1)
        y_res_1, y_q_1, y_hat_1, s_hat_1 = process_with_mask(y, scales, means, mask_1,
                                                             self.force_zero_thres)

        y_q_w_0 = combine_for_reading_2x(y_q_0, mask_0)
        y_q_w_1 = combine_for_reading_2x(y_q_1, mask_1)
        s_w_0 = combine_for_reading_2x(s_hat_0, mask_0)
        s_w_1 = combine_for_reading_2x(s_hat_1, mask_1)

        indexes_0, skip_0 = build_index_enc(y_q_w_0, s_w_0, *self.gaussian_encoder.index_params)
        indexes_1, skip_1 = build_index_enc(y_q_w_1, s_w_1, *self.gaussian_encoder.index_params)

        # overlap the device->host copies with the rest of the network
        host_0, ev_0 = self.to_host_async(indexes_0, "idx0")
        host_1, ev_1 = self.to_host_async(indexes_1, "idx1")
        ev_0.synchronize()
        self.entropy_coder.encode_with_indexes_int16(host_0, skip_0)
        ev_1.synchronize()
        self.entropy_coder.encode_with_indexes_int16(host_1, skip_1)

        y_hat = y_hat_0 + y_hat_1
        y_hat = y_hat * q_dec
        return y_hat

    def decompress_prior_2x(self, common_params, y_spatial_prior):
        q_dec, scales, means, ctx = common_params
        dtype = means.dtype
        device = means.device
        B, C, H, W = means.size()
        mask_0, mask_1 = self.get_mask_2x(B, C, H, W, dtype, device)

        decode_stream = self.get_cuda_stream(device, idx=2)
        scales_r = combine_for_reading_2x(scales, mask_0)
        indexes, skip_cond = build_index_dec(scales_r, *self.gaussian_encoder.index_params)
        self.entropy_coder.decode_stream(indexes, skip_cond)
        with torch.cuda.stream(decode_stream):  # upload decoded symbols
            y_q_r = self.entropy_coder.get_decoded_tensor(device, dtype)
        torch.cuda.current_stream().wait_stream(decode_stream)
        y_hat_curr_step = restore_y_2x(y_q_r, means, mask_0)
        y_hat_so_far = y_hat_curr_step

        params = torch.cat((y_hat_so_far, ctx), dim=1)
        scales, means = y_spatial_prior(params).chunk(2, 1)
        scales_r = combine_for_reading_2x(scales, mask_1)
        indexes, skip_cond = build_index_dec(scales_r, *self.gaussian_encoder.index_params)
        self.entropy_coder.decode_stream(indexes, skip_cond)
        y_q_r = self.entropy_coder.get_decoded_tensor(device, dtype)
        y_hat_curr_step = restore_y_2x(y_q_r, means, mask_1)
        y_hat_so_far = y_hat_so_far + y_hat_curr_step

        y_hat = y_hat_so_far * q_dec
        return y_hat

    def compress_z(self, z, index):
        z_hat, z_hat_write = round_and_to_int8(z)
        host_z, ev_z = self.to_host_async(z_hat_write, "z")
        ev_z.synchronize()
        self.bit_estimator_z.encode_z(host_z, index)
        return z_hat

    def decompress_z(self, shape, index, dtype, device):
        z_hat = self.bit_estimator_z.decode_z(shape, index)
        return z_hat.to(device=device, dtype=dtype, non_blocking=True)

    def measure_time(self, fn, *args):
        """Helper used by the benchmark scripts: returns (result, milliseconds)."""
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn(*args)
        end.record()
        torch.cuda.synchronize()
        return out, start.elapsed_time(end)
