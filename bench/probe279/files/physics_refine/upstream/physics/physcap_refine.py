"""
PhysCap-style physics-aware refinement of sparse-IMU kinematic estimates.

Runs on a sliding window of W frames entirely on the GPU:

  1. contact detection  - network foot-contact probabilities + foot height / velocity heuristics
  2. dynamics tracking  - a PD controller tracks the kinematic reference, ground reaction forces are
                          projected onto the friction cones by a custom CUDA kernel (csrc/contact_lcp_kernel.cu)
  3. pose correction    - foot-skating removal and floor-penetration handling by a small batched
                          optimisation over the root translation and leg joint angles

The projection kernel is differentiable (hand-written backward) so the whole window can be refined
with Adam/L-BFGS. A pure PyTorch reference of the projection is kept for testing.
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

try:
    import contact_lcp_cuda as _lcp            # built with `python physics/setup.py install`
except ImportError:
    from torch.utils.cpp_extension import load
    _src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'csrc')
    _lcp = load(name='contact_lcp_cuda',
                sources=[os.path.join(_src, 'contact_lcp.cpp'), os.path.join(_src, 'contact_lcp_kernel.cu')],
                extra_cuda_cflags=['-O3', '--use_fast_math', '-gencode=arch=compute_80,code=sm_80'],
                verbose=False)

FOOT_JOINTS = [7, 8, 10, 11]      # l-ankle, r-ankle, l-foot, r-foot (SMPL)
GRAVITY = torch.tensor([0., -9.81, 0.])


def _project_friction_cone_ref(forces, normals, mu):
    """
    Reference projection of contact forces [B, C, 3] onto friction cones (normal force >= 0,
    |tangential| <= mu * normal). Same maths as the CUDA kernel, slower.
    """
    fn = (forces * normals).sum(-1, keepdim=True)
    ft = forces - fn * normals
    ft_norm = ft.norm(dim=-1, keepdim=True).clamp(min=1e-9)
    fn_pos = fn.clamp(min=0)
    scale = torch.minimum(torch.ones_like(ft_norm), mu * fn_pos / ft_norm)
    return fn_pos * normals + ft * scale


class FrictionConeProjection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, forces, normals, mu):
        out, active = _lcp.project_forward(forces.contiguous(), normals.contiguous(), float(mu))
        ctx.save_for_backward(forces, normals, active)
        ctx.mu = mu
        return out

    @staticmethod
    def backward(ctx, grad_out):
        forces, normals, active = ctx.saved_tensors
        grad_forces = _lcp.project_backward(grad_out.contiguous(), forces, normals, active, float(ctx.mu))
        return grad_forces, None, None


def detect_contacts(joints, contact_prob, floor_y, prob_thr=0.5, height_thr=0.05, vel_thr=0.25, fps=60):
    """
    :param joints: [T, 24, 3] global joint positions.
    :param contact_prob: [T, 2] network probabilities for (left, right) foot contact.
    :return: [T, 4] boolean contact labels for FOOT_JOINTS.
    """
    feet = joints[:, FOOT_JOINTS]                                            # [T, 4, 3]
    vel = torch.cat([torch.zeros_like(feet[:1]), (feet[1:] - feet[:-1]) * fps])
    low = (feet[..., 1] - floor_y) < height_thr
    slow = vel.norm(dim=-1) < vel_thr
    prob = contact_prob[:, [0, 1, 0, 1]] > prob_thr
    return low & slow & prob


class ContactHysteresis:
    """
    Debounce per-foot contact labels: a contact must persist `on_frames` frames to switch on and be absent
    for `off_frames` frames to switch off. Avoids single-frame flicker that makes the GRF jump.
    """
    def __init__(self, n_feet=4, on_frames=2, off_frames=3):
        self.on_frames = on_frames
        self.off_frames = off_frames
        self.state = torch.zeros(n_feet, dtype=torch.bool)
        self.count = torch.zeros(n_feet, dtype=torch.long)

    def __call__(self, contacts):
        """
        :param contacts: [T, n_feet] raw boolean labels (any device)
        :return: [T, n_feet] filtered labels on the same device
        """
        out = torch.empty_like(contacts)
        raw = contacts.cpu()
        for t in range(raw.shape[0]):
            flip = raw[t] != self.state
            self.count = torch.where(flip, self.count + 1, torch.zeros_like(self.count))
            need = torch.where(self.state, torch.full_like(self.count, self.off_frames),
                               torch.full_like(self.count, self.on_frames))
            switch = self.count >= need
            self.state = torch.where(switch, raw[t], self.state)
            self.count[switch] = 0
            out[t] = self.state.to(out.device)
        return out


def plot_grf(forces, contacts, path, fps=60):
    """
    Save a plot of the vertical ground reaction force per foot point (debugging aid).
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    f = forces[..., 1].cpu().numpy()
    c = contacts.cpu().numpy()
    t = np.arange(f.shape[0]) / fps
    fig, axes = plt.subplots(2, 1, figsize=(10, 5), sharex=True)
    for i, name in enumerate(['l-ankle', 'r-ankle', 'l-foot', 'r-foot']):
        axes[0].plot(t, f[:, i], label=name)
        axes[1].plot(t, c[:, i] + 1.1 * i, label=name)
    axes[0].set_ylabel('vertical GRF (N)')
    axes[1].set_ylabel('contact')
    axes[1].set_xlabel('time (s)')
    axes[0].legend(ncol=4)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


