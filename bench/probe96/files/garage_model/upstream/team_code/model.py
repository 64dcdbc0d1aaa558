"""
The main model structure (TransFuser++): image + LiDAR backbone, transformer decoder that
joins the fused features with learned queries, and the planning / perception heads.
"""
import math

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

from transfuser import TransfuserBackbone
from aim import AIMBackbone
from bev_encoder import BevEncoder
from center_net import LidarCenterNetHead
import transfuser_utils as t_u


class PositionEmbeddingSine(nn.Module):
    """
    Taken from InterFuser / DETR: sine positional encoding for a 2-D feature map.
    """

    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is not None and normalize is False:
            raise ValueError('normalize should be True if scale is passed')
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, tensor):
        x = tensor
        bs, _, h, w = x.shape
        not_mask = torch.ones((bs, h, w), device=x.device)
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale

        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)

        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


class GRUWaypointsPredictorTransFuser(nn.Module):
    """
    The waypoint GRU used in TransFuser. It enters the target point as input.
    The hidden state is initialized with the scene features.
    The input is autoregressive and starts either at 0 or learned.
    """

    def __init__(self, config, pred_len, hidden_size, target_point_size):
        super().__init__()
        self.wp_decoder = nn.GRUCell(input_size=2 + target_point_size, hidden_size=hidden_size)
        self.output = nn.Linear(hidden_size, 2)
        self.config = config
        self.prediction_len = pred_len

    def forward(self, z, target_point):
        output_wp = []
        # initial input variable to GRU
        x = torch.zeros(size=(z.shape[0], 2), dtype=z.dtype).type_as(z)
        target_point = target_point.clone()
        target_point[:, 1] *= -1

        # autoregressive generation of output waypoints
        for _ in range(self.prediction_len):
            if self.config.use_tp:
                x_in = torch.cat([x, target_point], dim=1)
            else:
                x_in = x
            z = self.wp_decoder(x_in, z)
            dx = self.output(z)
            x = dx + x
            output_wp.append(x)

        pred_wp = torch.stack(output_wp, dim=1)
        pred_wp[:, :, 0] = pred_wp[:, :, 0] - self.config.lidar_pos[0]
        return pred_wp


class GRUWaypointsPredictorInterFuser(nn.Module):
    """A version of the waypoint GRU used in InterFuser (one GRU over the query sequence)."""

    def __init__(self, input_dim, waypoints, hidden_size, target_point_size):
        super().__init__()
        self.gru = nn.GRU(input_size=input_dim, hidden_size=hidden_size, batch_first=True)
        if target_point_size > 0:
            self.encoder = nn.Linear(target_point_size, 16)
        self.target_point_size = target_point_size
        self.hidden_size = hidden_size
        self.decoder = nn.Linear(hidden_size, 2)
        self.waypoints = waypoints

    def forward(self, x, target_point):
        bs = x.shape[0]
        if self.target_point_size > 0:
            z = self.encoder(target_point).unsqueeze(0)
        else:
            z = torch.zeros((1, bs, 16), device=x.device)
        output, _ = self.gru(x, z)
        output = output.reshape(bs * self.waypoints, -1)
        output = self.decoder(output).reshape(bs, self.waypoints, 2)
        output = torch.cumsum(output, 1)
        return output


