import os
import json
import math
import time
import pathlib
from collections import deque

import cv2
import carla
import numpy as np
from PIL import Image

import torch
import torch.nn.functional as F

from leaderboard.autoagents import autonomous_agent
from model import LidarCenterNet
from config import GlobalConfig
from data import lidar_to_histogram_features, draw_target_point
from nav_planner import RoutePlanner
from filterpy.kalman import MerweScaledSigmaPoints
from filterpy.kalman import UnscentedKalmanFilter as UKF

SAVE_PATH = os.environ.get('SAVE_PATH', None)
TIME_INFERENCE = int(os.environ.get('TIME_INFERENCE', 0))


def get_entry_point():
    return 'HybridAgent'


class HybridAgent(autonomous_agent.AutonomousAgent):
    def setup(self, path_to_conf_file, route_index=None):
        self.track = autonomous_agent.Track.SENSORS
        self.config_path = path_to_conf_file
        self.step = -1
        self.wall_start = time.time()
        self.initialized = False

        args_file = open(os.path.join(path_to_conf_file, 'args.txt'), 'r')
        self.args = json.load(args_file)
        args_file.close()

        # Setting up the UKF that smooths the ego GPS (CARLA GNSS has noise)
        self.points = MerweScaledSigmaPoints(n=4, alpha=.00001, beta=2, kappa=0, subtract=residual_state_x)
        self.ukf = UKF(dim_x=4, dim_z=4, fx=bicycle_model_forward, hx=measurement_function_hx, dt=1 / 20,
                       points=self.points, x_mean_fn=state_mean, z_mean_fn=measurement_mean,
                       residual_x=residual_state_x, residual_z=residual_measurement_h)
        self.ukf.x = np.array([0, 0, 0, 0])
        self.ukf.P = np.diag([0.5, 0.5, 0.000001, 0.000001])
        self.ukf.R = np.diag([0.5, 0.5, 0.000000000000001, 0.000000000000001])
        self.ukf.Q = np.diag([0.0001, 0.0001, 0.001, 0.001])
        self.filter_initialized = False
        self.state_log = deque(maxlen=2)

        # Load model files
        self.config = GlobalConfig(setting='eval')
        self.backbone = self.args['backbone']
        self.config.use_target_point_image = bool(self.args['use_target_point_image'])
        self.config.n_layer = self.args['n_layer']
        self.config.use_point_pillars = bool(self.args['use_point_pillars'])
        self.config.sync_batch_norm = bool(self.args['sync_batch_norm'])
        image_architecture = self.args['image_architecture']
        lidar_architecture = self.args['lidar_architecture']
        use_velocity = bool(self.args['use_velocity'])

        self.nets = []
        self.model_count = 0 # Counts how many models are in our ensemble
        for file in sorted(os.listdir(path_to_conf_file)):
            if file.endswith(".pth"):
                self.model_count += 1
                print(os.path.join(path_to_conf_file, file))
                net = LidarCenterNet(self.config, 'cuda', self.backbone, image_architecture, lidar_architecture, use_velocity)
                if(self.config.sync_batch_norm == True):
                    net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net) # Model was trained with Sync. Batch Norm. Need to convert it otherwise parameters will load incorrectly.
                state_dict = torch.load(os.path.join(path_to_conf_file, file), map_location='cuda:0')
                state_dict = {k[7:]: v for k, v in state_dict.items()} # Removes the .module coming from the Distributed Training. Remove this if you want to evaluate a model trained without DDP.
                net.load_state_dict(state_dict, strict=False)
                net.cuda()
                net.eval()
                self.nets.append(net)

        self.stuck_detector = 0
        self.forced_move = 0

        self.steer_damping = self.config.steer_damping
        self.lidar_buffer = deque(maxlen=self.config.lidar_seq_len * self.config.seq_len)
        self.lidar_pos = [0.0, 0.0, 2.5]
        self.save_path = None
        if SAVE_PATH is not None:
            now = time.strftime('%m_%d_%H_%M_%S')
            string = pathlib.Path(os.environ['ROUTES']).stem + '_' + now
            self.save_path = pathlib.Path(os.environ['SAVE_PATH']) / string
            self.save_path.mkdir(parents=True, exist_ok=False)
            (self.save_path / 'lidar_bev').mkdir(parents=True, exist_ok=False)

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
            {'type': 'sensor.camera.rgb',
             'x': self.config.camera_pos[0], 'y': self.config.camera_pos[1], 'z': self.config.camera_pos[2],
             'roll': self.config.camera_rot_0[0], 'pitch': self.config.camera_rot_0[1], 'yaw': self.config.camera_rot_0[2],
             'width': self.config.camera_width, 'height': self.config.camera_height, 'fov': self.config.camera_fov,
             'id': 'rgb_front'},
            {'type': 'sensor.camera.rgb',
             'x': self.config.camera_pos[0], 'y': self.config.camera_pos[1], 'z': self.config.camera_pos[2],
             'roll': self.config.camera_rot_1[0], 'pitch': self.config.camera_rot_1[1], 'yaw': self.config.camera_rot_1[2],
             'width': self.config.camera_width, 'height': self.config.camera_height, 'fov': self.config.camera_fov,
             'id': 'rgb_left'},
            {'type': 'sensor.camera.rgb',
             'x': self.config.camera_pos[0], 'y': self.config.camera_pos[1], 'z': self.config.camera_pos[2],
             'roll': self.config.camera_rot_2[0], 'pitch': self.config.camera_rot_2[1], 'yaw': self.config.camera_rot_2[2],
             'width': self.config.camera_width, 'height': self.config.camera_height, 'fov': self.config.camera_fov,
             'id': 'rgb_right'},
            {'type': 'sensor.other.imu', 'x': 0.0, 'y': 0.0, 'z': 0.0, 'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
             'sensor_tick': 0.05, 'id': 'imu'},
            {'type': 'sensor.other.gnss', 'x': 0.0, 'y': 0.0, 'z': 0.0, 'roll': 0.0, 'pitch': 0.0, 'yaw': 0.0,
             'sensor_tick': 0.01, 'id': 'gps'},
            {'type': 'sensor.speedometer', 'reading_frequency': 20, 'id': 'speed'},
            {'type': 'sensor.lidar.ray_cast',
             'x': self.lidar_pos[0], 'y': self.lidar_pos[1], 'z': self.lidar_pos[2],
             'roll': 0.0, 'pitch': 0.0, 'yaw': -90.0, 'id': 'lidar'},
        ]
        return sensors

    def tick(self, input_data):
        rgb = []
        for pos in ['left', 'front', 'right']:
            rgb_cam = 'rgb_' + pos
            rgb_pos = cv2.cvtColor(input_data[rgb_cam][1][:, :, :3], cv2.COLOR_BGR2RGB)
            rgb_pos = self.scale_crop(Image.fromarray(rgb_pos), self.config.scale, self.config.img_width,
                                      self.config.img_width, self.config.img_resolution[0], self.config.img_resolution[0])
            rgb.append(rgb_pos)
        rgb = np.concatenate(rgb, axis=1)

        gps = input_data['gps'][1][:2]
        speed = input_data['speed'][1]['speed']
        compass = input_data['imu'][1][-1]
        if math.isnan(compass) == True: # It can happen that the compass sends nan for a few frames
            compass = 0.0

        result = {
            'rgb': rgb,
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

        lidar = input_data['lidar'][1][:, :3]
        result['lidar'] = lidar
        return result

    @torch.inference_mode() # Faster version of torch_no_grad
    def run_step(self, input_data, timestamp):
        self.step += 1

        if not self.initialized:
            self._init()
            control = carla.VehicleControl(steer=0.0, throttle=0.0, brake=1.0)
            self.control = control
            tick_data = self.tick(input_data)
            self.lidar_buffer.append(tick_data['lidar'])
            return control

        # Need to run this every step for GPS filtering
        tick_data = self.tick(input_data)

        # repeat actions twice to ensure LiDAR data availability
        if self.step % self.config.action_repeat == 1:
            self.update_gps_buffer(self.control, tick_data['compass'], tick_data['speed'])
            return self.control

        # prepare image input
        image = self.prepare_image(tick_data)

        # prepare velocity input
        gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda', dtype=torch.float32) # used by controller
        velocity = gt_velocity.reshape(1, 1) # used by transfuser

        # prepare goal location input
        target_point_image, target_point = self.prepare_goal_location(tick_data)

        # prepare LiDAR input
        lidar_bev = self.prepare_lidar(tick_data)

        if TIME_INFERENCE:
            torch.cuda.synchronize()
            t0 = time.perf_counter()

        # prediction with ensemble
        pred_wps = []
        for i in range(self.model_count):
            pred_wp, _ = self.nets[i].forward_ego(image, lidar_bev, target_point, target_point_image, velocity,
                                                  num_points=None, save_path=self.save_path, stuck_detector=self.stuck_detector,
                                                  forced_move=self.forced_move)
            pred_wps.append(pred_wp)
        pred_wp = torch.stack(pred_wps, dim=0).mean(dim=0)

        if TIME_INFERENCE:
            torch.cuda.synchronize()  # wait for the last ensemble member
            print(f'ensemble forward: {(time.perf_counter() - t0) * 1000.0:.1f} ms')

        steer, throttle, brake = self.nets[0].control_pid(pred_wp, gt_velocity)

        if brake < 0.05: brake = 0.0
        if throttle > brake: brake = 0.0

        if brake:
            steer *= self.steer_damping

        control = carla.VehicleControl()
        control.steer = float(steer)
        control.throttle = float(throttle)
        control.brake = float(brake)

        # CARLA will not let the car drive in the initial frames; detect being stuck and force a move
        if (tick_data['speed'] < 0.1):
            self.stuck_detector += 1
        elif (tick_data['speed'] > 0.1 and self.forced_move == 0):
            self.stuck_detector = 0
        if (self.stuck_detector > self.config.stuck_threshold):
            self.forced_move = self.config.creep_duration
        if (self.forced_move > 0):
            control.throttle = max(self.config.creep_throttle, control.throttle)
            control.brake = float(False)
            self.forced_move -= 1

        self.update_gps_buffer(control, tick_data['compass'], tick_data['speed'])
        self.control = control
        return control

    def update_gps_buffer(self, control, theta, speed):
        yaw = np.array([(theta - np.pi / 2.0)])
        speed = np.array([speed])
        action = np.array(np.stack([control.steer, control.throttle, control.brake], axis=-1))
        self.state_log.append((yaw, speed, action))

    def prepare_image(self, tick_data):
        image = Image.fromarray(tick_data['rgb'])
        image_degrees = []
        image = np.array(image)
        image_degrees.append(torch.from_numpy(image).permute(2, 0, 1))
        image = torch.stack(image_degrees, dim=0)
        image = image.to('cuda:0', dtype=torch.float32)
        return image

    def prepare_lidar(self, tick_data):
        lidar_transformed = tick_data['lidar']
        lidar_transformed[:, 1] *= -1  # invert
        lidar_bev = torch.from_numpy(lidar_to_histogram_features(lidar_transformed, use_ground_plane=False)).unsqueeze(0)
        lidar_bev = lidar_bev.cuda().float()
        return lidar_bev

    def prepare_goal_location(self, tick_data):
        target_point = torch.FloatTensor([tick_data['target_point'][0], tick_data['target_point'][1]]).unsqueeze(0)
        target_point = target_point.to('cuda', dtype=torch.float32)
        target_point_image = draw_target_point(tick_data['target_point'])
        target_point_image = torch.from_numpy(target_point_image)[None].to('cuda', dtype=torch.float32)
        return target_point_image, target_point

    def scale_crop(self, image, scale=1, start_x=0, crop_x=None, start_y=0, crop_y=None):
        (width, height) = (image.width // scale, image.height // scale)
        if scale != 1:
            image = image.resize((width, height))
        if crop_x is None:
            crop_x = width
        if crop_y is None:
            crop_y = height
        image = np.asarray(image)
        cropped_image = image[start_y:start_y + crop_y, start_x:start_x + crop_x]
        return cropped_image

    def destroy(self):
        del self.nets
        torch.cuda.empty_cache()


# Filter Functions (bicycle model for the UKF that smooths GNSS)
def bicycle_model_forward(x, dt):
    # Kinematic bicycle model. Numbers are the tuned parameters from World on Rails
    front_wb = -0.090769015
    rear_wb = 1.4178275

    steer_gain = 0.36848336
    brake_accel = -4.952399
    throt_accel = 0.5633837

    locs_0 = x[0]
    locs_1 = x[1]
    yaw = x[2]
    speed = x[3]

    if (brake_accel != 0.0 and speed > 1e-3):
        accel = brake_accel
    else:
        accel = throt_accel

    wheel = steer_gain * 0.0
    beta = math.atan(rear_wb / (front_wb + rear_wb) * math.tan(wheel))
    next_locs_0 = locs_0.item() + speed * math.cos(yaw + beta) * dt
    next_locs_1 = locs_1.item() + speed * math.sin(yaw + beta) * dt
    next_yaws = yaw + speed / rear_wb * math.sin(beta) * dt
    next_speed = speed + accel * dt
    next_speed = next_speed * (next_speed > 0.0)  # Fast ReLU

    next_state_x = np.array([next_locs_0, next_locs_1, next_yaws, next_speed])
    return next_state_x


def measurement_function_hx(vehicle_state):
    return vehicle_state


def state_mean(state, Wm):
    x = np.zeros(4)
    sum_sin = np.sum(np.dot(np.sin(state[:, 2]), Wm))
    sum_cos = np.sum(np.dot(np.cos(state[:, 2]), Wm))
    x[0] = np.sum(np.dot(state[:, 0], Wm))
    x[1] = np.sum(np.dot(state[:, 1], Wm))
    x[2] = math.atan2(sum_sin, sum_cos)
    x[3] = np.sum(np.dot(state[:, 3], Wm))
    return x


def measurement_mean(state, Wm):
    return state_mean(state, Wm)


def residual_state_x(a, b):
    y = a - b
    y[2] = normalize_angle(y[2])
    return y


def residual_measurement_h(a, b):
    return residual_state_x(a, b)


def normalize_angle(x):
    x = x % (2 * np.pi)  # force in range [0, 2 pi)
    if x > np.pi:  # move to [-pi, pi)
        x -= 2 * np.pi
    return x


def interpolate_features(features, size):
    # kept for the visualisation tools that resize BEV predictions
    return F.interpolate(features, size=size, mode='bilinear', align_corners=False)
