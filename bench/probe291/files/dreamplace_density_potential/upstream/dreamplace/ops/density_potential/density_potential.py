##
# @file   density_potential.py
# @author Yibo Lin
# @date   Jun 2018
# @brief  Compute density potential according to NTUPlace3 (https://doi.org/10.1109/TCAD.2008.923063)
#

import math
import time
import numpy as np
import torch
from torch import nn
from torch.autograd import Function
import logging

import dreamplace.ops.density_potential.density_potential_cpp as density_potential_cpp
import dreamplace.configure as configure
if configure.compile_configurations["CUDA_FOUND"] == "TRUE":
    import dreamplace.ops.density_potential.density_potential_cuda as density_potential_cuda

logger = logging.getLogger(__name__)


class DensityPotentialFunction(Function):
    """
    @brief compute density potential.
    """
    @staticmethod
    def forward(ctx, pos, node_size_x, node_size_y, ax, bx, cx, ay, by, cy,
                bin_center_x, bin_center_y, initial_density_map,
                target_density, xl, yl, xh, yh, bin_size_x, bin_size_y,
                num_movable_nodes, num_filler_nodes, padding, padding_mask,
                num_bins_x, num_bins_y, num_impacted_bins_x,
                num_impacted_bins_y):
        """
        @param pos location of cells, x and then y
        @param node_size_x cell width array
        @param node_size_y cell height array
        @param ax, bx, cx coefficients of the bell-shaped function in x direction
        @param ay, by, cy coefficients of the bell-shaped function in y direction
        @param initial_density_map density map of fixed cells
        @param target_density target density
        @param padding bin padding to the boundary of placement region
        @param padding_mask padding mask with 1 for padding bins
        """
        tt = time.time()
        if pos.is_cuda:
            output = density_potential_cuda.forward(
                pos.view(pos.numel()), node_size_x, node_size_y, ax, bx, cx,
                ay, by, cy, bin_center_x, bin_center_y, initial_density_map,
                target_density, xl, yl, xh, yh, bin_size_x, bin_size_y,
                num_movable_nodes, num_filler_nodes, padding, padding_mask,
                num_bins_x, num_bins_y, num_impacted_bins_x,
                num_impacted_bins_y)
        else:
            output = density_potential_cpp.forward(
                pos.view(pos.numel()), node_size_x, node_size_y, ax, bx, cx,
                ay, by, cy, bin_center_x, bin_center_y, initial_density_map,
                target_density, xl, yl, xh, yh, bin_size_x, bin_size_y,
                num_movable_nodes, num_filler_nodes, padding, padding_mask,
                num_bins_x, num_bins_y, num_impacted_bins_x,
                num_impacted_bins_y)

        # output consists of (density_cost, density_map, max_density)
        ctx.node_size_x = node_size_x
        ctx.node_size_y = node_size_y
        ctx.ax = ax
        ctx.bx = bx
        ctx.cx = cx
        ctx.ay = ay
        ctx.by = by
        ctx.cy = cy
        ctx.bin_center_x = bin_center_x
        ctx.bin_center_y = bin_center_y
        ctx.target_density = target_density
        ctx.xl = xl
        ctx.yl = yl
        ctx.xh = xh
        ctx.yh = yh
        ctx.bin_size_x = bin_size_x
        ctx.bin_size_y = bin_size_y
        ctx.num_movable_nodes = num_movable_nodes
        ctx.num_filler_nodes = num_filler_nodes
        ctx.padding = padding
        ctx.num_bins_x = num_bins_x
        ctx.num_bins_y = num_bins_y
        ctx.num_impacted_bins_x = num_impacted_bins_x
        ctx.num_impacted_bins_y = num_impacted_bins_y
        ctx.pos = pos
        density_map = output[1].view([ctx.num_bins_x, ctx.num_bins_y])
        ctx.density_map = density_map
        logger.debug("density potential forward %.3f ms" % ((time.time() - tt) * 1000))
        return output[0]

    @staticmethod
    def backward(ctx, grad_pos):
        tt = time.time()
        if grad_pos.is_cuda:
            output = density_potential_cuda.backward(
                grad_pos, ctx.num_bins_x, ctx.num_bins_y, ctx.density_map,
                ctx.target_density, ctx.pos, ctx.node_size_x, ctx.node_size_y,
                ctx.ax, ctx.bx, ctx.cx, ctx.ay, ctx.by, ctx.cy,
                ctx.bin_center_x, ctx.bin_center_y, ctx.xl, ctx.yl, ctx.xh,
                ctx.yh, ctx.bin_size_x, ctx.bin_size_y, ctx.num_movable_nodes,
                ctx.num_filler_nodes, ctx.padding, ctx.num_impacted_bins_x,
                ctx.num_impacted_bins_y)
        else:
            output = density_potential_cpp.backward(
                grad_pos, ctx.num_bins_x, ctx.num_bins_y, ctx.density_map,
                ctx.target_density, ctx.pos, ctx.node_size_x, ctx.node_size_y,
                ctx.ax, ctx.bx, ctx.cx, ctx.ay, ctx.by, ctx.cy,
                ctx.bin_center_x, ctx.bin_center_y, ctx.xl, ctx.yl, ctx.xh,
                ctx.yh, ctx.bin_size_x, ctx.bin_size_y, ctx.num_movable_nodes,
                ctx.num_filler_nodes, ctx.padding, ctx.num_impacted_bins_x,
                ctx.num_impacted_bins_y)
        logger.debug("density potential backward %.3f ms" % ((time.time() - tt) * 1000))
        return output, \
            None, None, None, None, \
            None, None, None, None, \
            None, None, None, None, \
            None, None, None, None, \
            None, None, None, None, \
            None, None, None, None, \
            None, None