class PhysicsRefiner:
    def __init__(self, body_model, fps=60, window=60, mu=0.8, kp=300., kd=20., iters=30, lr=1e-2,
                 device='cuda', profile=False):
        self.body = body_model
        self.fps = fps
        self.dt = 1.0 / fps
        self.window = window
        self.mu = mu
        self.kp, self.kd = kp, kd
        self.iters = iters
        self.lr = lr
        self.device = torch.device(device)
        self.profile = profile
        self.timings = {'contact': [], 'dynamics': [], 'correction': []}
        self.hysteresis = ContactHysteresis()

    def _tic(self):
        if self.profile:
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    def _toc(self, key, t0):
        if self.profile:
            torch.cuda.synchronize()
            self.timings[key].append(time.perf_counter() - t0)

    def dynamics_step(self, root_pos, root_vel, ref_pos, contacts, mass=70.):
        """
        PD tracking of the root with ground reaction forces at the contact points.
        """
        B = root_pos.shape[0]
        acc_des = self.kp * (ref_pos - root_pos) - self.kd * root_vel
        f_needed = mass * (acc_des - GRAVITY.to(root_pos.device))              # [B, 3]
        n_contact = contacts.float().sum(-1, keepdim=True).clamp(min=1)         # [B, 1]
        forces = (f_needed / n_contact).unsqueeze(1).expand(B, 4, 3).contiguous()
        normals = torch.tensor([0., 1., 0.], device=root_pos.device).expand(B, 4, 3).contiguous()
        torch.cuda.nvtx.range_push('friction_cone_projection')
        forces = FrictionConeProjection.apply(forces, normals, self.mu)
        torch.cuda.nvtx.range_pop()
        forces = forces * contacts.unsqueeze(-1).float()
        acc = forces.sum(1) / mass + GRAVITY.to(root_pos.device)
        root_vel = root_vel + acc * self.dt
        root_pos = root_pos + root_vel * self.dt
        return root_pos, root_vel, forces

    def refine_window(self, pose, tran, contact_prob, floor_y=0.):
        """
        :param pose: [W, 24, 3, 3] local rotations (kinematic estimate)
        :param tran: [W, 3] root translation (kinematic estimate)
        :param contact_prob: [W, 2]
        :return: refined (pose, tran, forces)
        """
        pose, tran, contact_prob = pose.to(self.device), tran.to(self.device), contact_prob.to(self.device)

        t0 = self._tic()
        _, joints = self.body.forward_kinematics(pose, tran=tran)
        contacts = detect_contacts(joints, contact_prob, floor_y, fps=self.fps)
        contacts = self.hysteresis(contacts)
        self._toc('contact', t0)

        t0 = self._tic()
        root_pos, root_vel = tran[:1].clone(), (tran[1:2] - tran[:1]) * self.fps
        traj, forces = [], []
        for t in range(tran.shape[0]):
            root_pos, root_vel, f = self.dynamics_step(root_pos, root_vel, tran[t:t + 1], contacts[t:t + 1])
            traj.append(root_pos)
            forces.append(f)
        tran_dyn = torch.cat(traj)
        forces = torch.cat(forces)
        self._toc('dynamics', t0)

        t0 = self._tic()
        delta = torch.zeros_like(tran_dyn, requires_grad=True)
        opt = torch.optim.Adam([delta], lr=self.lr)
        for _ in range(self.iters):
            opt.zero_grad()
            _, j = self.body.forward_kinematics(pose, tran=tran_dyn + delta)
            feet = j[:, FOOT_JOINTS]
            skate = ((feet[1:] - feet[:-1]).norm(dim=-1) * contacts[1:].float()).pow(2).mean()
            pen = F.relu(floor_y - feet[..., 1]).pow(2).mean()
            reg = delta.pow(2).mean() + (delta[1:] - delta[:-1]).pow(2).mean() * 10
            loss = 10 * skate + 100 * pen + reg
            loss.backward()
            opt.step()
        self._toc('correction', t0)
        return pose, (tran_dyn + delta).detach(), forces.detach()

    def refine_sequence(self, pose, tran, contact_prob, floor_y=0.):
        out_t, out_f = [], []
        for s in range(0, pose.shape[0], self.window):
            e = min(s + self.window, pose.shape[0])
            _, t, f = self.refine_window(pose[s:e], tran[s:e], contact_prob[s:e], floor_y)
            out_t.append(t)
            out_f.append(f)
        return pose, torch.cat(out_t), torch.cat(out_f)


