# Copyright 2021 Peng Cheng Laboratory (http://www.szpclab.com/) and FedLab Authors (smilelab.group)

# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at

#     http://www.apache.org/licenses/LICENSE-2.0

# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from copy import deepcopy

import torch

from ...core.client.trainer import SGDSerialClientTrainer
from ...core.server.handler import SyncServerHandler
from ...utils import Aggregators, SerializationTool


##################
#
#      Server
#
##################


class ScaffoldServerHandler(SyncServerHandler):
    """FedAvg server handler.

    Karimireddy et al. "SCAFFOLD: Stochastic Controlled Averaging for Federated Learning", ICML 2020.
    """

    def __init__(self, model, global_round, sample_ratio, cuda=False, device=None, logger=None):
        super().__init__(model, global_round, sample_ratio, cuda, device, logger)
        self.global_c = None
        self.global_lr = 1.0

    @property
    def downlink_package(self):
        return [self.model_parameters, self.global_c]

    def setup_optim(self, lr):
        self.lr = lr
        self.global_c = torch.zeros_like(self.model_parameters)

    def global_update(self, buffer):
        # unpack
        dys = [ele[0] for ele in buffer]
        dcs = [ele[1] for ele in buffer]

        dx = Aggregators.fedavg_aggregate(dys)
        dc = Aggregators.fedavg_aggregate(dcs)

        next_model = self.model_parameters + self.lr * dx
        self.set_model(next_model)

        self.global_c += 1.0 * len(dcs) / self.num_clients * dc


##################
#
#      Client
#
##################


class ScaffoldSerialClientTrainer(SGDSerialClientTrainer):
    def __init__(self, model, num_clients, cuda=False, device=None, logger=None, personal=False) -> None:
        super().__init__(model, num_clients, cuda, device, logger, personal)
        self.cs = [None for _ in range(self.num_clients)]

    def setup_optim(self, epochs, batch_size, lr):
        super().setup_optim(epochs, batch_size, lr)

    def local_process(self, payload, id_list):
        global_model = payload[0]
        global_c = payload[1]
        for id in id_list:
            data_loader = self.dataset.get_dataloader(id, self.batch_size)
            pack = self.train(id, global_model, global_c, data_loader)
            self.cache.append(pack)

    def train(self, id, global_model_parameters, global_c, train_loader):
        self.set_model(global_model_parameters)
        frz_model = global_model_parameters

        if self.cs[id] is None:
            self.cs[id] = torch.zeros_like(global_model_parameters)

        if self.cuda:
            global_c = global_c.cuda(self.device)
            self.cs[id] = self.cs[id].cuda(self.device)
            frz_model = frz_model.cuda(self.device)

        for _ in range(self.epochs):
            for data, target in train_loader:
                if self.cuda:
                    data, target = data.cuda(self.device), target.cuda(self.device)

                output = self.model(data)
                loss = self.criterion(output, target)

                self.optimizer.zero_grad()
                loss.backward()

                grad = self.model_gradients
                grad = grad - self.cs[id] + global_c
                idx = 0

                parameters = self._model.parameters()
                for p in parameters:
                    x = p.numel()
                    if p.grad is not None:  # frozen / unused params have no grad
                        p.grad.copy_(grad[idx: idx + x].view_as(p.grad))
                    idx += x

                self.optimizer.step()

        dy = self.model_parameters - frz_model
        dc = -1.0 / (self.epochs * len(train_loader) * self.lr) * dy - global_c
        self.cs[id] += dc
        return [dy.cpu(), dc.cpu()]


class ScaffoldClientState:
    """Stand-alone version of the control variate bookkeeping for the cross-process setup.

    Control variates are kept on the CPU between rounds so that thousands of
    simulated clients fit in host RAM; only the active client's copy is moved to
    the GPU during local training.
    """

    def __init__(self, num_params, device="cpu"):
        self.c_local = torch.zeros(num_params)
        self.device = device

    def to_training_device(self):
        return self.c_local.to(self.device, non_blocking=True)

    def update(self, dc):
        self.c_local += dc.detach().cpu()


def scaffold_correction(grad_vector: torch.Tensor, c_local: torch.Tensor, c_global: torch.Tensor) -> torch.Tensor:
    """Apply the SCAFFOLD drift correction g <- g - c_i + c."""
    return grad_vector - c_local.to(grad_vector.device) + c_global.to(grad_vector.device)


def init_server_state(model, use_cuda=True):
    """Zero control variate for the server, placed next to the global model."""
    flat = SerializationTool.serialize_model(model)
    c = torch.zeros_like(flat)
    if use_cuda and torch.cuda.is_available():
        c = c.cuda()
    return deepcopy(flat), c
