'''
VOCA model (PyTorch port).

Speech encoder: DeepSpeech character logits over a 16-frame window -> 4 temporal convolutions -> 2 FC layers.
Subject conditioning: one-hot subject label concatenated to the DeepSpeech features and to the encoder output.
Expression decoder: linear layer to a 50-d expression space, followed by a linear layer initialised with the
PCA basis of the training vertex offsets; output is added to the subject template.
'''

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpeechEncoder(nn.Module):
    def __init__(self, config, num_training_subjects):
        super(SpeechEncoder, self).__init__()
        self._speech_encoding_dim = config['expression_dim']
        self._condition_speech_features = config['condition_speech_features']
        self._speech_encoder_size_factor = config['speech_encoder_size_factor']
        self._num_training_subjects = num_training_subjects
        num_audio_features = config['num_audio_features']
        factor = self._speech_encoder_size_factor

        in_ch = num_audio_features + (num_training_subjects if self._condition_speech_features else 0)
        self.bn = nn.BatchNorm2d(1, eps=1e-5, momentum=0.1)
        self.conv1 = nn.Conv2d(in_ch, int(32 * factor), kernel_size=(3, 1), stride=(2, 1), padding=(1, 0))
        self.conv2 = nn.Conv2d(int(32 * factor), int(32 * factor), kernel_size=(3, 1), stride=(2, 1), padding=(1, 0))
        self.conv3 = nn.Conv2d(int(32 * factor), int(64 * factor), kernel_size=(3, 1), stride=(2, 1), padding=(1, 0))
        self.conv4 = nn.Conv2d(int(64 * factor), int(64 * factor), kernel_size=(3, 1), stride=(2, 1), padding=(1, 0))
        self.fc1 = nn.Linear(int(64 * factor) + num_training_subjects, 128)
        self.fc2 = nn.Linear(128, self._speech_encoding_dim)

    def forward(self, speech_features, condition, reuse=False):
        # speech_features: (B, window, num_features); condition: (B,) subject index
        B, W, C = speech_features.shape
        x = self.bn(speech_features.unsqueeze(1)).squeeze(1)  # (B, W, C)
        one_hot = F.one_hot(condition, num_classes=self._num_training_subjects).float()
        if self._condition_speech_features:
            speech_condition = one_hot.unsqueeze(1).expand(B, W, self._num_training_subjects)
            x = torch.cat([x, speech_condition], dim=-1)
        x = x.permute(0, 2, 1).unsqueeze(-1)  # (B, C, W, 1)
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = F.relu(self.conv4(x))
        x = torch.flatten(x, start_dim=1)
        x = torch.cat([x, one_hot], dim=-1)
        x = torch.tanh(self.fc1(x))
        return self.fc2(x)


class ExpressionLayer(nn.Module):
    def __init__(self, config, template_pca=None):
        super(ExpressionLayer, self).__init__()
        self._expression_basis_dim = config['expression_dim']
        self._num_vertices = config['num_vertices']
        self.decoder = nn.Linear(self._expression_basis_dim, 3 * self._num_vertices)
        if config['init_expression'] and template_pca is not None:
            # template_pca: (3 * num_vertices, expression_dim) PCA basis of the vertex offsets
            with torch.no_grad():
                self.decoder.weight.copy_(torch.from_numpy(template_pca).float())
                self.decoder.bias.zero_()
        else:
            nn.init.zeros_(self.decoder.bias)

    def forward(self, expression_encoding):
        out = self.decoder(expression_encoding)
        return out.view(-1, self._num_vertices, 3)


class VOCAModel(nn.Module):
    def __init__(self, config, template_pca=None):
        super(VOCAModel, self).__init__()
        self.config = config
        self.num_training_subjects = len(config['subject_for_training'].split(' '))
        self.speech_encoder = SpeechEncoder(config, self.num_training_subjects)
        self.expression_layer = ExpressionLayer(config, template_pca)

    def forward(self, speech_features, condition_subject_id, face_templates):
        expression_encoding = self.speech_encoder(speech_features, condition_subject_id)
        expression_offset = self.expression_layer(expression_encoding)
        face_templates = face_templates.type(torch.cuda.FloatTensor)
        return face_templates + expression_offset, expression_offset


class VOCALoss(nn.Module):
    """Position + velocity + acceleration reconstruction loss over consecutive frames."""

    def __init__(self, config):
        super(VOCALoss, self).__init__()
        self.config = config
        self.num_consecutive_frames = config['num_consecutive_frames']

    @staticmethod
    def _reconstruction_loss(pred, target, absolute):
        if absolute:
            return torch.mean(torch.sum(torch.abs(pred - target), dim=-1))
        return torch.mean(torch.sum(torch.square(pred - target), dim=-1))

    def forward(self, predicted, target, expression_offset):
        absolute = self.config['absolute_reconstruction_loss']
        rec_loss = self._reconstruction_loss(predicted, target, absolute)
        n = self.num_consecutive_frames

        velocity_loss = predicted.new_zeros(())
        acceleration_loss = predicted.new_zeros(())
        if self.config['velocity_weight'] > 0:
            assert n >= 2
            p = predicted.view(-1, n, *predicted.shape[1:])
            t = target.view(-1, n, *target.shape[1:])
            velocity_loss = self._reconstruction_loss(p[:, 1:] - p[:, :-1], t[:, 1:] - t[:, :-1], absolute)
        if self.config['acceleration_weight'] > 0:
            assert n >= 3
            p = predicted.view(-1, n, *predicted.shape[1:])
            t = target.view(-1, n, *target.shape[1:])
            p_acc = p[:, 2:] - 2 * p[:, 1:-1] + p[:, :-2]
            t_acc = t[:, 2:] - 2 * t[:, 1:-1] + t[:, :-2]
            acceleration_loss = self._reconstruction_loss(p_acc, t_acc, absolute)

        verts_reg_loss = torch.mean(torch.sum(torch.abs(expression_offset), dim=-1))

        loss = rec_loss \
            + self.config['velocity_weight'] * velocity_loss \
            + self.config['acceleration_weight'] * acceleration_loss \
            + self.config['verts_regularizer_weight'] * verts_reg_loss
        return loss, {'rec': rec_loss.detach(), 'vel': velocity_loss.detach(),
                      'acc': acceleration_loss.detach(), 'reg': verts_reg_loss.detach()}
