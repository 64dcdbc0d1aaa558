"""Split learning (SplitNN) client side.

The client owns the bottom part of the network (``client_model``) and the raw
data. In every step it runs the forward pass up to the cut layer, ships the
"smashed" activations to the server, receives the gradient w.r.t. those
activations and finishes backprop locally. Only activations and gradients ever
leave the client.

Communication is done with MPI messages (see message_define.py); tensors are
moved to the CPU before they are pickled because mpi4py cannot send CUDA
memory directly.
"""
import logging
import time

import torch
import torch.nn as nn
import torch.optim as optim


class SplitNN_client:
    def __init__(self, args):
        self.comm = args["comm"]
        self.model = args["model"]
        self.trainloader = args["trainloader"]
        self.testloader = args["testloader"]
        self.rank = args["rank"]
        self.MAX_RANK = args["max_rank"]
        self.node_left = self.MAX_RANK if self.rank == 1 else self.rank - 1
        self.node_right = 1 if self.rank == self.MAX_RANK else self.rank + 1
        self.epoch_count = 0
        self.batch_idx = 0
        self.MAX_EPOCH_PER_NODE = args["epochs"]
        self.SERVER_RANK = args["server_rank"]
        self.optimizer = optim.SGD(
            self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4
        )

        self.device = args["device"]
        if str(self.device).startswith("cuda"):
            torch.backends.cudnn.benchmark = True
        self.model.to(self.device)

        # timings are reported to the server at the end of every epoch
        self.compute_time = 0.0
        self.comm_bytes = 0

    def _sync(self):
        # kernels are asynchronous; wait for them so that compute_time is meaningful
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def forward_pass(self):
        inputs, labels = next(self.dataloader)
        inputs, labels = inputs.to(self.device), labels.to(self.device)
        self.optimizer.zero_grad()

        start = time.time()
        self.acts = self.model(inputs)
        self._sync()
        self.compute_time += time.time() - start

        # activations are sent through MPI, so they have to live in host memory
        acts_cpu = self.acts.detach().cpu()
        self.comm_bytes += acts_cpu.numel() * acts_cpu.element_size()
        return acts_cpu, labels.cpu()

    def backward_pass(self, grads):
        start = time.time()
        grads = grads.to(self.device)
        self.acts.backward(grads)
        self.optimizer.step()
        self._sync()
        self.compute_time += time.time() - start

    def eval_mode(self):
        self.dataloader = iter(self.testloader)
        self.model.eval()

    def train_mode(self):
        self.dataloader = iter(self.trainloader)
        self.model.train()

    def write_log(self):
        logging.info(
            "rank %d epoch %d: compute %.2fs, sent %.1f MB of activations"
            % (self.rank, self.epoch_count, self.compute_time, self.comm_bytes / 1e6)
        )
        self.compute_time = 0.0
        self.comm_bytes = 0


class SplitNNClientModel(nn.Module):
    """ResNet-ish bottom part used in the CIFAR-10 example (up to the cut layer)."""

    def __init__(self, in_channels=3, width=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )

    def forward(self, x):
        return self.features(x)


def build_client(comm, rank, size, trainloader, testloader, epochs, gpu_id=None):
    """Factory used by ``SplitNN_distributed`` for every process with rank > 0."""
    if gpu_id is None:
        gpu_id = (rank - 1) % max(torch.cuda.device_count(), 1)
    device = torch.device("cuda:%d" % gpu_id if torch.cuda.is_available() else "cpu")
    logging.info("split_nn client rank %d on %s" % (rank, device))
    model = SplitNNClientModel()
    args = {
        "comm": comm,
        "model": model,
        "trainloader": trainloader,
        "testloader": testloader,
        "rank": rank,
        "max_rank": size - 1,
        "epochs": epochs,
        "server_rank": 0,
        "device": device,
    }
    return SplitNN_client(args)


def measure_cut_layer_size(model, sample, device="cpu"):
    """Bytes sent per sample at the cut layer; used to choose the split point."""
    model = model.to(device).eval()
    with torch.no_grad():
        out = model(sample.to(device))
    return out[0].numel() * out.element_size()


def send_tensor_to_server(comm, tensor, dest, tag):
    """Send a tensor through MPI (pickled numpy on the host)."""
    comm.send(tensor.detach().cpu().numpy(), dest=dest, tag=tag)


def recv_tensor_from_server(comm, source, tag, device):
    arr = comm.recv(source=source, tag=tag)
    return torch.from_numpy(arr).to(device)
