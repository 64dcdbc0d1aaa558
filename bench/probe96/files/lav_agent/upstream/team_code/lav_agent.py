import os
import math
import yaml
import numpy as np
import torch
import carla
from collections import deque

from leaderboard.autoagents.autonomous_agent import AutonomousAgent, Track
from team_code.pid import PIDController
from team_code.ekf import EKF
from team_code.planner import RoutePlanner
from team_code.waypointer import Waypointer
from lav.utils.point_painting import CoordConverter, point_painting
from lav.models.lidar import LiDARModel
from lav.models.uniplanner import UniPlanner
from lav.utils import _numpy


def get_entry_point():
    return 'LAVAgent'


class LAVAgent(AutonomousAgent):
    def sensors(self):
        sensors = [
            {'type': 'sensor.speedometer', 'id': 'EGO'},
            {'type': 'sensor.other.gnss', 'x': 0., 'y': 0.0, 'z': self.camera_z, 'id': 'GPS'},
            {'type': 'sensor.other.imu', 'x': 0., 'y': 0.0, 'z': self.camera_z, 'roll': 0.0, 'pitch': 0.0,
             'yaw': 0.0, 'sensor_tick': 0.05, 'id': 'IMU'},
            {'type': 'sensor.lidar.ray_cast', 'x': 0.0, 'y': 0.0, 'z': self.camera_z, 'roll': 0.0, 'pitch': 0.0,
             'yaw': -90.0, 'id': 'LIDAR'},
        ]
        # Add cameras
        for i, yaw in enumerate(self.camera_yaws):
            x = self.camera_x * math.cos(yaw * math.pi / 180)
            y = self.camera_x * math.sin(yaw * math.pi / 180)
            sensors.append({'type': 'sensor.camera.rgb', 'x': x, 'y': y, 'z': self.camera_z, 'roll': 0.0,
                            'pitch': 0.0, 'yaw': yaw, 'width': 256, 'height': 288, 'fov': 64, 'id': f'RGB_{i}'})
        sensors.append({'type': 'sensor.camera.rgb', 'x': self.camera_x, 'y': 0, 'z': self.camera_z, 'roll': 0.0,
                        'pitch': 0.0, 'yaw': 0, 'width': 480, 'height': 288, 'fov': 40, 'id': 'TEL_RGB'})
        return sensors

    def setup(self, path_to_conf_file):
        self.track = Track.SENSORS
        self.num_frames = 0

        with open(path_to_conf_file, 'r') as f:
            config = yaml.safe_load(f)
        for key, value in config.items():
            setattr(self, key, value)

        self.device = torch.device('cuda')

        self.waypointer = None
        self.planner = None

        # Setup models
        self.lidar_model = LiDARModel(
            num_input=len(self.seg_channels) + 10 if self.point_painting else 9,
            backbone=self.backbone,
            num_features=self.num_features,
            min_x=self.min_x, max_x=self.max_x,
            min_y=self.min_y, max_y=self.max_y,
            pixels_per_meter=self.pixels_per_meter,
        ).to(self.device)

        self.uniplanner = UniPlanner(
            self.bev_planner,
            self.pixels_per_meter,
            self.crop_size,
            self.feature_x_jitter,
            self.feature_angle_jitter,
            self.x_offset, self.y_offset,
            self.num_cmds,
            self.num_plan,
            self.num_plan_iter,
        ).to(self.device)

        # The segmentation and brake models are shipped as traced TorchScript modules (traced on the GPU)
        self.bra_model = torch.jit.load(self.bra_model_trace_dir)
        self.seg_model = torch.jit.load(self.seg_model_trace_dir)

        # Load the models
        lidar_model_dict = self.lidar_model.state_dict()
        uniplanner_dict = self.uniplanner.state_dict()

        lidar_model_dict.update(torch.load(self.lidar_model_dir))
        uniplanner_dict.update(torch.load(self.uniplanner_dir))

        self.lidar_model.load_state_dict(lidar_model_dict)
        self.uniplanner.load_state_dict(uniplanner_dict)

        self.lidar_model.eval()
        self.uniplanner.eval()
        self.bra_model.eval()
        self.seg_model.eval()

        # Coordinate converters for point painting
        self.coord_converters = [CoordConverter(
            cam_yaw, lidar_xyz=[0, 0, self.camera_z], cam_xyz=[self.camera_x, 0, self.camera_z],
            rgb_h=288, rgb_w=256, fov=64
        ) for cam_yaw in self.camera_yaws]

        # Setup tracker
        self.ekf = EKF(1.477, 1.3, 1.3)
        self.ekf_initialized = False

        # FIFO buffers for the lidar sweeps (CARLA gives half a sweep per frame at 20 Hz)
        self.lidars = deque([])

        # Controllers
        self.turn_controller = PIDController(K_P=self.turn_KP, K_I=self.turn_KI, K_D=self.turn_KD, n=self.turn_n)
        self.speed_controller = PIDController(K_P=self.speed_KP, K_I=self.speed_KI, K_D=self.speed_KD, n=self.speed_n)
        self.prev_control = None
        self.lane_change_counter = 0
        self.stop_counter = 0
        self.force_move = 0

    def destroy(self):
        if len(self.lidars) > 0:
            self.lidars.clear()
        del self.lidar_model
        del self.uniplanner
        del self.seg_model
        del self.bra_model
        torch.cuda.empty_cache()

    def flush_data(self):
        self.num_frames = 0

    @torch.no_grad()
    def run_step(self, input_data, timestamp):
        _, lidar = input_data.get('LIDAR')
        _, gps = input_data.get('GPS')
        _, imu = input_data.get('IMU')
        _, ego = input_data.get('EGO')
        spd = ego.get('speed')
        compass = imu[-1]
        if np.isnan(compass):
            compass = 0.0

        if self.waypointer is None:
            self.waypointer = Waypointer(self._global_plan, gps)
            _, _, cmd = self.waypointer.tick(gps)
            return carla.VehicleControl(steer=0, throttle=0, brake=0)

        _, _, cmd = self.waypointer.tick(gps)

        if not self.ekf_initialized:
            self.ekf.init(*self.waypointer.gps_to_location(gps), compass - math.pi / 2)
            self.ekf_initialized = True

        loc = self.ekf.x[:2]
        ori = self.ekf.x[2]

        # LiDAR sweeps: accumulate the last two half-rotations
        lidar = lidar[:, [0, 1, 2, 3]]
        self.lidars.append(lidar)
        if len(self.lidars) > self.num_frame_stack + 1:
            self.lidars.popleft()
        if len(self.lidars) < self.num_frame_stack + 1:
            return carla.VehicleControl(steer=0, throttle=0, brake=0)
        lidar_points = np.concatenate(list(self.lidars)[-2:])

        rgbs = []
        for i in range(len(self.camera_yaws)):
            _, rgb = input_data.get(f'RGB_{i}')
            rgbs.append(rgb[..., :3][..., ::-1])
        all_rgbs = np.stack(rgbs, axis=0)
        _, tel_rgb = input_data.get('TEL_RGB')
        tel_rgb = tel_rgb[..., :3][..., ::-1].copy()

        # Semantic segmentation of all views in one batch (traced model)
        all_rgbs_t = torch.tensor(all_rgbs.copy()).permute(0, 3, 1, 2).float().to(self.device)
        pred_sem = torch.softmax(self.seg_model(all_rgbs_t), dim=1)

        # Brake prediction from the front + telephoto cameras
        rgb_t = torch.tensor(rgbs[1].copy()[None]).permute(0, 3, 1, 2).float().to(self.device)
        tel_rgb_t = torch.tensor(tel_rgb[None]).permute(0, 3, 1, 2).float().to(self.device)
        pred_bra = float(self.bra_model(rgb_t, tel_rgb_t))

        if self.point_painting:
            fused_lidar = self.infer_painting(lidar_points, pred_sem)
        else:
            fused_lidar = lidar_points

        # Object detection and planning on the painted point cloud
        lidar_t = torch.tensor(fused_lidar, dtype=torch.float32).to(self.device)
        features, pred_heatmaps, pred_sizes, pred_orients, pred_bev = self.lidar_model([lidar_t], [len(lidar_t)])

        nxp = self.waypointer.gps_to_location(self.waypointer.next_gps)
        nxp = np.array(nxp) - loc
        theta = -ori
        rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        nxp = rot @ nxp

        ego_plan_locs, ego_cast_locs, _, _ = self.uniplanner.infer(
            features[0], pred_bev[0],
            cmd_value=cmd.value - 1,
            nxp=torch.tensor(nxp, dtype=torch.float32).to(self.device),
        )
        ego_plan_locs = _numpy(ego_plan_locs)
        ego_cast_locs = _numpy(ego_cast_locs)

        if cmd.value in [4, 5]:
            ego_plan_locs = ego_cast_locs[cmd.value - 1]

        steer, throt, brake = self.pid_control(ego_plan_locs, spd, cmd.value - 1)

        if pred_bra > 0.1:
            throt, brake = 0, 1
        elif spd < 0.5:
            self.stop_counter += 1
        else:
            self.stop_counter = 0

        if self.stop_counter > 1200:
            self.force_move = 20
        if self.force_move > 0:
            throt, brake = max(0.4, throt), 0
            self.force_move -= 1

        self.ekf.step(spd, steer, *self.waypointer.gps_to_location(gps), compass - math.pi / 2)
        self.num_frames += 1
        return carla.VehicleControl(steer=steer, throttle=throt, brake=brake)

    def infer_painting(self, lidar, pred_sem):
        lidar_xyz = lidar[:, :3]
        lidar_xyz[:, 1] *= -1
        fused_lidar = [lidar_xyz, lidar[:, 3:]]
        lidar_t = torch.tensor(lidar_xyz, dtype=torch.float32, device='cuda')
        for coord_converter, sem in zip(self.coord_converters, pred_sem):
            lidar_cam = coord_converter(lidar_t)
            lidar_sem = point_painting(lidar_cam, sem[self.seg_channels])
            fused_lidar.append(_numpy(lidar_sem).T)
        return np.concatenate(fused_lidar, axis=-1)

    def pid_control(self, waypoints, speed, cmd):
        waypoints = np.copy(waypoints) * self.pixels_per_meter
        waypoints[:, 1] *= -1
        desired_speed = np.linalg.norm(waypoints[1:] - waypoints[:-1], axis=1).mean()
        desired_speed /= self.pixels_per_meter * 0.5
        aim = waypoints[self.aim_point[cmd]]
        angle = np.degrees(np.arctan2(aim[1], aim[0])) / 90
        steer = self.turn_controller.step(angle)
        steer = np.clip(steer, -1.0, 1.0)

        brake = desired_speed < self.brake_speed or (speed / desired_speed) > self.brake_ratio
        delta = np.clip(desired_speed - speed, 0.0, self.clip_delta)
        throttle = self.speed_controller.step(delta)
        throttle = np.clip(throttle, 0.0, self.max_throttle)
        throttle = throttle if not brake else 0.0
        return float(steer), float(throttle), float(brake)
