import math
import logging
from typing import Dict, List, Optional

import torch
import torch.nn
import torch.nn.functional

from . import modelconfigs

EXTRA_SCORE_DISTR_RADIUS = 60


class ExtraOutputs:
    def __init__(self, requested: List[str]):
        self.requested = set(requested)
        self.available: List[str] = []
        self.returned: Dict[str, torch.Tensor] = {}

    def add(self, name: str, value: torch.Tensor):
        self.available.append(name)
        if name in self.requested:
            self.returned[name] = value


def act(activation, inplace=False):
    if activation == "relu":
        return torch.nn.ReLU(inplace=inplace)
    if activation == "elu":
        return torch.nn.ELU(inplace=inplace)
    if activation == "mish":
        return torch.nn.Mish(inplace=inplace)
    if activation == "gelu":
        return torch.nn.GELU()
    if activation == "hardswish":
        return torch.nn.Hardswish(inplace=inplace)
    if activation == "identity":
        return torch.nn.Identity()
    assert False, f"Unknown activation name: {activation}"


def compute_gain(activation):
    if activation == "relu" or activation == "hardswish":
        return math.sqrt(2.0)
    if activation == "elu":
        return math.sqrt(1.55052)
    if activation == "mish":
        return math.sqrt(2.210277)
    if activation == "gelu":
        return math.sqrt(2.351718)
    if activation == "identity":
        return 1.0
    assert False, f"Unknown activation name: {activation}"


def init_weights(tensor, activation, scale, fan_tensor=None):
    gain = compute_gain(activation)
    if fan_tensor is not None:
        (fan_in, _) = torch.nn.init._calculate_fan_in_and_fan_out(fan_tensor)
    else:
        (fan_in, _) = torch.nn.init._calculate_fan_in_and_fan_out(tensor)
    target_std = scale * gain / math.sqrt(fan_in)
    # Truncated normal has a smaller std than its parameter, correct for that
    std = target_std / 0.87962566103423978
    if std < 1e-10:
        tensor.fill_(0.0)
    else:
        torch.nn.init.trunc_normal_(tensor, mean=0.0, std=std, a=-2.0 * std, b=2.0 * std)


class NormMask(torch.nn.Module):
    """Batch norm restricted to the on-board area given by mask, with optional fixup-style scaling."""

    def __init__(self, c_in, config: modelconfigs.ModelConfig, fixup_use_gamma: bool, force_use_gamma: bool = False, is_last_batchnorm: bool = False):
        super(NormMask, self).__init__()
        self.norm_kind = config["norm_kind"]
        self.epsilon = config["bnorm_epsilon"]
        self.running_avg_momentum = config["bnorm_running_avg_momentum"]
        self.fixup_use_gamma = fixup_use_gamma
        self.is_last_batchnorm = is_last_batchnorm
        self.use_gamma = (
            ("bnorm_use_gamma" in config and config["bnorm_use_gamma"]) or
            (self.norm_kind == "fixup" and fixup_use_gamma) or
            force_use_gamma
        )
        self.c_in = c_in

        self.scale = None
        self.gamma = None
        if self.norm_kind == "fixup" or self.norm_kind == "fixscale":
            self.beta = torch.nn.Parameter(torch.zeros(1, c_in, 1, 1))
            if self.use_gamma:
                self.gamma = torch.nn.Parameter(torch.ones(1, c_in, 1, 1))
        elif self.norm_kind == "bnorm":
            self.beta = torch.nn.Parameter(torch.zeros(1, c_in, 1, 1))
            if self.use_gamma:
                self.gamma = torch.nn.Parameter(torch.ones(1, c_in, 1, 1))
            self.register_buffer("running_mean", torch.zeros(c_in, dtype=torch.float))
            self.register_buffer("running_std", torch.ones(c_in, dtype=torch.float))
        else:
            assert False, f"Unimplemented norm_kind: {self.norm_kind}"

    def set_scale(self, scale: Optional[float]):
        self.scale = scale

    def add_reg_dict(self, reg_dict: Dict[str, List]):
        if self.gamma is not None:
            reg_dict["normal_gamma"].append(self.gamma)
        reg_dict["noreg"].append(self.beta)

    def _compute_bnorm_values(self, x, mask, mask_sum):
        # Mean and variance over batch and on-board locations only
        mean = torch.sum(x * mask, dim=(0, 2, 3), keepdim=True) / mask_sum
        zeromean_x = x - mean
        var = torch.sum(torch.square(zeromean_x * mask), dim=(0, 2, 3), keepdim=True) / mask_sum
        std = torch.sqrt(var + self.epsilon)
        return zeromean_x, mean, std

    def forward(self, x, mask, mask_sum: float):
        if self.norm_kind == "fixup" or self.norm_kind == "fixscale":
            if self.gamma is not None:
                if self.scale is not None:
                    return (x * (self.gamma * self.scale) + self.beta) * mask
                return (x * self.gamma + self.beta) * mask
            if self.scale is not None:
                return (x * self.scale + self.beta) * mask
            return (x + self.beta) * mask

        if self.training:
            zeromean_x, mean, std = self._compute_bnorm_values(x, mask, mask_sum)
            detached_mean = mean.view(self.c_in).detach()
            detached_std = std.view(self.c_in).detach()
            with torch.no_grad():
                self.running_mean += self.running_avg_momentum * (detached_mean - self.running_mean)
                self.running_std += self.running_avg_momentum * (detached_std - self.running_std)
            normalized = zeromean_x / std
        else:
            normalized = (x - self.running_mean.view(1, self.c_in, 1, 1)) / self.running_std.view(1, self.c_in, 1, 1)

        if self.gamma is not None:
            normalized = normalized * self.gamma
        if self.scale is not None:
            normalized = normalized * self.scale
        return (normalized + self.beta) * mask


