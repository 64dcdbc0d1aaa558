"""Batched damped-least-squares inverse kinematics for a Franka Panda using
pytorch_kinematics. Solves thousands of IK problems in parallel on the GPU.

    python batch_ik_panda.py --num-goals 4096 --iters 200
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import pytorch_kinematics as pk

TEST_DIR = os.path.dirname(__file__)

parser = argparse.ArgumentParser()
parser.add_argument("--urdf", default=os.path.join(TEST_DIR, "kuka_iiwa", "panda_arm_hand.urdf"))
parser.add_argument("--ee-link", default="panda_hand")
parser.add_argument("--num-goals", type=int, default=4096)
parser.add_argument("--num-retries", type=int, default=8)
parser.add_argument("--iters", type=int, default=200)
parser.add_argument("--damping", type=float, default=1e-2)
parser.add_argument("--step", type=float, default=0.5)
parser.add_argument("--seed", type=int, default=3)
args = parser.parse_args()

d = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float64

torch.manual_seed(args.seed)
np.random.seed(args.seed)

with open(args.urdf, "rb") as f:
    urdf = f.read()
chain = pk.build_serial_chain_from_urdf(urdf, args.ee_link)
chain = chain.to(dtype=dtype, device=d)

lim = torch.tensor(chain.get_joint_limits(), dtype=dtype, device=d)  # [2, DOF]
dof = lim.shape[1]


def sample_configs(n):
    u = torch.rand(n, dof, dtype=dtype, device=d)
    return lim[0] + u * (lim[1] - lim[0])


def pose_error(tf_cur, goal_pos, goal_rot):
    """6-D error: position difference and axis-angle of R_goal * R_cur^T."""
    m = tf_cur.get_matrix()
    pos = m[:, :3, 3]
    rot = m[:, :3, :3]
    dpos = goal_pos - pos
    r_err = goal_rot @ rot.transpose(-1, -2)
    drot = pk.matrix_to_axis_angle(r_err)
    return torch.cat([dpos, drot], dim=-1)


def solve_dls(q0, goal_pos, goal_rot, iters, damping, step):
    q = q0.clone()
    eye = torch.eye(6, dtype=dtype, device=d)
    for it in range(iters):
        tf = chain.forward_kinematics(q)
        err = pose_error(tf, goal_pos, goal_rot)  # [B, 6]
        J = chain.jacobian(q)  # [B, 6, DOF]
        JJt = J @ J.transpose(-1, -2) + (damping ** 2) * eye
        dx = torch.linalg.solve(JJt, err.unsqueeze(-1))  # [B, 6, 1]
        dq = (J.transpose(-1, -2) @ dx).squeeze(-1)
        q = q + step * dq
        q = torch.max(torch.min(q, lim[1]), lim[0])
        if it % 50 == 0:
            print(f"  it {it:3d}  mean |err| = {err.norm(dim=-1).mean().item():.4e}")
    return q, err


def main():
    # goals from random reachable configurations
    q_goal = sample_configs(args.num_goals)
    tf_goal = chain.forward_kinematics(q_goal)
    m = tf_goal.get_matrix()
    goal_pos = m[:, :3, 3].repeat_interleave(args.num_retries, dim=0)
    goal_rot = m[:, :3, :3].repeat_interleave(args.num_retries, dim=0)

    q0 = sample_configs(args.num_goals * args.num_retries)

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    q, err = solve_dls(q0, goal_pos, goal_rot, args.iters, args.damping, args.step)
    torch.cuda.synchronize()  # wait for the batched solver before timing
    dt = time.perf_counter() - t0

    err_norm = err.norm(dim=-1).view(args.num_goals, args.num_retries)
    best = err_norm.argmin(dim=1)
    best_err = err_norm.gather(1, best[:, None]).squeeze(1)
    success = (best_err < 1e-3).float().mean().item()
    q_best = q.view(args.num_goals, args.num_retries, dof)[torch.arange(args.num_goals, device=d), best]

    print(f"solved {args.num_goals} goals x {args.num_retries} retries in {dt:.2f}s on {d}")
    print(f"success rate {success * 100:.1f}%  median err {best_err.median().item():.2e}")
    np.save("ik_solutions.npy", q_best.cpu().numpy())


if __name__ == "__main__":
    main()
