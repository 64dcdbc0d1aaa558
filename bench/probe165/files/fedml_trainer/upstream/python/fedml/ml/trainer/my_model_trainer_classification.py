import copy
import logging
import time

import numpy as np
import torch
from torch import nn

from ...core.alg_frame.client_trainer import ClientTrainer
from ...device.device import is_gpu_device
from ...utils.model_utils import check_device


class ModelTrainerCLS(ClientTrainer):
    """Default image/tabular classification trainer used by the FedAvg family.

    ``device`` is whatever ``fedml.device.get_device(args)`` returned for this
    process, i.e. a GPU chosen through gpu_mapping.yaml or the CPU.
    """

    def __init__(self, model, args):
        super().__init__(model, args)
        self.cpu_transfer = getattr(args, "cpu_transfer", True)
        self.use_amp = bool(getattr(args, "amp", False))
        self.scaler = None

    def get_model_params(self):
        if self.cpu_transfer:
            return self.model.cpu().state_dict()
        return self.model.state_dict()

    def set_model_params(self, model_parameters):
        self.model.load_state_dict(model_parameters)

    def _build_optimizer(self, args):
        if args.client_optimizer == "sgd":
            return torch.optim.SGD(
                filter(lambda p: p.requires_grad, self.model.parameters()),
                lr=args.learning_rate,
            )
        return torch.optim.Adam(
            filter(lambda p: p.requires_grad, self.model.parameters()),
            lr=args.learning_rate,
            weight_decay=args.weight_decay,
            amsgrad=True,
        )

    def train(self, train_data, device, args):
        model = self.model

        model.to(device)
        model.train()

        # train and update
        criterion = nn.CrossEntropyLoss().to(device)  # pylint: disable=E1102
        optimizer = self._build_optimizer(args)

        use_amp = self.use_amp and is_gpu_device(device)
        if use_amp and self.scaler is None:
            self.scaler = torch.cuda.amp.GradScaler()

        epoch_loss = []
        for epoch in range(args.epochs):
            batch_loss = []
            t0 = time.time()
            for batch_idx, (x, labels) in enumerate(train_data):
                x, labels = x.to(device), labels.to(device)
                model.zero_grad()
                with torch.cuda.amp.autocast(enabled=use_amp):
                    log_probs = model(x)
                    labels = labels.long()
                    loss = criterion(log_probs, labels)  # pylint: disable=E1102
                if use_amp:
                    self.scaler.scale(loss).backward()
                    self.scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    self.scaler.step(optimizer)
                    self.scaler.update()
                else:
                    loss.backward()
                    # Uncommet this following line to avoid nan loss
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()

                # logging.info(
                #     "Update Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                #         epoch,
                #         (batch_idx + 1) * args.batch_size,
                #         len(train_data) * args.batch_size,
                #         100.0 * (batch_idx + 1) / len(train_data),
                #         loss.item(),
                #     )
                # )
                batch_loss.append(loss.item())
            if len(batch_loss) == 0:
                epoch_loss.append(0.0)
            else:
                epoch_loss.append(sum(batch_loss) / len(batch_loss))
            logging.info(
                "Client Index = {}\tEpoch: {}\tLoss: {:.6f}\tTime: {:.2f}s".format(
                    self.id, epoch, sum(epoch_loss) / len(epoch_loss), time.time() - t0
                )
            )
        if device.type == "cuda":
            logging.info(
                "client %s peak GPU memory %.1f MiB"
                % (self.id, torch.cuda.max_memory_allocated(device) / 2**20)
            )
        return epoch_loss[-1] if epoch_loss else 0.0

    def train_iterations(self, train_data, device, args):
        model = self.model

        model.to(device)
        model.train()

        criterion = nn.CrossEntropyLoss().to(device)  # pylint: disable=E1102
        optimizer = self._build_optimizer(args)

        epoch_loss = []
        current_steps = 0
        current_epoch = 0
        while current_steps < args.local_iterations:
            batch_loss = []
            for batch_idx, (x, labels) in enumerate(train_data):
                x, labels = x.to(device), labels.to(device)
                model.zero_grad()
                log_probs = model(x)
                labels = labels.long()
                loss = criterion(log_probs, labels)  # pylint: disable=E1102
                loss.backward()
                optimizer.step()
                batch_loss.append(loss.item())
                current_steps += 1
                if current_steps == args.local_iterations:
                    break
            current_epoch += 1
            epoch_loss.append(sum(batch_loss) / len(batch_loss))
            logging.info(
                "Client Index = {}\tEpoch: {}\tLoss: {:.6f}".format(
                    self.id, current_epoch, sum(epoch_loss) / len(epoch_loss)
                )
            )

    def test(self, test_data, device, args):
        model = self.model

        model.to(device)
        model.eval()

        metrics = {"test_correct": 0, "test_loss": 0, "test_total": 0}

        criterion = nn.CrossEntropyLoss().to(device)  # pylint: disable=E1102

        with torch.no_grad():
            for batch_idx, (x, target) in enumerate(test_data):
                x = x.to(device)
                target = target.to(device)
                pred = model(x)
                target = target.long()
                loss = criterion(pred, target)  # pylint: disable=E1102

                _, predicted = torch.max(pred, -1)
                correct = predicted.eq(target).sum()

                metrics["test_correct"] += correct.item()
                metrics["test_loss"] += loss.item() * target.size(0)
                metrics["test_total"] += target.size(0)
        return metrics

    def test_on_the_server(self, train_data_local_dict, test_data_local_dict, device, args=None) -> bool:
        """Per-client evaluation on the aggregator (only used by the debug path)."""
        correct, total = 0, 0
        for client_idx, test_data in test_data_local_dict.items():
            m = self.test(test_data, device, args)
            correct += m["test_correct"]
            total += m["test_total"]
        acc = correct / max(total, 1)
        logging.info("server-side test accuracy over all clients = %.4f" % acc)
        return True

    def get_model_copy_for_attack(self, device):
        """Defense/attack modules need a frozen copy that lives next to the data."""
        model_copy = copy.deepcopy(self.model)
        check_device(model_copy, device)
        return model_copy.to(device).eval()

    def summarize_weights(self):
        flat = np.concatenate([p.detach().cpu().numpy().ravel() for p in self.model.parameters()])
        return {"l2": float(np.linalg.norm(flat)), "n": int(flat.size)}