class KataGPool(torch.nn.Module):
    def __init__(self):
        super(KataGPool, self).__init__()

    def forward(self, x, mask, mask_sum_hw):
        mask_sum_hw_sqrt_offset = torch.sqrt(mask_sum_hw) - 14.0

        layer_mean = torch.sum(x, dim=(2, 3), keepdim=True, dtype=torch.float32) / mask_sum_hw
        # All activation functions we use right now are always greater than -1.0, and map 0 -> 0.
        # So off-board areas will equal 0, and then this max is mask-safe if we assign -1.0 to off-board areas.
        (layer_max, _argmax) = torch.max((x + (mask - 1.0)).view(x.shape[0], x.shape[1], -1).to(torch.float32), dim=2)
        layer_max = layer_max.view(x.shape[0], x.shape[1], 1, 1)

        out_pool1 = layer_mean
        out_pool2 = layer_mean * (mask_sum_hw_sqrt_offset / 10.0)
        out_pool3 = layer_max

        out = torch.cat((out_pool1, out_pool2, out_pool3), dim=1)
        return out


class NormActConv(torch.nn.Module):
    def __init__(self, name, c_in, c_out, c_gpool, config, activation, kernel_size, fixup_use_gamma):
        super(NormActConv, self).__init__()
        self.name = name
        self.activation = activation
        self.kernel_size = kernel_size
        self.norm = NormMask(c_in, config=config, fixup_use_gamma=fixup_use_gamma)
        self.act = act(activation, inplace=True)
        self.c_gpool = c_gpool
        if c_gpool is not None:
            self.convpool = torch.nn.Conv2d(c_in, c_gpool, kernel_size=3, padding="same", bias=False)
            self.normg = NormMask(c_gpool, config=config, fixup_use_gamma=False)
            self.actg = act(activation, inplace=True)
            self.gpool = KataGPool()
            self.linear_g = torch.nn.Linear(3 * c_gpool, c_out, bias=False)
        self.conv = torch.nn.Conv2d(c_in, c_out, kernel_size=kernel_size, padding="same", bias=False)

    def initialize(self, scale):
        init_weights(self.conv.weight, self.activation, scale=scale)
        if self.c_gpool is not None:
            init_weights(self.convpool.weight, self.activation, scale=1.0)
            init_weights(self.linear_g.weight, self.activation, scale=1.0)

    def add_reg_dict(self, reg_dict):
        self.norm.add_reg_dict(reg_dict)
        reg_dict["normal"].append(self.conv.weight)
        if self.c_gpool is not None:
            self.normg.add_reg_dict(reg_dict)
            reg_dict["normal"].append(self.convpool.weight)
            reg_dict["normal"].append(self.linear_g.weight)

    def forward(self, x, mask, mask_sum_hw, mask_sum: float):
        out = self.act(self.norm(x, mask=mask, mask_sum=mask_sum))
        if self.c_gpool is not None:
            outg = self.actg(self.normg(self.convpool(out), mask=mask, mask_sum=mask_sum))
            outg = self.gpool(outg, mask=mask, mask_sum_hw=mask_sum_hw).squeeze(-1).squeeze(-1)
            outg = self.linear_g(outg).unsqueeze(-1).unsqueeze(-1)
            return self.conv(out) + outg
        return self.conv(out)


