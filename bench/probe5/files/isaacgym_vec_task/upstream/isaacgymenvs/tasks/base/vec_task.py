# Base class for vectorised Isaac Gym tasks: thousands of environments simulated in one PhysX
# scene, with observation/reward/reset buffers kept as torch tensors so that the RL algorithm
# never copies state through the host (GPU pipeline).

import abc
import sys
import time
from copy import deepcopy
from typing import Any, Dict, Tuple

import numpy as np
import torch
from gym import spaces
from isaacgym import gymapi, gymtorch

DEFAULT_SIM_CFG = {
    "dt": 1.0 / 60.0,
    "substeps": 2,
    "up_axis": "z",
    "use_gpu_pipeline": True,
    "gravity": [0.0, 0.0, -9.81],
    "physx": {
        "num_threads": 4,
        "solver_type": 1,
        "use_gpu": True,
        "num_position_iterations": 4,
        "num_velocity_iterations": 0,
        "contact_offset": 0.02,
        "rest_offset": 0.001,
        "bounce_threshold_velocity": 0.2,
        "max_depenetration_velocity": 1000.0,
        "default_buffer_size_multiplier": 5.0,
    },
}


class VecTask(abc.ABC):

    def __init__(self, config: Dict[str, Any], rl_device: str = "cuda:0", sim_device: str = "cuda:0",
                 graphics_device_id: int = 0, headless: bool = True):
        self.cfg = config
        self.rl_device = rl_device
        sim_cfg = deepcopy(DEFAULT_SIM_CFG)
        sim_cfg.update(self.cfg.get("sim", {}))
        self.cfg["sim"] = sim_cfg

        split_device = sim_device.split(":")
        self.device_type = split_device[0]
        self.device_id = int(split_device[1]) if len(split_device) > 1 else 0

        self.device = "cpu"
        if self.cfg["sim"]["use_gpu_pipeline"]:
            if self.device_type.lower() == "cuda" or self.device_type.lower() == "gpu":
                self.device = "cuda" + ":" + str(self.device_id)
            else:
                print("GPU Pipeline can only be used with GPU simulation. Forcing CPU Pipeline.")
                self.cfg["sim"]["use_gpu_pipeline"] = False

        self.headless = headless
        self.graphics_device_id = -1 if headless else graphics_device_id

        self.num_envs = self.cfg["env"]["numEnvs"]
        self.num_obs = self.cfg["env"]["numObservations"]
        self.num_states = self.cfg["env"].get("numStates", 0)
        self.num_actions = self.cfg["env"]["numActions"]
        self.control_freq_inv = self.cfg["env"].get("controlFrequencyInv", 1)
        self.max_episode_length = self.cfg["env"].get("episodeLength", 1000)
        self.clip_obs = self.cfg["env"].get("clipObservations", np.inf)
        self.clip_actions = self.cfg["env"].get("clipActions", np.inf)

        self.obs_space = spaces.Box(np.ones(self.num_obs) * -np.inf, np.ones(self.num_obs) * np.inf)
        self.act_space = spaces.Box(np.ones(self.num_actions) * -1., np.ones(self.num_actions) * 1.)

        self.gym = gymapi.acquire_gym()
        self.sim_params = self._parse_sim_params(self.cfg["sim"])
        self.sim = self.create_sim()
        self.gym.prepare_sim(self.sim)
        self.allocate_buffers()
        self.obs_dict = {}
        self.extras = {}

    def _parse_sim_params(self, sim_cfg: Dict[str, Any]) -> gymapi.SimParams:
        sim_params = gymapi.SimParams()
        sim_params.dt = sim_cfg["dt"]
        sim_params.substeps = sim_cfg["substeps"]
        sim_params.up_axis = gymapi.UP_AXIS_Z if sim_cfg["up_axis"] == "z" else gymapi.UP_AXIS_Y
        sim_params.gravity = gymapi.Vec3(*sim_cfg["gravity"])
        sim_params.use_gpu_pipeline = sim_cfg["use_gpu_pipeline"]
        physx = sim_cfg["physx"]
        sim_params.physx.num_threads = physx["num_threads"]
        sim_params.physx.solver_type = physx["solver_type"]
        sim_params.physx.use_gpu = physx["use_gpu"]
        sim_params.physx.num_position_iterations = physx["num_position_iterations"]
        sim_params.physx.num_velocity_iterations = physx["num_velocity_iterations"]
        sim_params.physx.contact_offset = physx["contact_offset"]
        sim_params.physx.rest_offset = physx["rest_offset"]
        sim_params.physx.bounce_threshold_velocity = physx["bounce_threshold_velocity"]
        sim_params.physx.max_depenetration_velocity = physx["max_depenetration_velocity"]
        sim_params.physx.default_buffer_size_multiplier = physx["default_buffer_size_multiplier"]
        return sim_params

    def create_sim(self):
        sim = self.gym.create_sim(self.device_id, self.graphics_device_id, gymapi.SIM_PHYSX, self.sim_params)
        if sim is None:
            print("*** Failed to create sim")
            sys.exit(1)
        self._create_ground_plane(sim)
        self._create_envs(sim)
        return sim

    def _create_ground_plane(self, sim):
        plane_params = gymapi.PlaneParams()
        plane_params.normal = gymapi.Vec3(0.0, 0.0, 1.0)
        self.gym.add_ground(sim, plane_params)

    @abc.abstractmethod
    def _create_envs(self, sim):
        """Load assets and create self.num_envs actors."""

    @abc.abstractmethod
    def pre_physics_step(self, actions: torch.Tensor):
        """Apply the actions to the environment (e.g. set_dof_actuation_force_tensor)."""

    @abc.abstractmethod
    def post_physics_step(self):
        """Refresh state tensors, compute observations, rewards and resets."""

    def allocate_buffers(self):
        self.obs_buf = torch.zeros((self.num_envs, self.num_obs), device=self.device, dtype=torch.float)
        self.states_buf = torch.zeros((self.num_envs, self.num_states), device=self.device, dtype=torch.float)
        self.rew_buf = torch.zeros(self.num_envs, device=self.device, dtype=torch.float)
        self.reset_buf = torch.ones(self.num_envs, device=self.device, dtype=torch.long)
        self.timeout_buf = torch.zeros(self.num_envs, device=self.device, dtype=torch.long)
        self.progress_buf = torch.zeros(self.num_envs, device=self.device, dtype=torch.long)
        self.randomize_buf = torch.zeros(self.num_envs, device=self.device, dtype=torch.long)

    def step(self, actions: torch.Tensor) -> Tuple[Dict[str, torch.Tensor], torch.Tensor, torch.Tensor, Dict[str, Any]]:
        action_tensor = torch.clamp(actions, -self.clip_actions, self.clip_actions)
        self.pre_physics_step(action_tensor)

        for _ in range(self.control_freq_inv):
            self.gym.simulate(self.sim)

        # to fix!
        if self.device == "cpu":
            self.gym.fetch_results(self.sim, True)

        self.post_physics_step()

        self.timeout_buf = torch.where(self.progress_buf >= self.max_episode_length - 1,
                                       torch.ones_like(self.timeout_buf), torch.zeros_like(self.timeout_buf))
        self.extras["time_outs"] = self.timeout_buf.to(self.rl_device)
        self.obs_dict["obs"] = torch.clamp(self.obs_buf, -self.clip_obs, self.clip_obs).to(self.rl_device)
        if self.num_states > 0:
            self.obs_dict["states"] = self.states_buf.to(self.rl_device)
        return self.obs_dict, self.rew_buf.to(self.rl_device), self.reset_buf.to(self.rl_device), self.extras

    def zero_actions(self) -> torch.Tensor:
        return torch.zeros([self.num_envs, self.num_actions], dtype=torch.float32, device=self.rl_device)

    def reset_idx(self, env_ids):
        """Reset the given environments; task-specific."""

    def reset(self):
        zero_actions = self.zero_actions()
        self.step(zero_actions)
        self.obs_dict["obs"] = torch.clamp(self.obs_buf, -self.clip_obs, self.clip_obs).to(self.rl_device)
        if self.num_states > 0:
            self.obs_dict["states"] = self.states_buf.to(self.rl_device)
        return self.obs_dict

    def wrap_state_tensor(self, acquire_fn):
        """gymtorch view of a simulator state tensor (on self.device with the GPU pipeline)."""
        t = gymtorch.wrap_tensor(acquire_fn(self.sim))
        return t

    def benchmark(self, steps=1000):
        actions = self.zero_actions()
        t0 = time.time()
        for _ in range(steps):
            self.step(actions)
        torch.cuda.synchronize()
        fps = steps * self.num_envs / (time.time() - t0)
        print(f"{fps:,.0f} env steps/s ({self.num_envs} envs, pipeline={'gpu' if self.device != 'cpu' else 'cpu'})")
        return fps
