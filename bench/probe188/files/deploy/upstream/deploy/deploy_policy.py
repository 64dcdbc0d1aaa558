"""Run an exported legged_gym locomotion policy on the robot's onboard computer.

The policy is the TorchScript file written by `export_policy_as_jit` (policy_1.pt / policy_lstm_1.pt).
Proprioception comes from the low-level state topic, the observation is built exactly like
LeggedRobot.compute_observations() and joint position targets are published at 50 Hz.

Tested on a Jetson Orin NX (JetPack 6, CUDA 12.2) mounted on the Go2.
"""
import argparse
import time
import threading
from collections import deque

import numpy as np
import torch
import yaml

from robot_interface import LowLevelInterface, RemoteController  # thin wrapper around the vendor SDK


def parse_args():
    parser = argparse.ArgumentParser(description="Deploy a legged_gym policy on hardware")
    parser.add_argument("--policy", type=str, required=True, help="path to the exported TorchScript policy")
    parser.add_argument("--config", type=str, default="configs/go2.yaml")
    parser.add_argument("--device", type=str, default="cuda:0", help="inference device, e.g. cuda:0 or cpu")
    parser.add_argument("--fp16", action="store_true", help="run the policy in half precision")
    parser.add_argument("--benchmark", action="store_true", help="only measure inference latency and exit")
    parser.add_argument("--dry-run", action="store_true", help="do not send commands to the motors")
    return parser.parse_args()


class PolicyRunner:
    def __init__(self, policy_path, cfg, device, fp16=False):
        self.cfg = cfg
        if device.startswith("cuda") and not torch.cuda.is_available():
            print(f"[deploy] {device} requested but CUDA is not available, using cpu")
            device = "cpu"
        self.device = torch.device(device)
        self.fp16 = fp16 and self.device.type == "cuda"

        self.policy = torch.jit.load(policy_path, map_location=self.device)
        self.policy.eval()
        if self.fp16:
            self.policy = self.policy.half()
        self.is_recurrent = hasattr(self.policy, "reset_memory")

        self.num_obs = cfg["num_observations"]
        self.num_actions = cfg["num_actions"]
        self.obs_scales = cfg["obs_scales"]
        self.action_scale = cfg["action_scale"]
        self.default_dof_pos = torch.tensor(cfg["default_dof_pos"], dtype=torch.float32, device=self.device)
        self.last_actions = torch.zeros(self.num_actions, dtype=torch.float32, device=self.device)
        self.commands_scale = torch.tensor(
            [self.obs_scales["lin_vel"], self.obs_scales["lin_vel"], self.obs_scales["ang_vel"]], device=self.device
        )

        if self.device.type == "cuda" and torch.backends.cudnn.is_available():
            torch.backends.cudnn.benchmark = True
            print(f"[deploy] running on {torch.cuda.get_device_name(self.device)}")

    def _sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def reset(self):
        self.last_actions.zero_()
        if self.is_recurrent:
            self.policy.reset_memory()

    def build_obs(self, state, commands):
        base_ang_vel = torch.as_tensor(state["gyro"], dtype=torch.float32, device=self.device)
        projected_gravity = torch.as_tensor(state["projected_gravity"], dtype=torch.float32, device=self.device)
        dof_pos = torch.as_tensor(state["q"], dtype=torch.float32, device=self.device)
        dof_vel = torch.as_tensor(state["dq"], dtype=torch.float32, device=self.device)
        cmd = torch.as_tensor(commands, dtype=torch.float32, device=self.device)
        obs = torch.cat(
            (
                base_ang_vel * self.obs_scales["ang_vel"],
                projected_gravity,
                cmd[:3] * self.commands_scale,
                (dof_pos - self.default_dof_pos) * self.obs_scales["dof_pos"],
                dof_vel * self.obs_scales["dof_vel"],
                self.last_actions,
            ),
            dim=-1,
        )
        return torch.clip(obs, -self.cfg["clip_observations"], self.cfg["clip_observations"]).unsqueeze(0)

    @torch.no_grad()
    def act(self, obs):
        if self.fp16:
            obs = obs.half()
        actions = self.policy(obs).float().squeeze(0)
        actions = torch.clip(actions, -self.cfg["clip_actions"], self.cfg["clip_actions"])
        self.last_actions = actions
        targets = actions * self.action_scale + self.default_dof_pos
        return targets.cpu().numpy()

    def benchmark(self, iters=1000):
        dummy = torch.zeros(1, self.num_obs, device=self.device)
        for _ in range(50):
            self.act(dummy)
        self._sync()
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
        for _ in range(iters):
            self.act(dummy)
        end_evt.record()
        torch.cuda.synchronize()
        ms = start_evt.elapsed_time(end_evt) / iters
        print(f"[deploy] mean policy latency: {ms:.3f} ms ({1000.0 / ms:.0f} Hz max)")
        return ms


def control_loop(runner, robot, remote, dt, dry_run=False):
    latencies = deque(maxlen=500)
    runner.reset()
    next_tick = time.perf_counter()
    while not remote.stop_requested():
        state = robot.read_state()
        commands = remote.velocity_command()
        t0 = time.perf_counter()
        obs = runner.build_obs(state, commands)
        targets = runner.act(obs)
        latencies.append((time.perf_counter() - t0) * 1e3)
        if not dry_run:
            robot.send_position_targets(targets, kp=runner.cfg["kp"], kd=runner.cfg["kd"])
        next_tick += dt
        sleep = next_tick - time.perf_counter()
        if sleep > 0:
            time.sleep(sleep)
        else:
            next_tick = time.perf_counter()
        if len(latencies) == latencies.maxlen:
            print(f"[deploy] policy step p50={np.percentile(latencies, 50):.2f} ms p99={np.percentile(latencies, 99):.2f} ms")
            latencies.clear()


def main():
    args = parse_args()
    with open(args.config, "r") as f:
        cfg = yaml.safe_load(f)

    runner = PolicyRunner(args.policy, cfg, args.device, fp16=args.fp16)
    if args.benchmark:
        runner.benchmark()
        return

    robot = LowLevelInterface(cfg["network_interface"])
    remote = RemoteController(robot)
    robot.stand_up(cfg["default_dof_pos"], duration=2.0)

    dt = cfg["control_dt"]  # 0.02 s -> 50 Hz, matches sim decimation 4 x 0.005
    worker = threading.Thread(target=control_loop, args=(runner, robot, remote, dt, args.dry_run), daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            time.sleep(0.1)
    except KeyboardInterrupt:
        print("[deploy] interrupted, lying down")
    finally:
        robot.damping_mode()


if __name__ == "__main__":
    main()