class ResBlock(torch.nn.Module):
    def __init__(self, name, c_main, c_mid, c_gpool, config, activation):
        super(ResBlock, self).__init__()
        self.name = name
        self.normactconv1 = NormActConv(name + ".normactconv1", c_main, c_mid - (0 if c_gpool is None else c_gpool),
                                        c_gpool, config, activation, kernel_size=3, fixup_use_gamma=False)
        self.normactconv2 = NormActConv(name + ".normactconv2", c_mid - (0 if c_gpool is None else c_gpool), c_main,
                                        None, config, activation, kernel_size=3, fixup_use_gamma=True)

    def initialize(self, fixup_scale):
        self.normactconv1.initialize(scale=1.0)
        self.normactconv2.initialize(scale=fixup_scale)

    def add_reg_dict(self, reg_dict):
        self.normactconv1.add_reg_dict(reg_dict)
        self.normactconv2.add_reg_dict(reg_dict)

    def forward(self, x, mask, mask_sum_hw, mask_sum: float):
        out = self.normactconv1(x, mask=mask, mask_sum_hw=mask_sum_hw, mask_sum=mask_sum)
        out = self.normactconv2(out, mask=mask, mask_sum_hw=mask_sum_hw, mask_sum=mask_sum)
        return x + out


class PolicyHead(torch.nn.Module):
    def __init__(self, c_in, c_p1, c_g1, config, activation):
        super(PolicyHead, self).__init__()
        self.activation = activation
        self.num_policy_outputs = 6
        self.conv1p = torch.nn.Conv2d(c_in, c_p1, kernel_size=1, padding="same", bias=False)
        self.conv1g = torch.nn.Conv2d(c_in, c_g1, kernel_size=1, padding="same", bias=False)
        self.biasg = NormMask(c_g1, config=config, fixup_use_gamma=False, force_use_gamma=True)
        self.actg = act(activation)
        self.gpool = KataGPool()
        self.linear_g = torch.nn.Linear(3 * c_g1, c_p1, bias=False)
        self.linear_pass = torch.nn.Linear(3 * c_g1, c_p1, bias=True)
        self.act_pass = act(activation)
        self.linear_pass2 = torch.nn.Linear(c_p1, self.num_policy_outputs, bias=False)
        self.bias2 = NormMask(c_p1, config=config, fixup_use_gamma=False, force_use_gamma=True)
        self.act2 = act(activation)
        self.conv2p = torch.nn.Conv2d(c_p1, self.num_policy_outputs, kernel_size=1, padding="same", bias=False)

    def initialize(self):
        p_scale = 0.8
        g_scale = 0.6
        bias_scale = 0.2
        scale_output = 0.3
        init_weights(self.conv1p.weight, self.activation, scale=p_scale)
        init_weights(self.conv1g.weight, self.activation, scale=1.0)
        init_weights(self.linear_g.weight, self.activation, scale=g_scale)
        init_weights(self.linear_pass.weight, self.activation, scale=1.0)
        init_weights(self.linear_pass.bias, self.activation, scale=bias_scale, fan_tensor=self.linear_pass.weight)
        init_weights(self.linear_pass2.weight, "identity", scale=scale_output)
        init_weights(self.conv2p.weight, "identity", scale=scale_output)

    def add_reg_dict(self, reg_dict):
        reg_dict["output"].append(self.conv1p.weight)
        reg_dict["output"].append(self.conv1g.weight)
        reg_dict["output"].append(self.linear_g.weight)
        reg_dict["output"].append(self.linear_pass.weight)
        reg_dict["output_noreg"].append(self.linear_pass.bias)
        reg_dict["output"].append(self.linear_pass2.weight)
        reg_dict["output"].append(self.conv2p.weight)
        self.biasg.add_reg_dict(reg_dict)
        self.bias2.add_reg_dict(reg_dict)

    def forward(self, x, mask, mask_sum_hw, mask_sum: float):
        outp = self.conv1p(x)
        outg = self.conv1g(x)
        outg = self.actg(self.biasg(outg, mask=mask, mask_sum=mask_sum))
        outg = self.gpool(outg, mask=mask, mask_sum_hw=mask_sum_hw).squeeze(-1).squeeze(-1)

        outpass = self.act_pass(self.linear_pass(outg))
        outpass = self.linear_pass2(outpass)

        outp = outp + self.linear_g(outg).unsqueeze(-1).unsqueeze(-1)
        outp = self.act2(self.bias2(outp, mask=mask, mask_sum=mask_sum))
        outp = self.conv2p(outp)
        outp = outp - (1.0 - mask) * 5000.0
        # NC(HW) concat with NC1
        return torch.cat((outp.view(outp.shape[0], outp.shape[1], -1), outpass.unsqueeze(-1)), dim=2)


