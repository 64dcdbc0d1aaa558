import os
import json
import logging
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf
from rdp import rdp

from carla_agent_files.data_agent_boxes import DataAgent
from carla_agent_files.nav_planner import extrapolate_waypoint_route
from carla_agent_files.nav_planner import RoutePlanner_new as RoutePlanner
from carla_agent_files.scenario_logger import ScenarioLogger
from carla_agent_files.agent_utils.coordinate_utils import normalize_angle
from training.PlanT.dataset import generate_batch, split_large_BB
from training.PlanT.lit_module import LitHFLM
from leaderboard.autoagents import autonomous_agent

import carla

logger = logging.getLogger(__name__)


def get_entry_point():
    return 'PlanTAgent'


SAVE_GIF = os.getenv("SAVE_GIF", 'False').lower() in ('true', '1', 't')


class PlanTAgent(DataAgent):
    def setup(self, path_to_conf_file, route_index=None, cfg=None, exec_or_inter=None):
        self.cfg = cfg

        # first args than super setup is important!
        args_file = open(os.path.join(path_to_conf_file, 'args.txt'), 'r')
        self.args = json.load(args_file)
        args_file.close()
        self.cfg_agent = OmegaConf.create(self.args)

        super().setup(path_to_conf_file, route_index, cfg, exec_or_inter)

        print(f'Saving gif: {SAVE_GIF}')

        # Filtering
        self.points = None
        self.ukf = None

        self.steer_damping = self.config.steer_damping
        self.perception_agent = None

        LOAD_CKPT_PATH = cfg.model_ckpt_load_path

        print(f'Loading model from {LOAD_CKPT_PATH}')

        if Path(LOAD_CKPT_PATH).suffix == '.ckpt':
            self.net = LitHFLM.load_from_checkpoint(LOAD_CKPT_PATH)
        else:
            raise Exception(f'Unknown model type: {Path(LOAD_CKPT_PATH).suffix}')
        self.net.eval()

        self.device = torch.device(cfg.get('device', 'cuda:0'))
        self.net = self.net.to(self.device)
        self.use_amp = cfg.get('fp16_inference', False)

        self.scenario_logger = False

        if self.log_path is not None:
            self.log_path = Path(self.log_path) / route_index
            Path(self.log_path).mkdir(parents=True, exist_ok=True)

            self.scenario_logger = ScenarioLogger(
                save_path=self.log_path,
                route_index=self.route_index,
                logging_freq=self.save_freq,
                log_only=False,
                route_only=False,  # with vehicles and lights
                roi=self.detection_radius + 10,
            )

    def _init(self, hd_map):
        super()._init(hd_map)
        self._route_planner = RoutePlanner(7.5, 50.0)
        self._route_planner.set_route(self._global_plan, True)

        self.initialized = True
        self.control = carla.VehicleControl()
        self.control.steer = 0.0
        self.control.throttle = 0.0
        self.control.brake = 1.0

    def sensors(self):
        result = super().sensors()
        return result

    def tick(self, input_data):
        result = super().tick(input_data)

        pos = self._route_planner.convert_gps_to_carla(input_data['gps'][1][:2])
        speed = input_data['speed'][1]['speed']
        compass = input_data['imu'][1][-1]

        if np.isnan(compass):
            compass = 0.0
        compass = normalize_angle(compass)

        waypoint_route = self._route_planner.run_step(pos)

        if len(waypoint_route) > 2:
            target_point, _ = waypoint_route[1]
            next_target_point, _ = waypoint_route[2]
        elif len(waypoint_route) > 1:
            target_point, _ = waypoint_route[1]
            next_target_point, _ = waypoint_route[1]
        else:
            target_point, _ = waypoint_route[0]
            next_target_point, _ = waypoint_route[0]

        ego_target_point = inverse_conversion_2d(target_point, result['gps'], result['compass'])
        result['target_point'] = tuple(ego_target_point)

        return result

    @torch.no_grad()
    def run_step(self, input_data, timestamp, sensors=None, keep_ids=None):

        self.keep_ids = keep_ids

        self.step += 1
        if not self.initialized:
            if ('hd_map' in input_data.keys()):
                self._init(input_data['hd_map'])
            else:
                self.control = carla.VehicleControl()
                self.control.steer = 0.0
                self.control.throttle = 0.0
                self.control.brake = 1.0
                return self.control

        # needed for traffic_light_hazard
        _ = super()._get_brake(stop_sign_hazard=0, vehicle_hazard=0, walker_hazard=0)
        tick_data = self.tick(input_data)
        label_raw = super().get_bev_boxes(input_data=input_data, pos=tick_data['gps'])

        self.control = self._get_control(label_raw, tick_data)

        inital_frames_delay = 40
        if self.step < inital_frames_delay:
            self.control = carla.VehicleControl(0.0, 0.0, 1.0)

        return self.control

    def _get_control(self, label_raw, input_data):

        gt_velocity = torch.FloatTensor([input_data['speed']]).unsqueeze(0)
        input_batch = self.get_input_batch(label_raw, input_data)
        x, y, _, tp, light = input_batch

        with torch.cuda.amp.autocast(enabled=self.use_amp):
            _, _, pred_wp, attn_map = self.net(x, y, target_point=tp, light_hazard=light)

        steer, throttle, brake = self.net.model.control_pid(pred_wp[:1], gt_velocity)

        if brake < 0.05:
            brake = 0.0
        if throttle > brake:
            brake = 0.0

        if brake:
            steer *= self.steer_damping

        control = carla.VehicleControl()
        control.steer = float(steer)
        control.throttle = float(throttle)
        control.brake = float(brake)

        viz_trigger = ((self.step % 20 == 0) and self.cfg.viz)
        if viz_trigger and self.step > 2:
            create_BEV(label_raw, light, tp, pred_wp)

        return control

    def get_input_batch(self, label_raw, input_data):
        sample = {'input': [], 'output': [], 'brake': [], 'waypoints': [], 'target_point': [], 'light': []}

        if self.cfg.model.training.input_ego:
            data = label_raw
        else:
            data = label_raw[1:]  # remove first element (ego vehicle)

        data_car = [[
            1.,  # type indicator for cars
            float(x['position'][0]) - float(label_raw[0]['position'][0]),
            float(x['position'][1]) - float(label_raw[0]['position'][1]),
            float(x['yaw'] * 180 / 3.14159265359),  # in degrees
            float(x['speed'] * 3.6),  # in km/h
            float(x['extent'][2]),
            float(x['extent'][1]),
        ] for x in data if x['class'] == 'Car']

        # if we use the far_node as target waypoint we need the route as input
        data_route = [
            [
                2.,  # type indicator for route
                float(x['position'][0]) - float(label_raw[0]['position'][0]),
                float(x['position'][1]) - float(label_raw[0]['position'][1]),
                float(x['yaw'] * 180 / 3.14159265359),  # in degrees
                float(x['id']),
                float(x['extent'][2]),
                float(x['extent'][1]),
            ]
            for j, x in enumerate(data)
            if x['class'] == 'Route'
            and float(x['id']) < self.cfg.model.training.max_NextRouteBBs]

        # we split route segment slonger than 10m into multiple segments
        # improves generalization
        data_route_split = []
        for route in data_route:
            if route[6] > 10:
                routes = split_large_BB(route, len(data_route_split))
                data_route_split.extend(routes)
            else:
                data_route_split.append(route)

        data_route = data_route_split[:self.cfg.model.training.max_NextRouteBBs]

        assert len(data_route) <= self.cfg.model.training.max_NextRouteBBs, 'Too many routes'

        features = data_car + data_route

        sample['input'] = features

        # dummy data
        sample['output'] = features
        sample['light'] = self.traffic_light_hazard

        local_command_point = np.array([input_data['target_point'][0], input_data['target_point'][1]])
        sample['target_point'] = local_command_point

        batch = [sample]

        input_batch = generate_batch(batch)

        self.data = data
        self.data_car = data_car
        self.data_route = data_route

        input_batch = tuple(t.to(self.device) if isinstance(t, torch.Tensor) else [e.to(self.device) for e in t]
                            for t in input_batch)
        return input_batch

    def destroy(self):
        super().destroy()
        if self.scenario_logger:
            self.scenario_logger.dump_to_json()
            del self.scenario_logger

        del self.net
        torch.cuda.empty_cache()


def inverse_conversion_2d(point, translation, yaw):
    """
    Performs a forward coordinate conversion on a 2D point
    :param point: Point to be converted
    :param translation: 2D translation vector of the new coordinate system
    :param yaw: yaw in radian of the new coordinate system
    :return: Converted point
    """
    rotation_matrix = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])

    converted_point = rotation_matrix.T @ (point - translation)
    return converted_point


def create_BEV(labels_org, gt_traffic_light_hazard, target_point, pred_wp, pix_per_m=5):
    """Debug visualisation of the object-level scene (matplotlib, CPU only)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    pred_wp = np.array(pred_wp.detach().cpu().numpy())[0]
    size_ego = 20
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(pred_wp[:, 1] * pix_per_m, pred_wp[:, 0] * pix_per_m, s=size_ego, c='b')
    tp = target_point.detach().cpu().numpy()[0]
    ax.scatter(tp[1] * pix_per_m, tp[0] * pix_per_m, s=size_ego, c='r', marker='x')
    ax.set_title('light hazard' if bool(gt_traffic_light_hazard) else '')
    fig.savefig('bev_debug.png')
    plt.close(fig)