class LidarCenterNet(nn.Module):
    """
    The main model class. It can run all model configurations of the garage.
    """

    def __init__(self, config):
        super().__init__()
        self.config = config

        self.speed_histogram = []
        self.make_histogram = int(self.config.make_histogram)

        if self.config.backbone == 'transFuser':
            self.backbone = TransfuserBackbone(config)
        elif self.config.backbone == 'aim':
            self.backbone = AIMBackbone(config)
        elif self.config.backbone == 'bev_encoder':
            self.backbone = BevEncoder(config)
        else:
            raise ValueError('The chosen vision backbone does not exist. The options are: transFuser, aim, bev_encoder')

        if self.config.use_tp:
            target_point_size = 2
        else:
            target_point_size = 0

        self.extra_sensors = self.config.use_velocity or self.config.use_discrete_command
        extra_sensor_channels = 0
        if self.extra_sensors:
            extra_sensor_channels = self.config.extra_sensor_channels
            if self.config.transformer_decoder_join:
                extra_sensor_channels = self.config.gru_input_size

        # prediction heads
        if self.config.detect_boxes:
            self.head = LidarCenterNetHead(config)

        if self.config.use_semantic:
            self.semantic_decoder = nn.Sequential(
                nn.Conv2d(self.config.perspective_downsample_factor and self.backbone.num_image_features,
                          self.config.deconv_channel_num_1, (3, 3), padding=1),
                nn.ReLU(inplace=True),
                nn.Upsample(size=(self.config.img_height, self.config.img_width), mode='bilinear', align_corners=False),
                nn.Conv2d(self.config.deconv_channel_num_1, self.config.num_semantic_classes, (1, 1)))

        if self.config.use_controller_input_prediction:
            self.target_speed_network = nn.Sequential(
                nn.Linear(self.config.gru_input_size, self.config.gru_input_size), nn.ReLU(inplace=True),
                nn.Linear(self.config.gru_input_size, len(config.target_speeds)))

        if self.config.use_controller_input_prediction or self.config.use_wp_gru:
            if self.config.transformer_decoder_join:
                ts_input_channels = self.config.gru_input_size
            else:
                ts_input_channels = self.backbone.num_features + extra_sensor_channels

            if self.config.transformer_decoder_join:
                num_queries = 0
                if self.config.use_controller_input_prediction:
                    num_queries += 1  # target speed query
                    num_queries += self.config.predict_checkpoint_len
                if self.config.use_wp_gru:
                    num_queries += self.config.pred_len

                self.change_channel = nn.Conv2d(self.backbone.num_features, self.config.gru_input_size, kernel_size=1)
                self.encoder_pos_encoding = PositionEmbeddingSine(self.config.gru_input_size // 2, normalize=True)
                self.query = nn.Parameter(torch.zeros(1, num_queries, self.config.gru_input_size))
                self.extra_sensor_pos_embed = nn.Parameter(torch.zeros(1, self.config.gru_input_size))

                decoder_norm = nn.LayerNorm(self.config.gru_input_size)
                decoder_layer = nn.TransformerDecoderLayer(self.config.gru_input_size,
                                                           self.config.num_decoder_heads,
                                                           activation=nn.GELU(),
                                                           batch_first=True)
                self.join = torch.nn.TransformerDecoder(decoder_layer,
                                                        num_layers=self.config.num_transformer_decoder_layers,
                                                        norm=decoder_norm)
            else:
                self.join = nn.Sequential(nn.Linear(ts_input_channels, 256), nn.ReLU(inplace=True),
                                          nn.Linear(256, self.config.gru_input_size))

        if self.config.use_wp_gru:
            if self.config.transformer_decoder_join:
                self.wp_decoder = GRUWaypointsPredictorInterFuser(input_dim=self.config.gru_input_size,
                                                                  hidden_size=self.config.gru_hidden_size,
                                                                  target_point_size=target_point_size,
                                                                  waypoints=self.config.pred_len)
            else:
                self.wp_decoder = GRUWaypointsPredictorTransFuser(self.config, pred_len=self.config.pred_len,
                                                                  hidden_size=self.config.gru_hidden_size,
                                                                  target_point_size=target_point_size)

        if self.config.use_controller_input_prediction:
            self.checkpoint_decoder = GRUWaypointsPredictorInterFuser(input_dim=self.config.gru_input_size,
                                                                      hidden_size=self.config.gru_hidden_size,
                                                                      target_point_size=target_point_size,
                                                                      waypoints=self.config.predict_checkpoint_len)

        if self.extra_sensors:
            extra_size = 0
            if self.config.use_velocity:
                # Lazy version of normalizing the input over the dataset statistics.
                self.velocity_normalization = nn.BatchNorm1d(1, affine=False)
                extra_size += 1
            if self.config.use_discrete_command:
                extra_size += 6
            self.extra_sensor_encoder = nn.Sequential(nn.Linear(extra_size, 128), nn.ReLU(inplace=True),
                                                      nn.Linear(128, extra_sensor_channels), nn.ReLU(inplace=True))

        # Target speed bins used by the uncertainty-weighted controller; kept on the GPU to avoid host copies
        self.target_speed_bins = torch.tensor(self.config.target_speeds, dtype=torch.float32).cuda()

        self.turn_controller = t_u.PIDController(k_p=config.turn_kp, k_i=config.turn_ki, k_d=config.turn_kd,
                                                 n=config.turn_n)
        self.speed_controller = t_u.PIDController(k_p=config.speed_kp, k_i=config.speed_ki, k_d=config.speed_kd,
                                                  n=config.speed_n)

    def forward(self, rgb, lidar_bev, target_point, ego_vel, command):
        bs = rgb.shape[0]

        if self.config.backbone == 'transFuser':
            bev_feature_grid, fused_features, image_feature_grid = self.backbone(rgb, lidar_bev)
        else:
            bev_feature_grid, fused_features, image_feature_grid = self.backbone(rgb)

        pred_wp = None
        pred_target_speed = None
        pred_checkpoint = None

        if self.config.use_controller_input_prediction or self.config.use_wp_gru:
            if self.config.transformer_decoder_join:
                fused_features = self.change_channel(fused_features)
                fused_features = fused_features + self.encoder_pos_encoding(fused_features)
                fused_features = torch.flatten(fused_features, start_dim=2)

                # Concatenate extra sensor information
                if self.extra_sensors:
                    extra_sensors = []
                    if self.config.use_velocity:
                        extra_sensors.append(self.velocity_normalization(ego_vel))
                    if self.config.use_discrete_command:
                        extra_sensors.append(command)
                    extra_sensors = torch.cat(extra_sensors, axis=1)
                    extra_sensors = self.extra_sensor_encoder(extra_sensors)
                    extra_sensors = extra_sensors + self.extra_sensor_pos_embed.repeat(bs, 1)
                    fused_features = torch.cat((fused_features, extra_sensors.unsqueeze(2)), axis=2)

                fused_features = torch.permute(fused_features, (0, 2, 1))
                joined_wp_features = self.join(self.query.repeat(bs, 1, 1), fused_features)

                num_pred_checkpoint = self.config.predict_checkpoint_len
                if self.config.use_controller_input_prediction:
                    pred_target_speed = self.target_speed_network(joined_wp_features[:, 0])
                    pred_checkpoint = self.checkpoint_decoder(joined_wp_features[:, 1:num_pred_checkpoint + 1],
                                                              target_point)
                if self.config.use_wp_gru:
                    pred_wp = self.wp_decoder(joined_wp_features[:, -self.config.pred_len:], target_point)
            else:
                fused_features = torch.flatten(fused_features, 1)
                joined = self.join(fused_features)
                if self.config.use_wp_gru:
                    pred_wp = self.wp_decoder(joined, target_point)
                if self.config.use_controller_input_prediction:
                    pred_target_speed = self.target_speed_network(joined)

        pred_bounding_box = None
        if self.config.detect_boxes:
            pred_bounding_box = self.head(bev_feature_grid)

        return pred_wp, pred_target_speed, pred_checkpoint, image_feature_grid, bev_feature_grid, pred_bounding_box

    def expected_target_speed(self, pred_target_speed_logits):
        probs = F.softmax(pred_target_speed_logits, dim=1)
        return (probs * self.target_speed_bins[None]).sum(dim=1)

    def control_pid_direct(self, pred_checkpoint, pred_target_speed, speed):
        """
        PID controller used for direct predictions: steer towards the predicted route checkpoint,
        throttle towards the (uncertainty-weighted) target speed.
        """
        checkpoint = pred_checkpoint[0].data.cpu().numpy()
        aim = checkpoint[min(1, len(checkpoint) - 1)]
        pred_angle = -math.degrees(math.atan2(-aim[1], aim[0])) / 90.0
        speed = speed.data.cpu().numpy()
        # Target speed of 0 means brake
        brake = pred_target_speed < 0.01
        delta = np.clip(pred_target_speed - speed, 0.0, self.config.clip_delta)
        throttle = self.speed_controller.step(delta)
        throttle = np.clip(throttle, 0.0, self.config.clip_throttle)
        if brake:
            throttle = 0.0
        steer = self.turn_controller.step(pred_angle)
        steer = np.clip(steer, -1.0, 1.0)
        return float(steer), float(throttle), bool(brake)