class ValueHead(torch.nn.Module):
    def __init__(self, c_in, c_v1, c_v2, c_sv2, num_scorebeliefs, config, activation, pos_len):
        super(ValueHead, self).__init__()
        self.activation = activation
        self.conv1 = torch.nn.Conv2d(c_in, c_v1, kernel_size=1, padding="same", bias=False)
        self.bias1 = NormMask(c_v1, config=config, fixup_use_gamma=False, force_use_gamma=True)
        self.act1 = act(activation)
        self.gpool = KataGPool()
        self.linear2 = torch.nn.Linear(3 * c_v1, c_v2, bias=True)
        self.act2 = act(activation)
        self.linear_valuehead = torch.nn.Linear(c_v2, 3, bias=True)
        self.linear_miscvaluehead = torch.nn.Linear(c_v2, 10, bias=True)
        self.linear_moremiscvaluehead = torch.nn.Linear(c_v2, 8, bias=True)
        self.conv_ownership = torch.nn.Conv2d(c_v1, 1, kernel_size=1, padding="same", bias=False)
        self.conv_scoring = torch.nn.Conv2d(c_v1, 1, kernel_size=1, padding="same", bias=False)
        self.pos_len = pos_len
        self.scorebelief_mid = self.pos_len * self.pos_len + EXTRA_SCORE_DISTR_RADIUS
        self.scorebelief_len = self.scorebelief_mid * 2
        self.linear_s = torch.nn.Linear(3 * c_v1, self.scorebelief_len, bias=True)

    def forward(self, x, mask, mask_sum_hw, mask_sum: float, input_global):
        outv1 = self.conv1(x)
        outv1 = self.act1(self.bias1(outv1, mask=mask, mask_sum=mask_sum))
        outpooled = self.gpool(outv1, mask=mask, mask_sum_hw=mask_sum_hw).squeeze(-1).squeeze(-1)

        outv2 = self.act2(self.linear2(outpooled))
        out_value = self.linear_valuehead(outv2)
        out_miscvalue = self.linear_miscvaluehead(outv2)
        out_moremiscvalue = self.linear_moremiscvaluehead(outv2)
        out_ownership = self.conv_ownership(outv1) * mask
        out_scoring = self.conv_scoring(outv1) * mask

        out_scorebelief_logprobs = torch.nn.functional.log_softmax(self.linear_s(outpooled), dim=1)
        return (out_value, out_miscvalue, out_moremiscvalue, out_ownership, out_scoring, out_scorebelief_logprobs)