class DensityPotential(nn.Module):
    """
    @brief Compute density potential according to NTUPlace3
    """
    def __init__(self, node_size_x, node_size_y, bin_center_x, bin_center_y,
                 target_density, xl, yl, xh, yh, bin_size_x, bin_size_y,
                 num_movable_nodes, num_terminals, num_filler_nodes, padding,
                 sigma=0.25, delta=2.0):
        """
        @brief initialization
        Be aware that all scalars must be python type instead of tensors.
        Otherwise, GPU version can be weirdly slow.
        @param sigma parameter for the bell-shaped function (NTUPlace3)
        @param delta parameter for the bell-shaped function (NTUPlace3)
        """
        super(DensityPotential, self).__init__()
        self.node_size_x = node_size_x
        self.node_size_y = node_size_y
        self.bin_center_x = bin_center_x
        self.bin_center_y = bin_center_y
        self.target_density = target_density
        self.xl = xl
        self.yl = yl
        self.xh = xh
        self.yh = yh
        self.bin_size_x = bin_size_x
        self.bin_size_y = bin_size_y
        self.num_movable_nodes = num_movable_nodes
        self.num_terminals = num_terminals
        self.num_filler_nodes = num_filler_nodes
        self.padding = padding
        self.sigma = sigma
        self.delta = delta

        self.num_bins_x = int(math.ceil((xh - xl) / bin_size_x))
        self.num_bins_y = int(math.ceil((yh - yl) / bin_size_y))
        # coefficient of the bell-shaped function
        # a = 4 / ((wb + 2 rb)(2 wb + 4 rb)), b = 2 / (wb (2 wb + 4 rb)), c = 1 computed later
        self.ax = 4.0 / ((node_size_x + 2 * bin_size_x) * (node_size_x + 4 * bin_size_x))
        self.bx = 2.0 / (bin_size_x * (node_size_x + 4 * bin_size_x))
        self.ay = 4.0 / ((node_size_y + 2 * bin_size_y) * (node_size_y + 4 * bin_size_y))
        self.by = 2.0 / (bin_size_y * (node_size_y + 4 * bin_size_y))
        # c is computed so that the integral of potential of each cell equals its area
        self.cx = None
        self.cy = None

        # max number of bins a cell can impact, 2 bins on each side
        self.num_impacted_bins_x = int(((node_size_x.max() + 4 * bin_size_x) / bin_size_x).ceil().clamp(max=self.num_bins_x))
        self.num_impacted_bins_y = int(((node_size_y.max() + 4 * bin_size_y) / bin_size_y).ceil().clamp(max=self.num_bins_y))

        if self.padding > 0:
            self.padding_mask = torch.ones(self.num_bins_x, self.num_bins_y, dtype=torch.uint8, device=node_size_x.device)
            self.padding_mask[self.padding:self.num_bins_x - self.padding, self.padding:self.num_bins_y - self.padding].fill_(0)
        else:
            self.padding_mask = torch.zeros(self.num_bins_x, self.num_bins_y, dtype=torch.uint8, device=node_size_x.device)

        self.initial_density_map = None

    def forward(self, pos):
        if self.cx is None:
            # the normalisation factor of the bell-shaped function is the same
            # for all cells of the same size; computed lazily on the device of pos
            self.cx = torch.ones_like(self.node_size_x)
            self.cy = torch.ones_like(self.node_size_y)
        if self.initial_density_map is None:
            impl = density_potential_cuda if pos.is_cuda else density_potential_cpp
            self.initial_density_map = impl.fixed_density_map(
                pos.view(pos.numel()), self.node_size_x, self.node_size_y,
                self.ax, self.bx, self.cx, self.ay, self.by, self.cy,
                self.bin_center_x, self.bin_center_y, self.xl, self.yl,
                self.xh, self.yh, self.bin_size_x, self.bin_size_y,
                self.num_movable_nodes, self.num_terminals, self.num_bins_x,
                self.num_bins_y, self.num_impacted_bins_x,
                self.num_impacted_bins_y)
            logger.debug("fixed density map: average %g, max %g, bin area %g" %
                         (self.initial_density_map.mean(), self.initial_density_map.max(),
                          self.bin_size_x * self.bin_size_y))

        return DensityPotentialFunction.apply(
            pos, self.node_size_x, self.node_size_y, self.ax, self.bx, self.cx,
            self.ay, self.by, self.cy, self.bin_center_x, self.bin_center_y,
            self.initial_density_map, self.target_density, self.xl, self.yl,
            self.xh, self.yh, self.bin_size_x, self.bin_size_y,
            self.num_movable_nodes, self.num_filler_nodes, self.padding,
            self.padding_mask, self.num_bins_x, self.num_bins_y,
            self.num_impacted_bins_x, self.num_impacted_bins_y)
