"""
Agent that evaluates TransFuser++ (and the other garage models) on the CARLA leaderboard.
The agent only sees sensor data; privileged information is used for debugging visualisations only.
"""

import os
import json
import math
import pickle
import pathlib
from copy import deepcopy
from collections import deque

import cv2
import numpy as np
import carla

import torch
import torch.nn.functional as F

from leaderboard.autoagents import autonomous_agent
from model import LidarCenterNet
from config import GlobalConfig
from data import CARLA_Data
from nav_planner import RoutePlanner, extrapolate_waypoint_route
import transfuser_utils as t_u

# Configure pytorch for maximum performance
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cudnn.allow_tf32 = True


def get_entry_point():
    return 'SensorAgent'


class SensorAgent(autonomous_agent.AutonomousAgent):
    """
    Main class that runs the agents with the run_step function
    """

    def setup(self, path_to_conf_file, route_index=None, traffic_manager=None):
        """Sets up the agent. route_index is for logging purposes"""
        torch.cuda.empty_cache()
        self.track = autonomous_agent.Track.SENSORS
        self.config_path = path_to_conf_file
        self.step = -1
        self.initialized = False
        self.device = torch.device('cuda:0')

        # Load the config saved during training
        with open(os.path.join(path_to_conf_file, 'config.pickle'), 'rb') as args_file:
            loaded_config = pickle.load(args_file)

        # Generate new config for the case that it has new variables.
        self.config = GlobalConfig()
        # Overwrite all properties that were set in the saved config.
        self.config.__dict__.update(loaded_config.__dict__)

        # For models supporting different output modalities we select which one to use here.
        self.uncertainty_weight = int(os.environ.get('UNCERTAINTY_WEIGHT', 1))
        self.stop_sign_controller = int(os.environ.get('STOP_CONTROL', 0))
        self.use_amp = int(os.environ.get('AGENT_AMP', 1))
        self.time_inference = int(os.environ.get('TIME_INFERENCE', 0))

        self.config.debug = int(os.environ.get('VISU_PLANT', 0)) == 1
        self.data = CARLA_Data(root=[], config=self.config, shared_dict=None)

        # Load model files
        self.nets = []
        self.model_count = 0  # Counts how many models are in our ensemble
        for file in sorted(os.listdir(self.config_path)):
            if file.endswith('.pth') and file.startswith('model'):
                self.model_count += 1
                print(os.path.join(self.config_path, file))
                net = LidarCenterNet(self.config)
                if self.config.sync_batch_norm:
                    # Model was trained with Sync. Batch Norm.
                    # Need to convert it otherwise parameters will load wrong.
                    net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
                state_dict = torch.load(os.path.join(self.config_path, file), map_location=self.device)

                net.load_state_dict(state_dict, strict=False)
                net.cuda(device=self.device)
                net.eval()
                self.nets.append(net)

        self.stuck_detector = 0
        self.force_move = 0

        self.bb_buffer = deque(maxlen=1)
        self.commands = deque(maxlen=2)
        self.commands.append(4)
        self.commands.append(4)
        self.target_point_prev = [1e5, 1e5]

        # Filtering
        self.points = None
        self.lidar_buffer = deque(maxlen=self.config.lidar_seq_len)
        self.lidar_last = None
        self.state_log = deque(maxlen=max((self.config.lidar_seq_len * self.config.data_save_freq), 2))

        # Path to where visualizations and other debug output gets stored
        self.save_path = os.environ.get('SAVE_PATH')
        if self.save_path is not None and route_index is not None:
            self.save_path = pathlib.Path(self.save_path) / route_index
            pathlib.Path(self.save_path).mkdir(parents=True, exist_ok=True)

        self.inference_ms = []
        if self.time_inference:
            self.start_event = torch.cuda.Event(enable_timing=True)
            self.end_event = torch.cuda.Event(enable_timing=True)

    def _init(self):
        # The CARLA leaderboard does not expose the lat lon reference value of the GPS which make it impossible to use the
        # GPS because the scale is not known. In the past this was not an issue since the reference was constant 0.0
        # But town 13 has a different value in CARLA 0.9.15. The following code, adapted from Bench2DriveZoo estimates the
        # lat, lon reference values by abusing the fact that the leaderboard exposes the route plan also in CARLA
        # coordinates.
        self.lat_ref, self.lon_ref = t_u.get_lat_lon_ref(self._global_plan, self._global_plan_world_coord)
        self._route_planner = RoutePlanner(self.config.route_planner_min_distance, self.config.route_planner_max_distance,
                                           self.lat_ref, self.lon_ref)
        self._route_planner.set_route(self._global_plan, True)
        self.initialized = True

    def sensors(self):
        specs = [{
            'type': 'sensor.camera.rgb',
            'x': self.config.camera_pos[0], 'y': self.config.camera_pos[1], 'z': self.config.camera_pos[2],
            'roll': self.config.camera_rot_0[0], 'pitch': self.config.camera_rot_0[1], 'yaw': self.config.camera_rot_0[2],
            'width': self.config.camera_width, 'height': self.config.camera_height, 'fov': self.config.camera_fov,
            'id': 'rgb_front'
        }, {
            'type': 'sensor.other.imu', 'x': 0.0, 'y': 0.0, 'z': 0.0, 'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
            'sensor_tick': self.config.carla_frame_rate, 'id': 'imu'
        }, {
            'type': 'sensor.other.gnss', 'x': 0.0, 'y': 0.0, 'z': 0.0, 'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
            'sensor_tick': 0.01, 'id': 'gps'
        }, {
            'type': 'sensor.speedometer', 'reading_frequency': self.config.carla_fps, 'id': 'speed'
        }, {
            'type': 'sensor.lidar.ray_cast',
            'x': self.config.lidar_pos[0], 'y': self.config.lidar_pos[1], 'z': self.config.lidar_pos[2],
            'roll': self.config.lidar_rot[0], 'pitch': self.config.lidar_rot[1], 'yaw': self.config.lidar_rot[2],
            'rotation_frequency': self.config.lidar_rotation_frequency, 'points_per_second': self.config.lidar_points_per_second,
            'id': 'lidar'
        }]
        return specs

    def tick(self, input_data):
        rgb = input_data['rgb_front'][1][:, :, :3]
        # Also add jpg artifacts at test time, because the training data was saved as jpg.
        _, compressed_image_i = cv2.imencode('.jpg', rgb)
        rgb = cv2.imdecode(compressed_image_i, cv2.IMREAD_UNCHANGED)
        rgb = cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB)
        # Switch to pytorch channel first order
        rgb = np.transpose(rgb, (2, 0, 1))
        rgb = torch.from_numpy(rgb).to(self.device, dtype=torch.float32).unsqueeze(0)

        gps_pos = self._route_planner.convert_gps_to_carla(input_data['gps'][1])
        speed = input_data['speed'][1]['speed']
        compass = t_u.preprocess_compass(input_data['imu'][1][-1])

        result = {
            'rgb': rgb,
            'compass': compass,
            'speed': speed,
            'gps': gps_pos[:2],
        }

        result['lidar'] = t_u.lidar_to_ego_coordinate(self.config, input_data['lidar'])
        waypoint_route = self._route_planner.run_step(np.append(result['gps'], gps_pos[2]))
        if len(waypoint_route) > 2:
            target_point, far_command = waypoint_route[1]
        elif len(waypoint_route) > 1:
            target_point, far_command = waypoint_route[1]
        else:
            target_point, far_command = waypoint_route[0]

        if (target_point != self.target_point_prev).all():
            self.target_point_prev = target_point
            self.commands.append(far_command.value)

        one_hot_command = t_u.command_to_one_hot(self.commands[-2])
        result['command'] = torch.from_numpy(one_hot_command[np.newaxis]).to(self.device, dtype=torch.float32)

        ego_target_point = t_u.inverse_conversion_2d(target_point[:2], result['gps'], result['compass'])
        ego_target_point = torch.from_numpy(ego_target_point[np.newaxis]).to(self.device, dtype=torch.float32)
        result['target_point'] = ego_target_point
        return result

    @torch.inference_mode()  # Turns off gradient computation
    def run_step(self, input_data, timestamp, sensors=None):  # pylint: disable=locally-disabled, unused-argument
        self.step += 1

        if not self.initialized:
            self._init()
            control = carla.VehicleControl(steer=0.0, throttle=0.0, brake=1.0)
            self.control = control
            tick_data = self.tick(input_data)
            self.lidar_last = deepcopy(tick_data['lidar'])
            return control

        # Need to run this every step for GPS filtering
        tick_data = self.tick(input_data)

        lidar_indices = []
        for i in range(self.config.lidar_seq_len):
            lidar_indices.append(i * self.config.data_save_freq)

        # Merge the two most recent LiDAR sweeps (CARLA's lidar only covers half a rotation per frame)
        lidar_full = np.concatenate((tick_data['lidar'], self.lidar_last), axis=0)
        self.lidar_buffer.append(lidar_full)
        self.lidar_last = deepcopy(tick_data['lidar'])

        lidar_bev = self.data.lidar_to_histogram_features(self.lidar_buffer[-1], use_ground_plane=False)
        lidar_bev = torch.from_numpy(lidar_bev).unsqueeze(0).cuda(non_blocking=True)

        gt_velocity = torch.FloatTensor([tick_data['speed']]).cuda()
        velocity = gt_velocity.reshape(1, 1)

        if self.time_inference:
            self.start_event.record()

        pred_wps, pred_target_speeds, pred_checkpoints, pred_bbs = [], [], [], []
        for i in range(self.model_count):
            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=bool(self.use_amp)):
                pred_wp, pred_target_speed, pred_checkpoint, _, _, pred_bounding_box = self.nets[i].forward(
                    rgb=tick_data['rgb'], lidar_bev=lidar_bev, target_point=tick_data['target_point'],
                    ego_vel=velocity, command=tick_data['command'])
            pred_wps.append(pred_wp.float())
            pred_target_speeds.append(F.softmax(pred_target_speed.float(), dim=1))
            pred_checkpoints.append(pred_checkpoint.float())
            pred_bbs.append(t_u.plant_quant_to_box(self.config, pred_bounding_box))

        if self.time_inference:
            self.end_event.record()
            torch.cuda.current_stream().synchronize()
            self.inference_ms.append(self.start_event.elapsed_time(self.end_event))

        pred_wp = torch.stack(pred_wps, dim=0).mean(dim=0)
        pred_target_speed = torch.stack(pred_target_speeds, dim=0).mean(dim=0)
        pred_checkpoint = torch.stack(pred_checkpoints, dim=0).mean(dim=0)

        # uncertainty-weighted target speed (TF++ paper Eq. 3)
        if self.uncertainty_weight:
            uncertainty = pred_target_speed.detach().cpu().numpy()
            if uncertainty[0][0] > self.config.brake_uncertainty_threshold:
                pred_target_speed = self.config.target_speeds[0]
            else:
                pred_target_speed = sum(uncertainty[0] * self.config.target_speeds)
        else:
            pred_target_speed_index = torch.argmax(pred_target_speed)
            pred_target_speed = self.config.target_speeds[pred_target_speed_index]

        steer, throttle, brake = self.nets[0].control_pid_direct(pred_checkpoint, pred_target_speed, gt_velocity)

        # Stuck detection: CARLA traffic lights can block forever at the start of a route
        if gt_velocity < 0.1:
            self.stuck_detector += 1
        else:
            self.stuck_detector = 0
        if self.stuck_detector > self.config.stuck_threshold:
            self.force_move = self.config.creep_duration

        if self.force_move > 0:
            emergency_stop = False
            if self.config.detect_boxes and len(pred_bbs[0]) > 0:
                emergency_stop = t_u.box_in_path(pred_bbs[0], self.config)
            if not emergency_stop:
                throttle = max(self.config.creep_throttle, throttle)
                brake = False
                self.force_move -= 1

        control = carla.VehicleControl(steer=float(steer), throttle=float(throttle), brake=float(brake))
        self.control = control
        return control

    def destroy(self, results=None):  # pylint: disable=locally-disabled, unused-argument
        if self.time_inference and len(self.inference_ms) > 0:
            ms = np.array(self.inference_ms)
            print(f'inference: mean {ms.mean():.2f} ms, p95 {np.percentile(ms, 95):.2f} ms over {len(ms)} steps')
            stats = {'mean_ms': float(ms.mean()), 'p95_ms': float(np.percentile(ms, 95)),
                     'max_alloc_mb': torch.cuda.max_memory_allocated() / 2 ** 20}
            if self.save_path is not None:
                with open(pathlib.Path(self.save_path) / 'inference_time.json', 'w', encoding='utf-8') as f:
                    json.dump(stats, f)
        del self.nets
        del self.data
