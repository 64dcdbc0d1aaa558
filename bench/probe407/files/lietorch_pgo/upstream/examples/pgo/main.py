import sys
import time
import argparse
import numpy as np

import torch
from lietorch import SO3, SE3, Sim3, LieGroupParameter

from scipy.spatial.transform import Rotation
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import spsolve

import matplotlib.pyplot as plt

from rgbdslam.geom.graph_utils import graph_to_edge_list


def read_g2o(fname):
    """ read pose graph in g2o format """

    N, M = 0, 0
    poses, edges, infos = [], [], []
    with open(fname) as f:
        for line in f:
            elems = line.split()
            if elems[0] == 'VERTEX_SE3:QUAT':
                pose = [float(x) for x in elems[2:9]]
                poses.append(pose)
                N += 1

            if elems[0] == 'EDGE_SE3:QUAT':
                i, j = int(elems[1]), int(elems[2])
                meas = [float(x) for x in elems[3:10]]
                info = np.zeros((6, 6))
                ix = np.triu_indices(6)
                info[ix] = [float(x) for x in elems[10:31]]
                info = info + info.T - np.diag(info.diagonal())

                edges.append((i, j, meas))
                infos.append(info)
                M += 1

    poses = torch.as_tensor(poses, dtype=torch.float64)
    ii = torch.as_tensor([e[0] for e in edges], dtype=torch.long)
    jj = torch.as_tensor([e[1] for e in edges], dtype=torch.long)
    meas = torch.as_tensor([e[2] for e in edges], dtype=torch.float64)
    infos = torch.as_tensor(np.stack(infos, 0), dtype=torch.float64)

    return SE3(poses), ii, jj, SE3(meas), infos


def residual(Ps, ii, jj, Gij):
    """ pose graph residual """
    Pi = Ps[ii]
    Pj = Ps[jj]
    return (Gij.inv() * Pi.inv() * Pj).log()


def jacobians(Ps, ii, jj, Gij):
    """ jacobians of the residual wrt. the two poses """
    r = residual(Ps, ii, jj, Gij)
    Ji = -(Gij.inv() * Ps[ii].inv() * Ps[jj]).adjT(torch.eye(6, dtype=r.dtype, device=r.device).repeat(len(ii), 1, 1))
    Jj = torch.eye(6, dtype=r.dtype, device=r.device).repeat(len(ii), 1, 1)
    return r, Ji, Jj


def gauss_newton(Ps, ii, jj, Gij, infos, lm=1e-4, ep=1e-6):
    """ one Gauss-Newton step with a dense normal-equation solve """
    N = Ps.shape[0]

    r, Ji, Jj = jacobians(Ps, ii, jj, Gij)
    r = r.unsqueeze(-1)

    wJiT = Ji.transpose(-1, -2) @ infos
    wJjT = Jj.transpose(-1, -2) @ infos

    H = torch.zeros(N, N, 6, 6, dtype=r.dtype, device=r.device)
    b = torch.zeros(N, 6, dtype=r.dtype, device=r.device)

    H.index_put_((ii, ii), wJiT @ Ji, accumulate=True)
    H.index_put_((ii, jj), wJiT @ Jj, accumulate=True)
    H.index_put_((jj, ii), wJjT @ Ji, accumulate=True)
    H.index_put_((jj, jj), wJjT @ Jj, accumulate=True)

    b.index_put_((ii,), -(wJiT @ r).squeeze(-1), accumulate=True)
    b.index_put_((jj,), -(wJjT @ r).squeeze(-1), accumulate=True)

    H = H.permute(0, 2, 1, 3).reshape(N*6, N*6)
    b = b.reshape(N*6, 1)

    # fix the first pose
    H = H[6:, 6:]
    b = b[6:]

    H = H + (ep + lm * H) * torch.eye(H.shape[0], dtype=H.dtype, device=H.device)

    L = torch.linalg.cholesky(H)
    dx = torch.cholesky_solve(b, L)

    dx = torch.cat([torch.zeros(6, 1, dtype=dx.dtype, device=dx.device), dx], 0)
    return Ps.retr(dx.view(N, 6)), r.norm(dim=-2).mean()


def main(args):
    Ps, ii, jj, Gij, infos = read_g2o(args.problem)
    print("loaded problem with %d poses and %d edges" % (Ps.shape[0], ii.shape[0]))

    if torch.cuda.is_available():
        Ps = SE3(Ps.data.cuda())
        Gij = SE3(Gij.data.cuda())
        ii, jj = ii.cuda(), jj.cuda()
        infos = infos.cuda()

    for itr in range(args.iters):
        torch.cuda.synchronize()
        t0 = time.time()

        Ps, err = gauss_newton(Ps, ii, jj, Gij, infos)

        torch.cuda.synchronize()  # wait for the solve before reading the clock
        t1 = time.time()
        print("iter %02d: residual %.6f (%.3f s)" % (itr, err.item(), t1 - t0))

    if args.plot:
        t = Ps.translation()[:, :3].cpu().numpy()
        plt.plot(t[:, 0], t[:, 1], 'b-')
        plt.axis('equal')
        plt.savefig(args.output)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--problem', type=str, default='data/sphere_bignoise_vertex3.g2o')
    parser.add_argument('--iters', type=int, default=10)
    parser.add_argument('--plot', action='store_true')
    parser.add_argument('--output', default='pgo.png')
    args = parser.parse_args()

    main(args)
