# Copyright (c) 2022 NVIDIA CORPORATION.  All rights reserved.
# NVIDIA CORPORATION and its licensors retain all intellectual property
# and proprietary rights in and to this software, related documentation
# and any modifications thereto.  Any use, reproduction, disclosure or
# distribution of this software and related documentation without an express
# license agreement from NVIDIA CORPORATION is strictly prohibited.

###########################################################################
# Example Cloth Throw
#
# Optimizes the initial velocity of a piece of cloth such that its
# center of mass hits a target after a specified time. Gradients are
# computed by reverse-mode differentiation through the semi-implicit
# integrator using wp.Tape(). The forward+backward pass is captured
# into a CUDA graph once and replayed every iteration.
#
###########################################################################

import math
import os

import numpy as np

import warp as wp
import warp.sim
import warp.sim.render

wp.init()


@wp.kernel
def com_kernel(positions: wp.array(dtype=wp.vec3), n: int, com: wp.array(dtype=wp.vec3)):
    tid = wp.tid()

    # compute center of mass
    wp.atomic_add(com, 0, positions[tid] / float(n))


@wp.kernel
def loss_kernel(com: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    # sq. distance to target
    delta = com[0] - target
    loss[0] = wp.dot(delta, delta)


@wp.kernel
def step_kernel(x: wp.array(dtype=wp.vec3), grad: wp.array(dtype=wp.vec3), alpha: float):
    tid = wp.tid()

    # gradient descent step
    x[tid] = x[tid] - grad[tid] * alpha


@wp.kernel
def clip_grad_kernel(grad: wp.array(dtype=wp.vec3), max_norm: float):
    tid = wp.tid()
    g = grad[tid]
    n = wp.length(g)
    if n > max_norm:
        grad[tid] = g * (max_norm / n)


class Example:
    def __init__(self, stage=None, verbose=False, device=None):
        self.verbose = verbose

        # seconds
        sim_duration = 2.0

        # control frequency
        fps = 60
        self.frame_dt = 1.0 / fps
        frame_steps = int(sim_duration / self.frame_dt)

        # sim frequency
        self.sim_substeps = 16
        self.sim_steps = frame_steps * self.sim_substeps
        self.sim_dt = self.frame_dt / self.sim_substeps

        self.iter = 0
        self.render_time = 0.0

        self.train_iters = 64
        self.train_rate = 5.0
        self.grad_clip = 1000.0

        self.target = (8.0, 0.0, 0.0)

        # the cloth and all simulation buffers live on the GPU
        self.device = device if device is not None else "cuda:0"

        builder = wp.sim.ModelBuilder()
        builder.add_cloth_grid(
            pos=wp.vec3(0.0, 0.0, 0.0),
            vel=wp.vec3(0.0, 5.0, 0.0),
            rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -math.pi * 0.25),
            dim_x=16,
            dim_y=16,
            cell_x=1.0 / 16,
            cell_y=1.0 / 16,
            mass=1.0,
            tri_ke=10000.0,
            tri_ka=10000.0,
            tri_kd=100.0,
            tri_lift=10.0,
            tri_drag=5.0,
        )

        self.model = builder.finalize(device=self.device, requires_grad=True)
        self.model.ground = False

        self.integrator = wp.sim.SemiImplicitIntegrator()

        # allocate sim states for trajectory
        self.states = []
        for _i in range(self.sim_steps + 1):
            self.states.append(self.model.state(requires_grad=True))

        self.com = wp.zeros(1, dtype=wp.vec3, device=self.device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float32, device=self.device, requires_grad=True)

        # rendering
        if stage:
            self.renderer = wp.sim.render.SimRenderer(self.model, stage)
        else:
            self.renderer = None

        # capture forward/backward passes
        self.use_cuda_graph = wp.get_device(self.device).is_cuda
        if self.use_cuda_graph:
            wp.capture_begin(self.device)
            try:
                self.tape = wp.Tape()
                with self.tape:
                    self.compute_loss()
                self.tape.backward(self.loss)
            finally:
                self.graph = wp.capture_end(self.device)
        else:
            self.tape = None
            self.graph = None

    def compute_loss(self):
        # run control loop
        for i in range(self.sim_steps):
            self.states[i].clear_forces()

            self.integrator.simulate(self.model, self.states[i], self.states[i + 1], self.sim_dt)

        # compute loss on final state
        self.com.zero_()
        wp.launch(
            com_kernel,
            dim=self.model.particle_count,
            inputs=[self.states[-1].particle_q, self.model.particle_count, self.com],
            device=self.device,
        )
        wp.launch(loss_kernel, dim=1, inputs=[self.com, self.target, self.loss], device=self.device)

        return self.loss

    def render(self):
        if self.renderer is None:
            return

        # draw trajectory
        traj_verts = [self.states[0].particle_q.numpy().mean(axis=0)]

        for i in range(0, self.sim_steps, self.sim_substeps):
            traj_verts.append(self.states[i].particle_q.numpy().mean(axis=0))

            self.renderer.begin_frame(self.render_time)
            self.renderer.render(self.states[i])
            self.renderer.render_box(
                pos=self.target,
                rot=wp.quat_identity(),
                extents=(0.1, 0.1, 0.1),
                name="target",
                color=(1.0, 0.0, 0.0),
            )
            self.renderer.render_line_strip(
                vertices=traj_verts,
                color=wp.render.bourke_color_map(0.0, 269.0, self.loss.numpy()[0]),
                radius=0.02,
                name=f"traj_{self.iter-1}",
            )
            self.renderer.end_frame()

            self.render_time += self.frame_dt

    def check_grad(self):
        param = self.states[0].particle_qd

        # initial value
        x_c = param.numpy().flatten()

        # compute numeric gradient
        x_grad_numeric = np.zeros_like(x_c)

        for i in range(len(x_c)):
            eps = 1.0e-3

            step = np.zeros_like(x_c)
            step[i] = eps

            x_1 = x_c + step
            x_0 = x_c - step

            param.assign(x_1)
            l_1 = self.compute_loss().numpy()[0]

            param.assign(x_0)
            l_0 = self.compute_loss().numpy()[0]

            dldx = (l_1 - l_0) / (eps * 2.0)

            x_grad_numeric[i] = dldx

        # reset initial state
        param.assign(x_c)

        # compute analytic gradient
        tape = wp.Tape()
        with tape:
            l = self.compute_loss()

        tape.backward(l)

        x_grad_analytic = tape.gradients[param]

        print(f"numeric grad: {x_grad_numeric}")
        print(f"analytic grad: {x_grad_analytic}")

        tape.zero()

    def step(self):
        with wp.ScopedTimer("step", active=self.verbose):
            if self.graph:
                wp.capture_launch(self.graph)
            else:
                self.tape = wp.Tape()
                with self.tape:
                    self.compute_loss()
                self.tape.backward(self.loss)

            # gradient descent step
            x = self.states[0].particle_qd

            if self.verbose:
                print(f"Iter: {self.iter} Loss: {self.loss}")

            wp.launch(clip_grad_kernel, dim=len(x), inputs=[x.grad, self.grad_clip], device=self.device)
            wp.launch(step_kernel, dim=len(x), inputs=[x, x.grad, self.train_rate], device=self.device)

            # clear grads for next iteration
            self.tape.zero()

            self.iter = self.iter + 1


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--device", type=str, default="cuda:0", help="Override the default Warp device.")
    parser.add_argument(
        "--stage_path",
        type=lambda x: None if x == "None" else str(x),
        default="example_cloth_throw.usd",
        help="Path to the output USD file.",
    )
    parser.add_argument("--train_iters", type=int, default=64, help="Total number of training iterations.")
    parser.add_argument("--verbose", action="store_true", help="Print out additional status messages during execution.")

    args = parser.parse_known_args()[0]

    with wp.ScopedDevice(args.device):
        example = Example(stage=args.stage_path, verbose=args.verbose, device=args.device)
        example.check_grad()

        # replay and optimize
        for i in range(args.train_iters):
            example.step()
            if i % 4 == 0:
                example.render()

        if example.renderer:
            example.renderer.save()

    out_dir = os.path.dirname(os.path.abspath(args.stage_path or "."))
    print(f"done, wrote {args.stage_path} under {out_dir}")
