import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from imuposer.config import Config
from imuposer.smpl.parametricModel import ParametricModel
from imuposer.math.angular import r6d_to_rotation_matrix


class RNN(nn.Module):
    r"""
    An RNN net including a linear input layer, an RNN, and a linear output layer.
    """
    def __init__(self, n_input, n_output, n_hidden, n_rnn_layer=2, bidirectional=True, dropout=0.2):
        super(RNN, self).__init__()
        self.rnn = nn.LSTM(n_hidden, n_hidden, n_rnn_layer, bidirectional=bidirectional, batch_first=True)
        self.linear1 = nn.Linear(n_input, n_hidden)
        self.linear2 = nn.Linear(n_hidden * (2 if bidirectional else 1), n_output)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, x_lens, h=None):
        # pack_padded_sequence wants the lengths on the CPU
        x = self.dropout(F.relu(self.linear1(x)))
        x = pack_padded_sequence(x, x_lens.cpu(), batch_first=True, enforce_sorted=False)
        x, h = self.rnn(x, h)
        x, _ = pad_packed_sequence(x, batch_first=True)
        return self.linear2(x), h


class IMUPoserModel(pl.LightningModule):
    r"""
    Inputs - N IMUs, Outputs - SMPL Pose params (in Rot Matrix)
    """
    def __init__(self, config: Config):
        super().__init__()
        # load a config
        self.config = config
        self.loss_type = config.loss_type
        self.batch_size = config.batch_size

        n_input = 12 * 5
        if config.r6d:
            self.n_pose_output = 24 * 6
        else:
            self.n_pose_output = 24 * 9
        n_output = self.n_pose_output

        self.dip_model = RNN(n_input=n_input, n_output=n_output, n_hidden=512, bidirectional=True)

        if self.loss_type == "mse":
            self.loss = nn.MSELoss()
        else:
            self.loss = nn.L1Loss()

        # SMPL forward kinematics for the joint position loss (lives on config.device, i.e. the training GPU)
        self.bodymodel = ParametricModel(config.og_smpl_model_path, device=config.device)
        self.lr = config.lr
        self.live_state = None

        # optional VPoser prior on the predicted body pose (config.use_vposer_loss)
        self.vposer = None
        if config.use_vposer_loss:
            from human_body_prior.tools.model_loader import load_model
            from human_body_prior.models.vposer_model import VPoser
            vp, _ = load_model(str(config.vposer_ckpt_path), model_code=VPoser,
                               remove_words_in_model_weights='vp_model.', disable_grad=True)
            self.vposer = vp.to(config.device).eval()
        self.save_hyperparameters(ignore=["config"])

    def forward(self, imu_inputs, imu_lens):
        pred_pose, _ = self.dip_model(imu_inputs, imu_lens)
        return pred_pose

    def _joint_loss(self, pred_pose, target_pose):
        pred_joint = self.bodymodel.forward_kinematics(pose=r6d_to_rotation_matrix(pred_pose).view(-1, 216))[1]
        target_joint = self.bodymodel.forward_kinematics(pose=r6d_to_rotation_matrix(target_pose).view(-1, 216))[1]
        return self.loss(pred_joint, target_joint)

    def _vposer_loss(self, pred_pose):
        r"""
        Negative log-likelihood-ish prior: distance of the body pose to its VPoser reconstruction.
        """
        from imuposer.math.angular import rotation_matrix_to_axis_angle
        R = r6d_to_rotation_matrix(pred_pose.reshape(-1, 6)).view(-1, 24, 3, 3)
        body_aa = rotation_matrix_to_axis_angle(R[:, 1:22].reshape(-1, 3, 3)).view(-1, 63)
        rec = self.vposer(body_aa)["pose_body"].contiguous().view(-1, 63)
        return F.mse_loss(rec, body_aa)

    def training_step(self, batch, batch_idx):
        imu_inputs, target_pose, input_lengths, _ = batch
        pred_pose = self(imu_inputs, input_lengths)
        loss = self.loss(pred_pose, target_pose)
        if self.config.use_joint_loss:
            loss = loss + self._joint_loss(pred_pose, target_pose)
        if self.vposer is not None:
            loss = loss + 0.01 * self._vposer_loss(pred_pose)
        self.log("training_step_loss", loss.item(), batch_size=self.batch_size)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        imu_inputs, target_pose, input_lengths, _ = batch
        pred_pose = self(imu_inputs, input_lengths)
        loss = self.loss(pred_pose, target_pose)
        if self.config.use_joint_loss:
            loss = loss + self._joint_loss(pred_pose, target_pose)
        self.log("validation_step_loss", loss.item(), batch_size=self.batch_size)
        return {"loss": loss}

    def predict_step(self, batch, batch_idx):
        imu_inputs, target_pose, input_lengths, _ = batch
        pred_pose = self(imu_inputs, input_lengths)
        return pred_pose, target_pose

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "validation_step_loss"}}

    # ------------------------------------------------------------------ live demo (phone + watch + earbuds)
    def reset_live(self):
        self.live_state = None

    @torch.no_grad()
    def predict_live(self, imu_frame):
        r"""
        One 25 Hz frame from the iOS app (60 values, missing devices zero-filled) -> [24, 6] pose in 6D.
        The LSTM runs in its stateful unidirectional mode here, so only the forward direction is used.
        """
        x = imu_frame.view(1, 1, -1).float().to("cuda")
        x = self.dip_model.dropout(F.relu(self.dip_model.linear1(x)))
        y, self.live_state = self.dip_model.rnn(x, self.live_state)
        hidden = self.dip_model.rnn.hidden_size
        y = torch.cat([y[..., :hidden], torch.zeros_like(y[..., hidden:])], dim=-1)
        return self.dip_model.linear2(y).view(24, 6).cpu()