def _check_kernel(n=4096, mu=0.8):
    torch.manual_seed(0)
    f = torch.randn(n, 4, 3, device='cuda', dtype=torch.float64)
    nrm = F.normalize(torch.randn(n, 4, 3, device='cuda', dtype=torch.float64), dim=-1)
    ref = _project_friction_cone_ref(f, nrm, mu)
    out = FrictionConeProjection.apply(f.float(), nrm.float(), mu)
    print('max |kernel - ref| =', (out.double() - ref).abs().max().item())
    f.requires_grad_(True)
    ok = torch.autograd.gradcheck(lambda x: FrictionConeProjection.apply(x.float(), nrm.float(), mu).double(),
                                  (f[:8],), eps=1e-3, atol=1e-2)
    print('gradcheck:', ok)


def main():
    parser = argparse.ArgumentParser(description='physics-aware refinement of TransPose/PIP output')
    parser.add_argument('--input', required=True, help='.pt with pose [T,24,3,3], tran [T,3], contact [T,2]')
    parser.add_argument('--smpl', default='models/SMPL_male.pkl')
    parser.add_argument('--out', default=None)
    parser.add_argument('--window', type=int, default=60)
    parser.add_argument('--iters', type=int, default=30)
    parser.add_argument('--profile', action='store_true')
    parser.add_argument('--check-kernel', action='store_true')
    parser.add_argument('--debug', action='store_true')
    parser.add_argument('--plot', default=None, help='save a GRF plot to this png')
    args = parser.parse_args()

    if args.check_kernel:
        _check_kernel()
        return

    # the body model and the optimisation variables are created with the default tensor type
    torch.set_default_tensor_type('torch.cuda.FloatTensor')
    torch.autograd.set_detect_anomaly(args.debug)

    import articulate as art
    body = art.ParametricModel(args.smpl, device=torch.device('cuda'))
    data = torch.load(args.input, map_location='cuda')
    refiner = PhysicsRefiner(body, window=args.window, iters=args.iters, profile=args.profile)

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    pose, tran, forces = refiner.refine_sequence(data['pose'], data['tran'], data['contact'])
    end.record()
    end.synchronize()
    T = pose.shape[0]
    print('refined %d frames in %.1f ms (%.2f ms/frame)' % (T, start.elapsed_time(end), start.elapsed_time(end) / T))
    if args.profile:
        for k, v in refiner.timings.items():
            print('  %-10s %.3f ms/window' % (k, 1000 * float(np.mean(v)) if v else 0))

    if args.plot:
        _, joints = body.forward_kinematics(pose, tran=tran)
        plot_grf(forces, detect_contacts(joints, data['contact'], 0.), args.plot)

    out = args.out or args.input.replace('.pt', '_phys.pt')
    torch.save({'pose': pose.cpu(), 'tran': tran.cpu(), 'grf': forces.cpu()}, out)
    print('saved', out)


if __name__ == '__main__':
    main()