class Model(torch.nn.Module):
    def __init__(self, config: modelconfigs.ModelConfig, pos_len: int):
        super(Model, self).__init__()
        self.config = config
        self.norm_kind = config["norm_kind"]
        self.block_kind = config["block_kind"]
        self.c_trunk = config["trunk_num_channels"]
        self.c_mid = config["mid_num_channels"]
        self.c_gpool = config["gpool_num_channels"]
        self.c_p1 = config["p1_num_channels"]
        self.c_g1 = config["g1_num_channels"]
        self.c_v1 = config["v1_num_channels"]
        self.c_v2 = config["v2_size"]
        self.c_sv2 = config["sbv2_num_channels"]
        self.num_scorebeliefs = config["num_scorebeliefs"]
        self.activation = config.get("activation", "relu")
        self.pos_len = pos_len

        self.conv_spatial = torch.nn.Conv2d(modelconfigs.get_num_bin_input_features(config), self.c_trunk,
                                            kernel_size=3, padding="same", bias=False)
        self.linear_global = torch.nn.Linear(modelconfigs.get_num_global_input_features(config), self.c_trunk, bias=False)

        self.blocks = torch.nn.ModuleList()
        for block_config in self.block_kind:
            block_name = block_config[0]
            block_kind = block_config[1]
            use_gpool_this_block = block_kind.endswith("gpool")
            self.blocks.append(ResBlock(
                name=block_name,
                c_main=self.c_trunk,
                c_mid=self.c_mid,
                c_gpool=(self.c_gpool if use_gpool_this_block else None),
                config=self.config,
                activation=self.activation,
            ))

        self.norm_trunkfinal = NormMask(self.c_trunk, self.config, fixup_use_gamma=False, is_last_batchnorm=True)
        self.act_trunkfinal = act(self.activation)
        self.policy_head = PolicyHead(self.c_trunk, self.c_p1, self.c_g1, self.config, self.activation)
        self.value_head = ValueHead(self.c_trunk, self.c_v1, self.c_v2, self.c_sv2, self.num_scorebeliefs,
                                    self.config, self.activation, self.pos_len)

    def initialize(self):
        with torch.no_grad():
            spatial_scale = 0.8
            global_scale = 0.6
            init_weights(self.conv_spatial.weight, self.activation, scale=spatial_scale)
            init_weights(self.linear_global.weight, self.activation, scale=global_scale)
            fixup_scale = 1.0 / math.sqrt(len(self.blocks)) if self.norm_kind == "fixup" else 1.0
            for block in self.blocks:
                block.initialize(fixup_scale=fixup_scale)
            self.policy_head.initialize()

    def add_reg_dict(self, reg_dict: Dict[str, List]):
        for key in ("normal", "normal_gamma", "output", "noreg", "output_noreg"):
            reg_dict.setdefault(key, [])
        reg_dict["normal"].append(self.conv_spatial.weight)
        reg_dict["normal"].append(self.linear_global.weight)
        for block in self.blocks:
            block.add_reg_dict(reg_dict)
        self.norm_trunkfinal.add_reg_dict(reg_dict)
        self.policy_head.add_reg_dict(reg_dict)
        for p in self.value_head.parameters():
            reg_dict["output"].append(p)

    def forward(self, input_spatial, input_global, extra_outputs: Optional[ExtraOutputs] = None):
        mask = input_spatial[:, 0:1, :, :].contiguous()
        mask_sum_hw = torch.sum(mask, dim=(2, 3), keepdim=True)
        mask_sum = torch.sum(mask)

        x_spatial = self.conv_spatial(input_spatial)
        x_global = self.linear_global(input_global).unsqueeze(-1).unsqueeze(-1)
        out = x_spatial + x_global

        for block in self.blocks:
            out = block(out, mask=mask, mask_sum_hw=mask_sum_hw, mask_sum=mask_sum)

        out = self.norm_trunkfinal(out, mask=mask, mask_sum=mask_sum)
        out = self.act_trunkfinal(out)
        if extra_outputs is not None:
            extra_outputs.add("trunkfinal", out)

        out_policy = self.policy_head(out, mask=mask, mask_sum_hw=mask_sum_hw, mask_sum=mask_sum)
        value_outputs = self.value_head(out, mask=mask, mask_sum_hw=mask_sum_hw, mask_sum=mask_sum, input_global=input_global)
        return ((out_policy,) + value_outputs,)

    def float32ify_output(self, outputs):
        return tuple(tuple(t.to(torch.float32) for t in head) for head in outputs)

    def postprocess_output(self, outputs):
        return tuple(self.postprocess_single(o) for o in outputs)

    def postprocess_single(self, outputs):
        (out_policy, out_value, out_miscvalue, out_moremiscvalue, out_ownership, out_scoring, out_scorebelief_logprobs) = outputs
        td_score_multiplier = 20.0
        scoremean_multiplier = 20.0
        scorestdev_multiplier = 20.0
        lead_multiplier = 20.0
        out_scoremean = out_miscvalue[:, 0] * scoremean_multiplier
        out_scorestdev = torch.nn.functional.softplus(out_miscvalue[:, 1]) * scorestdev_multiplier
        out_lead = out_miscvalue[:, 2] * lead_multiplier
        out_td_score = out_moremiscvalue[:, 4:7] * td_score_multiplier
        return (
            out_policy, out_value, out_scoremean, out_scorestdev, out_lead, out_td_score,
            out_ownership, out_scoring, out_scorebelief_logprobs,
        )
