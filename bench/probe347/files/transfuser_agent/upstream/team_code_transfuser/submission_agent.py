import os
import datetime
import json
from copy import deepcopy

import cv2
import carla
from collections import deque

import torch
import numpy as np
import math

from leaderboard.autoagents import autonomous_agent
from model import LidarCenterNet
from config import GlobalConfig
from data import lidar_to_histogram_features, draw_target_point, lidar_bev_cam_correspondences

from shapely.geometry import Polygon

import itertools
import pathlib

from filterpy.kalman import MerweScaledSigmaPoints
from filterpy.kalman import UnscentedKalmanFilter as UKF

from agents.navigation.local_planner import RoadOption
from nav_planner import RoutePlanner

SAVE_PATH = os.environ.get('SAVE_PATH', None)


def get_entry_point():
    return 'HybridAgent'


class HybridAgent(autonomous_agent.AutonomousAgent):
    def setup(self, path_to_conf_file, route_index=None):
        self.track = autonomous_agent.Track.SENSORS
        self.config_path = path_to_conf_file
        self.step = -1
        self.initialized = False
        args_file = open(os.path.join(path_to_conf_file, 'args.txt'), 'r')
        self.args = json.load(args_file)
        args_file.close()

        # setting machine to avoid loading files
        self.config = GlobalConfig(setting='eval')

        if ('sync_batch_norm' in self.args):
            self.config.sync_batch_norm = bool(self.args['sync_batch_norm'])
        if ('use_point_pillars' in self.args):
            self.config.use_point_pillars = self.args['use_point_pillars']
        if ('n_layer' in self.args):
            self.config.n_layer = self.args['n_layer']
        if ('use_target_point_image' in self.args):
            self.config.use_target_point_image = bool(self.args['use_target_point_image'])

        self.backbone = self.args['backbone']  # Options 'transFuser', 'late_fusion', 'latentTF', 'geometric_fusion'
        self.lidar_pos = self.config.lidar_pos  # x, y, z coordinates of the LiDAR position.
        self.iou_treshold_nms = self.config.iou_treshold_nms  # Iou threshold used for Non Maximum suppression on the Bounding Box predictions.

        # Load model files
        self.nets = []
        self.model_count = 0  # Counts how many models are in our ensemble
        for file in os.listdir(path_to_conf_file):
            if file.endswith(".pth"):
                self.model_count += 1
                print(os.path.join(path_to_conf_file, file))
                net = LidarCenterNet(self.config, 'cuda', self.backbone, self.args['image_architecture'],
                                     self.args['lidar_architecture'], bool(self.args['use_velocity']))
                if (self.config.sync_batch_norm == True):
                    net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)  # Model was trained with Sync. Batch Norm. Need to convert it otherwise parameters will load incorrectly.
                state_dict = torch.load(os.path.join(path_to_conf_file, file), map_location='cuda:0')
                state_dict = {k[7:]: v for k, v in state_dict.items()}  # Removes the .module coming from the Distributed Training. Remove this if you want to evaluate a model trained without DDP.
                net.load_state_dict(state_dict, strict=False)
                net.cuda()
                net.eval()
                self.nets.append(net)

        self.stuck_detector = 0
        self.forced_move = 0

        self.dilation = 10  # Dilation that was applied when collecting the data.
        self.data_save_path = None
        self.lidar_buffer = deque(maxlen=2)
        self.lidar_last = None
        self.bb_buffer = deque(maxlen=1)

        # Filtering
        self.points = MerweScaledSigmaPoints(n=4, alpha=.00001, beta=2, kappa=0, subtract=residual_state_x)
        self.ukf = UKF(dim_x=4, dim_z=4, fx=bicycle_model_forward, hx=measurement_function_hx, dt=1 / self.config.carla_frame_rate,
                       points=self.points, x_mean_fn=state_mean, z_mean_fn=measurement_mean, residual_x=residual_state_x,
                       residual_z=residual_measurement_h)

        # State noise, same as measurement because we initialize with the first measurement later
        self.ukf.P = np.diag([0.5, 0.5, 0.000001, 0.000001])
        # Measurement noise
        self.ukf.R = np.diag([0.5, 0.5, 0.000000000000001, 0.000000000000001])
        self.ukf.Q = np.diag([0.0001, 0.0001, 0.001, 0.001])  # Model noise
        # Used to set the filter state equal the first measurement
        self.filter_initialized = False
        # Stores the last filtered positions of the ego vehicle. Need at least 2 for LiDAR 10 Hz realignment
        self.state_log = deque(maxlen=2)

        if SAVE_PATH is not None:
            now = datetime.datetime.now()
            string = pathlib.Path(os.environ['ROUTES']).stem + '_'
            string += '_'.join(map(lambda x: '%02d' % x, (now.month, now.day, now.hour, now.minute, now.second)))
            print(string)
            self.save_path = pathlib.Path(os.environ['SAVE_PATH']) / string
            self.save_path.mkdir(parents=True, exist_ok=False)
            (self.save_path / 'lidar_bev').mkdir()

    def _init(self):
        self._route_planner = RoutePlanner(self.config.route_planner_min_distance, self.config.route_planner_max_distance)
        self._route_planner.set_route(self._global_plan, True)
        self.initialized = True

    def _get_position(self, tick_data):
        gps = tick_data['gps']
        gps = (gps - self._route_planner.mean) * self._route_planner.scale
        return gps

    def sensors(self):
        sensors = [
            {
                'type': 'sensor.camera.rgb',
                'x': self.config.camera_pos[0], 'y': self.config.camera_pos[1], 'z': self.config.camera_pos[2],
                'roll': self.config.camera_rot_0[0], 'pitch': self.config.camera_rot_0[1], 'yaw': self.config.camera_rot_0[2],
                'width': self.config.camera_width, 'height': self.config.camera_height, 'fov': self.config.camera_fov,
                'id': 'rgb_front'
            },
            {
                'type': 'sensor.other.imu',
                'x': 0.0, 'y': 0.0, 'z': 0.0,
                'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
                'sensor_tick': self.config.carla_frame_rate,
                'id': 'imu'
            },
            {
                'type': 'sensor.other.gnss',
                'x': 0.0, 'y': 0.0, 'z': 0.0,
                'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
                'sensor_tick': 0.01,
                'id': 'gps'
            },
            {
                'type': 'sensor.speedometer',
                'reading_frequency': self.config.carla_fps,
                'id': 'speed'
            },
            {
                'type': 'sensor.lidar.ray_cast',
                'x': self.lidar_pos[0], 'y': self.lidar_pos[1], 'z': self.lidar_pos[2],
                'roll': self.config.lidar_rot[0], 'pitch': self.config.lidar_rot[1], 'yaw': self.config.lidar_rot[2],
                'id': 'lidar'
            }
        ]
        return sensors

    def tick(self, input_data):
        rgb = []
        for pos in ['left', 'front', 'right']:
            rgb_cam = 'rgb_' + pos
            if rgb_cam not in input_data:
                continue
            rgb_pos = cv2.cvtColor(input_data[rgb_cam][1][:, :, :3], cv2.COLOR_BGR2RGB)
            rgb_pos = self.scale_crop(rgb_pos, self.config.scale, self.config.img_width, self.config.img_width,
                                      self.config.img_resolution[0], self.config.img_resolution[0])
            rgb.append(rgb_pos)
        rgb = np.concatenate(rgb, axis=1)

        lidar = input_data['lidar'][1][:, :3]

        gps = input_data['gps'][1][:2]
        speed = input_data['speed'][1]['speed']
        compass = input_data['imu'][1][-1]
        if (math.isnan(compass) == True):  # It can happen that the compass sends nan for a few frames
            compass = 0.0

        result = {
            'rgb': rgb,
            'lidar': lidar,
            'gps': gps,
            'speed': speed,
            'compass': compass,
        }

        pos = self._get_position(result)
        result['gps'] = pos
        next_wp, next_cmd = self._route_planner.run_step(pos)
        result['next_command'] = next_cmd.value

        theta = compass + np.pi / 2
        R = np.array([
            [np.cos(theta), -np.sin(theta)],
            [np.sin(theta), np.cos(theta)]
        ])

        local_command_point = np.array([next_wp[0] - pos[0], next_wp[1] - pos[1]])
        local_command_point = R.T.dot(local_command_point)
        result['target_point'] = tuple(local_command_point)

        return result

    @torch.inference_mode()  # Faster version of torch_no_grad
    def run_step(self, input_data, timestamp):
        self.step += 1

        if not self.initialized:
            self._init()
            control = carla.VehicleControl()
            control.steer = 0.0
            control.throttle = 0.0
            control.brake = 1.0
            tick_data = self.tick(input_data)
            if (self.backbone != 'latentTF'):
                self.lidar_last = deepcopy(tick_data['lidar'])
            return control

        # Need to run this every step for GPS denoising
        tick_data = self.tick(input_data)

        lidar_indices = []
        for i in range(self.config.seq_len):
            lidar_indices.append(i * self.config.data_save_freq)

        # Current position of the car
        ego_x = self.state_log[-1][0] if len(self.state_log) else tick_data['gps'][0]
        ego_y = self.state_log[-1][1] if len(self.state_log) else tick_data['gps'][1]
        ego_theta = tick_data['compass']

        # Prepare the sensor input tensors
        rgb = torch.from_numpy(tick_data['rgb']).permute(2, 0, 1).unsqueeze(0).to('cuda', dtype=torch.float32)

        gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda', dtype=torch.float32)
        velocity = gt_velocity.reshape(1, 1)  # used by transfuser

        # Transform the target point into the current LiDAR coordinate system
        target_point = torch.FloatTensor([tick_data['target_point'][0], tick_data['target_point'][1]]).unsqueeze(0)
        target_point = target_point.to('cuda', dtype=torch.float32)

        # Add the target point to the BEV LiDAR image
        if (self.config.use_target_point_image == True):
            target_point_image = draw_target_point(target_point[0].cpu().numpy())
            target_point_image = torch.from_numpy(target_point_image)[None].to('cuda', dtype=torch.float32)
        else:
            target_point_image = None

        lidar_bev = self.prepare_lidar(tick_data)

        if (self.backbone == 'geometric_fusion'):
            bev_points, cam_points = lidar_bev_cam_correspondences(deepcopy(self.lidar_last), debug=False)
            bev_points = torch.from_numpy(bev_points).unsqueeze(0).cuda()
            cam_points = torch.from_numpy(cam_points).unsqueeze(0).cuda()
        else:
            bev_points = None
            cam_points = None

        # Forward pass of all ensemble members
        pred_wps = []
        bounding_boxes = []
        for i in range(self.model_count):
            pred_wp, _, _, _, _ = self.nets[i].forward_ego(rgb, lidar_bev, target_point, target_point_image, velocity,
                                                         num_points=None, save_path=SAVE_PATH,
                                                         stuck_detector=self.stuck_detector, forced_move=self.forced_move,
                                                         debug=self.config.debug, rgb_back=None,
                                                         bev_points=bev_points, cam_points=cam_points)
            pred_wps.append(pred_wp)
            bounding_boxes.append(self.nets[i].convert_features_to_bb_metric(pred_wp[1]) if isinstance(pred_wp, tuple) else [])

        # Average the waypoints of the ensemble
        pred_wp = torch.stack(pred_wps, dim=0).mean(dim=0)

        # Controller: same PID for all ensemble members, run on the first net
        steer, throttle, brake = self.nets[0].control_pid(pred_wp, gt_velocity)

        if brake < 0.05:
            brake = 0.0
        if throttle > brake:
            brake = 0.0

        # 0.1 is just an arbitrary low number to threshold when the car is stopped
        if (gt_velocity < 0.1):
            self.stuck_detector += 1
        elif (gt_velocity > 0.1 and self.forced_move == 0):
            self.stuck_detector = 0

        if (self.stuck_detector > self.config.stuck_threshold):
            self.forced_move = self.config.creep_duration

        if (self.forced_move > 0):
            throttle = max(self.config.creep_throttle, throttle)
            brake = False
            self.forced_move -= 1
            print('Detected agent being stuck. Move for frame: ', self.forced_move)

        control = carla.VehicleControl()
        control.steer = float(steer)
        control.throttle = float(throttle)
        control.brake = float(brake)

        if (self.backbone != 'latentTF'):
            self.lidar_last = deepcopy(tick_data['lidar'])

        return control

    def prepare_lidar(self, tick_data):
        lidar_transformed = deepcopy(self.lidar_last)
        lidar_transformed = lidar_to_histogram_features(lidar_transformed)
        lidar_transformed = torch.from_numpy(lidar_transformed).unsqueeze(0)
        lidar_transformed = lidar_transformed.cuda().float()
        return lidar_transformed

    def scale_crop(self, image, scale=1, start_x=0, crop_x=None, start_y=0, crop_y=None):
        (width, height) = (image.shape[1] // scale, image.shape[0] // scale)
        if scale != 1:
            image = cv2.resize(image, (width, height))
        if crop_x is None:
            crop_x = width
        if crop_y is None:
            crop_y = height

        image = np.asarray(image)
        cropped_image = image[start_y:start_y+crop_y, start_x:start_x+crop_x]
        return cropped_image

    def destroy(self):
        del self.nets
        torch.cuda.empty_cache()


# Filter Functions
def bicycle_model_forward(x, dt, steer, throttle, brake):
    # Kinematic bicycle model.
    # Numbers are the tuned parameters from World on Rails
    front_wb = -0.090769015
    rear_wb = 1.4178275

    steer_gain = 0.36848336
    brake_accel = -4.952399
    throt_accel = 0.5633837

    locs_0 = x[0]
    locs_1 = x[1]
    yaw = x[2]
    speed = x[3]

    if brake:
        accel = brake_accel
    else:
        accel = throt_accel * throttle

    wheel = steer_gain * steer

    beta = math.atan(rear_wb / (front_wb + rear_wb) * math.tan(wheel))
    next_locs_0 = locs_0.item() + speed * math.cos(yaw + beta) * dt
    next_locs_1 = locs_1.item() + speed * math.sin(yaw + beta) * dt
    next_yaws = yaw + speed / rear_wb * math.sin(beta) * dt
    next_speed = speed + accel * dt
    next_speed = next_speed * (next_speed > 0.0)  # Fast ReLU

    next_state_x = np.array([next_locs_0, next_locs_1, next_yaws, next_speed])

    return next_state_x


def measurement_function_hx(vehicle_state):
    '''
    For now we use the same internal state as the measurement state
    :param vehicle_state: VehicleState vehicle state variable containing
                          an internal state of the vehicle from the filter
    :return: np array: describes the vehicle state as numpy array.
                       0: pos_x, 1: pos_y, 2: rotatoion, 3: speed
    '''
    return vehicle_state


def state_mean(state, Wm):
    '''
    We use the arctan of the average of sin and cos of the angle to calculate
    the average of orientations.
    :param state: array of states to be averaged. First index is the timestep.
    :param Wm:
    :return:
    '''
    x = np.zeros(4)
    sum_sin = np.sum(np.dot(np.sin(state[:, 2]), Wm))
    sum_cos = np.sum(np.dot(np.cos(state[:, 2]), Wm))
    x[0] = np.sum(np.dot(state[:, 0], Wm))
    x[1] = np.sum(np.dot(state[:, 1], Wm))
    x[2] = math.atan2(sum_sin, sum_cos)
    x[3] = np.sum(np.dot(state[:, 3], Wm))

    return x


def measurement_mean(state, Wm):
    '''
    We use the arctan of the average of sin and cos of the angle to
    calculate the average of orientations.
    :param state: array of states to be averaged. First index is the
    timestep.
    '''
    x = np.zeros(4)
    sum_sin = np.sum(np.dot(np.sin(state[:, 2]), Wm))
    sum_cos = np.sum(np.dot(np.cos(state[:, 2]), Wm))
    x[0] = np.sum(np.dot(state[:, 0], Wm))
    x[1] = np.sum(np.dot(state[:, 1], Wm))
    x[2] = math.atan2(sum_sin, sum_cos)
    x[3] = np.sum(np.dot(state[:, 3], Wm))

    return x


def residual_state_x(a, b):
    y = a - b
    y[2] = normalize_angle(y[2])
    return y


def residual_measurement_h(a, b):
    y = a - b
    y[2] = normalize_angle(y[2])
    return y


def normalize_angle(x):
    x = x % (2 * np.pi)  # force in range [0, 2 pi)
    if x > np.pi:  # move to [-pi, pi)
        x -= 2 * np.pi
    return x
