"""LEARN: Learned Experts' Assessment-based Reconstruction Network.

Unrolls a fields-of-experts regularised gradient descent for sparse-view / low-dose
fan-beam CT:

    x^{t+1} = x^t - alpha_t * A^T (A x^t - y) - R_t(x^t)

The data-fidelity gradient is evaluated with the projection / back-projection pair
of CTLIB, whose kernels run on the GPU; the regulariser R_t is a small CNN.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
import ctlib


class prj_module(nn.Module):
    def __init__(self, options):
        super(prj_module, self).__init__()
        self.weight = nn.Parameter(torch.Tensor(1))
        # geometry vector travels with the module (.to(device) moves it too)
        self.options = nn.Parameter(options, requires_grad=False)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.zeros_(self.weight)

    def forward(self, input_data, proj):
        return prj_fun.apply(input_data, self.weight, proj, self.options)


class prj_fun(Function):
    @staticmethod
    def forward(ctx, input_data, weight, proj, options):
        temp = ctlib.projection(input_data, options) - proj
        intervening_res = ctlib.backprojection(temp, options)
        ctx.save_for_backward(intervening_res, weight, options)
        out = input_data - weight * intervening_res
        return out

    @staticmethod
    def backward(ctx, grad_output):
        intervening_res, weight, options = ctx.saved_tensors
        temp = ctlib.projection(grad_output, options)
        temp = ctlib.backprojection(temp, options)
        grad_input = grad_output - weight * temp
        temp = intervening_res * grad_output
        grad_weight = - temp.sum().view(-1)
        return grad_input, grad_weight, None, None


class fbp_module(nn.Module):
    """Filtered back-projection used to initialise the unrolled iterations."""
    def __init__(self, options):
        super(fbp_module, self).__init__()
        self.options = nn.Parameter(options, requires_grad=False)

    def forward(self, proj):
        return fbp_fun.apply(proj, self.options)


class fbp_fun(Function):
    @staticmethod
    def forward(ctx, proj, options):
        ctx.save_for_backward(options)
        return ctlib.fbp(proj, options)

    @staticmethod
    def backward(ctx, grad_output):
        options, = ctx.saved_tensors
        grad_input = ctlib.fbp_t(grad_output.contiguous(), options)
        return grad_input, None


class RegularizationBlock(nn.Module):
    def __init__(self, hid_channels=48, kernel_size=5, padding=2):
        super(RegularizationBlock, self).__init__()
        self.conv1 = nn.Conv2d(1, hid_channels, kernel_size, padding=padding)
        self.conv2 = nn.Conv2d(hid_channels, hid_channels, kernel_size, padding=padding)
        self.conv3 = nn.Conv2d(hid_channels, 1, kernel_size, padding=padding)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.conv1(x))
        out = self.relu(self.conv2(out))
        out = self.conv3(out)
        return out


class Iter_block(nn.Module):
    def __init__(self, hid_channels, kernel_size, padding, options):
        super(Iter_block, self).__init__()
        self.block1 = prj_module(options)
        self.block2 = RegularizationBlock(hid_channels, kernel_size, padding)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, input_data, proj):
        tmp1 = self.block1(input_data, proj)
        tmp2 = self.block2(input_data)
        output = tmp1 + tmp2
        output = self.relu(output)
        return output


class Learn(nn.Module):
    def __init__(self, block_num, **kwargs):
        super(Learn, self).__init__()
        views = kwargs['views']
        dets = kwargs['dets']
        width = kwargs['width']
        height = kwargs['height']
        dImg = kwargs['dImg']
        dDet = kwargs['dDet']
        Ang0 = kwargs.get('Ang0', 0)
        dAng = kwargs['dAng']
        s2r = kwargs['s2r']
        d2r = kwargs['d2r']
        binshift = kwargs['binshift']
        scan_type = kwargs.get('scan_type', 0)   # 0: equi-distant fan beam, 1: equi-angular, 2: parallel
        options = torch.Tensor([views, dets, width, height, dImg, dDet, Ang0, dAng, s2r, d2r, binshift, scan_type])
        self.fbp = fbp_module(options)
        self.model = nn.ModuleList([Iter_block(48, 5, 2, options) for i in range(block_num)])
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.normal_(module.weight, mean=0, std=0.01)
                if module.bias is not None:
                    module.bias.data.zero_()

    def forward(self, proj, input_data=None):
        if input_data is None:
            x = self.fbp(proj)
        else:
            x = input_data
        for index, module in enumerate(self.model):
            x = module(x, proj)
        return x


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class DualIterBlock(nn.Module):
    """LEARN++ style block: an extra sinogram-domain CNN corrects the residual A x - y
    before it is back-projected (dual-domain unrolling)."""
    def __init__(self, hid_channels, options):
        super(DualIterBlock, self).__init__()
        self.options = nn.Parameter(options, requires_grad=False)
        self.weight = nn.Parameter(torch.zeros(1))
        self.sino_cnn = RegularizationBlock(hid_channels, 5, 2)
        self.img_cnn = RegularizationBlock(hid_channels, 5, 2)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, proj):
        residual = projection_op.apply(x, self.options) - proj
        residual = residual + self.sino_cnn(residual)
        grad = backprojection_op.apply(residual, self.options)
        x = x - self.weight * grad + self.img_cnn(x)
        return self.relu(x)


class projection_op(Function):
    @staticmethod
    def forward(ctx, x, options):
        ctx.save_for_backward(options)
        return ctlib.projection(x.contiguous(), options)

    @staticmethod
    def backward(ctx, grad_output):
        options, = ctx.saved_tensors
        return ctlib.projection_t(grad_output.contiguous(), options), None


class backprojection_op(Function):
    @staticmethod
    def forward(ctx, proj, options):
        ctx.save_for_backward(options)
        return ctlib.backprojection(proj.contiguous(), options)

    @staticmethod
    def backward(ctx, grad_output):
        options, = ctx.saved_tensors
        return ctlib.backprojection_t(grad_output.contiguous(), options), None


class LearnPlusPlus(Learn):
    def __init__(self, block_num, **kwargs):
        super(LearnPlusPlus, self).__init__(block_num, **kwargs)
        options = self.fbp.options.data.clone()
        self.model = nn.ModuleList([DualIterBlock(48, options) for _ in range(block_num)])
