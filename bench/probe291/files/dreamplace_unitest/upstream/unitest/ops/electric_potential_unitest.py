##
# @file   electric_potential_unitest.py
# @author Yibo Lin
# @date   Mar 2019
#

import time
import numpy as np
import unittest
import logging

import torch
from torch.autograd import Function, Variable
import os
import sys
import gzip

sys.path.append(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from dreamplace.ops.electric_potential import electric_potential
from dreamplace.ops.electric_potential import electric_overflow
sys.path.pop()

if sys.version_info[0] < 3:
    import cPickle as pickle
else:
    import _pickle as pickle
import inspect
import pdb
from scipy import fftpack

import matplotlib
matplotlib.use('Agg')
from mpl_toolkits.mplot3d import Axes3D
import matplotlib.pyplot as plt


def build_density_op(node_size_x, node_size_y, bin_center_x, bin_center_y,
                     target_density, xl, yl, xh, yh, bin_size_x, bin_size_y,
                     num_movable_nodes, num_terminals, num_filler_nodes,
                     dtype, device):
    """Construct the op on the requested device; all tensor members of the op
    live on the same device as pos."""
    return electric_potential.ElectricPotential(
        torch.tensor(node_size_x, requires_grad=False, dtype=dtype, device=device),
        torch.tensor(node_size_y, requires_grad=False, dtype=dtype, device=device),
        torch.tensor(bin_center_x, requires_grad=False, dtype=dtype, device=device),
        torch.tensor(bin_center_y, requires_grad=False, dtype=dtype, device=device),
        target_density=torch.tensor(target_density, requires_grad=False, dtype=dtype, device=device),
        xl=xl,
        yl=yl,
        xh=xh,
        yh=yh,
        bin_size_x=bin_size_x,
        bin_size_y=bin_size_y,
        num_movable_nodes=num_movable_nodes,
        num_terminals=num_terminals,
        num_filler_nodes=num_filler_nodes,
        padding=0,
        deterministic_flag=True,
        sorted_node_map=torch.arange(num_movable_nodes, dtype=torch.int32, device=device),
        movable_macro_mask=None,
        fast_mode=False)


class ElectricPotentialOpTest(unittest.TestCase):
    def test_densityOverflowRandom(self):
        dtype = np.float64
        xx = np.array([
            1000, 11148, 11148, 11148, 11148, 11148, 11124, 11148, 11148,
            11137, 11126, 11148, 11130, 11148, 11148, 11148, 11148, 11148,
            11148, 0, 11148, 11148, 11150, 11134, 11148, 11148, 11148, 10550,
            11148, 11148, 11144, 11148, 11148, 11148, 11148, 11140, 11120,
            11154, 11148, 11133, 11148, 11148, 11134, 11125, 11148, 11148,
            11148, 11155, 11127, 11148, 11148, 11148, 11148, 11131, 11148,
            11148, 11148, 11148, 11136, 11148, 11146, 11148, 11135, 11148,
            11125, 11150, 11148, 11139, 11148, 11148, 11130, 11148, 11128,
            11148, 11138, 11148, 11148, 11148, 11130, 11148, 11132, 11148,
            11148, 11090
        ]).astype(dtype)
        yy = np.array([
            1000, 11178, 11165, 11098, 11163, 11150, 11134, 11177, 11099,
            11141, 11121, 11143, 11116, 11144, 11168, 11152, 11128, 11167,
            11153, 0, 11148, 11119, 11148, 11134, 11163, 11160, 11165, 11098,
            11095, 11170, 11155, 11125, 11143, 11129, 11098, 11164, 11110,
            11140, 11135, 11118, 11176, 11179, 11175, 11124, 11130, 11127,
            11171, 11136, 11165, 11159, 11098, 11130, 11101, 11114, 11149,
            11138, 11113, 11160, 11095, 11154, 11177, 11146, 11135, 11171,
            11141, 11138, 11117, 11138, 11163, 11144, 11160, 11118, 11130,
            11144, 11148, 11159, 11145, 11160, 11113, 11127, 11103, 11157,
            11154, 11148
        ]).astype(dtype)
        node_size_x = np.full(len(xx), 4, dtype=dtype)
        node_size_x[0] = 400
        node_size_x[19] = 800
        node_size_y = np.full(len(yy), 4, dtype=dtype)
        node_size_y[0] = 600
        node_size_y[19] = 600
        scale_factor = 1.0

        xl = 0.0
        yl = 6.0
        xh = 16.0
        yh = 16.0
        bin_size_x = 2.0
        bin_size_y = 2.0
        target_density = 0.1
        num_bins_x = int(np.ceil((xh - xl) / bin_size_x))
        num_bins_y = int(np.ceil((yh - yl) / bin_size_y))

        # test cpu
        num_movable_nodes = len(xx) - 2
        num_terminals = 2
        num_filler_nodes = 0
        bin_center_x = xl + (np.arange(num_bins_x, dtype=dtype) + 0.5) * bin_size_x
        bin_center_y = yl + (np.arange(num_bins_y, dtype=dtype) + 0.5) * bin_size_y

        custom = build_density_op(node_size_x, node_size_y, bin_center_x,
                                  bin_center_y, target_density, xl, yl, xh,
                                  yh, bin_size_x, bin_size_y,
                                  num_movable_nodes, num_terminals,
                                  num_filler_nodes, dtype=torch.float64,
                                  device=torch.device("cpu"))

        pos = Variable(torch.from_numpy(np.concatenate([xx, yy])),
                       requires_grad=True)
        result = custom.forward(pos)
        print("custom_result = ", result)
        print(result.type())
        result.backward()
        grad = pos.grad.clone()
        print("custom_grad = ", grad)

        # test cuda
        if torch.cuda.device_count():
            custom_cuda = build_density_op(node_size_x, node_size_y,
                                           bin_center_x, bin_center_y,
                                           target_density, xl, yl, xh, yh,
                                           bin_size_x, bin_size_y,
                                           num_movable_nodes, num_terminals,
                                           num_filler_nodes,
                                           dtype=torch.float64,
                                           device=torch.device("cuda"))

            pos = Variable(torch.from_numpy(np.concatenate([xx, yy])).cuda(),
                           requires_grad=True)
            #pos.grad.zero_()
            result_cuda = custom_cuda.forward(pos)
            print("custom_result_cuda = ", result_cuda.data.cpu())
            print(result_cuda.type())
            result_cuda.backward()
            grad_cuda = pos.grad.clone()
            print("custom_grad_cuda = ", grad_cuda.data.cpu())

            np.testing.assert_allclose(result.detach().numpy(),
                                       result_cuda.data.cpu().detach().numpy())
            np.testing.assert_allclose(grad.detach().numpy(),
                                       grad_cuda.data.cpu().detach().numpy())

    def test_densityMapGPUvsCPU(self):
        """Large random instance; CPU results act as the golden reference for the GPU kernels."""
        dtype = torch.float32
        np.random.seed(100)
        num_nodes = 20000
        xl, yl, xh, yh = 0.0, 0.0, 1024.0, 1024.0
        bin_size_x = bin_size_y = 8.0
        num_bins_x = int(np.ceil((xh - xl) / bin_size_x))
        num_bins_y = int(np.ceil((yh - yl) / bin_size_y))
        node_size_x = np.random.uniform(1, 16, num_nodes).astype(np.float32)
        node_size_y = np.full(num_nodes, 8, dtype=np.float32)
        xx = np.random.uniform(xl, xh - 16, num_nodes).astype(np.float32)
        yy = np.random.uniform(yl, yh - 8, num_nodes).astype(np.float32)
        bin_center_x = xl + (np.arange(num_bins_x, dtype=np.float32) + 0.5) * bin_size_x
        bin_center_y = yl + (np.arange(num_bins_y, dtype=np.float32) + 0.5) * bin_size_y

        pos_cpu = torch.from_numpy(np.concatenate([xx, yy]))
        op_cpu = build_density_op(node_size_x, node_size_y, bin_center_x,
                                  bin_center_y, 1.0, xl, yl, xh, yh,
                                  bin_size_x, bin_size_y, num_nodes, 0, 0,
                                  dtype=dtype, device=pos_cpu.device)
        tt = time.time()
        overflow_cpu, max_density_cpu = op_cpu.forward(pos_cpu, mode="overflow")
        logging.info("CPU density map takes %.3f ms" % ((time.time() - tt) * 1000))

        if not torch.cuda.is_available():
            self.skipTest("CUDA not available")
        device = torch.device("cuda:0")
        op_gpu = build_density_op(node_size_x, node_size_y, bin_center_x,
                                  bin_center_y, 1.0, xl, yl, xh, yh,
                                  bin_size_x, bin_size_y, num_nodes, 0, 0,
                                  dtype=dtype, device=device)
        pos_gpu = pos_cpu.to(device)
        # warm up, the first launch includes module loading
        op_gpu.forward(pos_gpu, mode="overflow")
        torch.cuda.synchronize()
        tt = time.time()
        overflow_gpu, max_density_gpu = op_gpu.forward(pos_gpu, mode="overflow")
        torch.cuda.synchronize(device)
        logging.info("GPU density map takes %.3f ms" % ((time.time() - tt) * 1000))

        np.testing.assert_allclose(overflow_cpu.numpy(),
                                   overflow_gpu.cpu().numpy(),
                                   rtol=1e-4)
        np.testing.assert_allclose(max_density_cpu.numpy(),
                                   max_density_gpu.cpu().numpy(),
                                   rtol=1e-4)


def plot(plot_count, density_map, padding, name):
    """
    density map contour and heat map
    """
    density_map = density_map[padding:density_map.shape[0] - padding,
                              padding:density_map.shape[1] - padding]
    print("max density = %g @ %s" %
          (np.amax(density_map),
           np.unravel_index(np.argmax(density_map), density_map.shape)))
    print("mean density = %g" % (np.mean(density_map)))

    fig = plt.figure()
    ax = fig.gca(projection='3d')

    x = np.arange(density_map.shape[0])
    y = np.arange(density_map.shape[1])

    x, y = np.meshgrid(x, y)
    # looks like x and y should be swapped
    ax.plot_surface(y, x, density_map, alpha=0.8)

    ax.set_xlabel('x')
    ax.set_ylabel('y')
    ax.set_zlabel('density')

    # plt.tight_layout()
    plt.savefig(name + ".3d.png")
    plt.close()


def eval_runtime(design):
    # e.g., adaptec1_density.pklz
    with gzip.open(design, "rb") as f:
        node_size_x, node_size_y, bin_center_x, bin_center_y, target_density, xl, yl, xh, yh, bin_size_x, bin_size_y, num_movable_nodes, num_terminals, num_filler_nodes = pickle.load(
            f)

    pos_var = Variable(torch.empty(len(node_size_x) * 2, dtype=torch.float64).uniform_(xl, xh),
                       requires_grad=True)
    custom_net_by_net_cpu = build_density_op(node_size_x, node_size_y,
                                             bin_center_x, bin_center_y,
                                             target_density, xl, yl, xh, yh,
                                             bin_size_x, bin_size_y,
                                             num_movable_nodes, num_terminals,
                                             num_filler_nodes,
                                             dtype=torch.float64,
                                             device=torch.device("cpu"))
    custom_net_by_net_cuda = build_density_op(node_size_x, node_size_y,
                                              bin_center_x, bin_center_y,
                                              target_density, xl, yl, xh, yh,
                                              bin_size_x, bin_size_y,
                                              num_movable_nodes,
                                              num_terminals, num_filler_nodes,
                                              dtype=torch.float64,
                                              device="cuda")

    pos_var_cuda = pos_var.cuda()
    torch.cuda.synchronize()  # finish the host-to-device copy
    tt = time.time()
    for i in range(10):
        result = custom_net_by_net_cpu.forward(pos_var)
        result.backward()
    print("custom_net_by_net cpu takes %.3f ms" % ((time.time() - tt) / 10 * 1000))

    tt = time.time()
    for i in range(10):
        result = custom_net_by_net_cuda.forward(pos_var_cuda)
        result.backward()
    torch.cuda.synchronize()  # wait for the last backward kernel
    print("custom_net_by_net cuda takes %.3f ms" % ((time.time() - tt) / 10 * 1000))


if __name__ == '__main__':
    logging.root.name = 'DREAMPlace'
    logging.basicConfig(level=logging.DEBUG,
                        format='[%(levelname)-7s] %(name)s - %(message)s',
                        stream=sys.stdout)
    if len(sys.argv) < 2:
        unittest.main()
    else:
        design = sys.argv[1]
        eval_runtime(design)
