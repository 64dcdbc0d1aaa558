import os
from collections import OrderedDict
from time import time

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.optim.lr_scheduler import CyclicLR

from crabnet.utils.get_compute_device import get_compute_device
from crabnet.utils.optim import SWA, Lamb, Lookahead
from crabnet.utils.utils import DummyScaler, EDM_CsvLoader, Scaler

data_type_np = np.float32
data_type_torch = torch.float32


class Model:
    def __init__(
        self,
        model,
        model_name="UnnamedModel",
        n_elements="infer",
        capture_every=None,
        verbose=True,
        drop_unary=True,
        scale=True,
        use_amp=True,
    ):
        self.model = model
        self.model_name = model_name
        self.data_loader = None
        self.train_loader = None
        self.classification = False
        self.n_elements = n_elements
        self.compute_device = model.compute_device
        self.fudge = 0.02  # expected fractional tolerance (std. dev) ~= 2%
        self.capture_every = capture_every
        self.verbose = verbose
        self.drop_unary = drop_unary
        self.scale = scale
        # mixed precision only pays off on tensor-core GPUs
        self.use_amp = use_amp and self.compute_device.type == "cuda"
        self.scaler_amp = torch.cuda.amp.GradScaler(enabled=self.use_amp)
        if self.verbose:
            print("\nModel architecture: out_dims, d_model, N, heads")
            print(
                f"{self.model.out_dims}, {self.model.d_model}, "
                f"{self.model.N}, {self.model.heads}"
            )
            print(f"Running on compute device: {self.compute_device}")
            print(f"Model size: {count_parameters(self.model)} parameters\n")
        if self.capture_every is not None:
            print(f"capturing attention tensors every {self.capture_every}")

    def load_data(self, file_name, batch_size=2**9, train=False):
        self.batch_size = batch_size
        inference = not train
        data_loaders = EDM_CsvLoader(
            csv_data=file_name,
            batch_size=batch_size,
            n_elements=self.n_elements,
            inference=inference,
            verbose=self.verbose,
            drop_unary=self.drop_unary,
            scale=self.scale,
        )
        print(f"loading data with up to {data_loaders.n_elements:0.0f} elements in the formula")

        # update n_elements after loading dataset
        self.n_elements = data_loaders.n_elements

        data_loader = data_loaders.get_data_loaders(inference=inference)
        y = data_loader.dataset.data[1]
        if train:
            self.train_len = len(y)
            if self.classification:
                self.scaler = DummyScaler(y)
            else:
                self.scaler = Scaler(y)
            self.train_loader = data_loader
        self.data_loader = data_loader

    def train(self):
        self.model.train()
        ti = time()
        minima = []
        for i, data in enumerate(self.train_loader):
            X, y, formula = data
            y = self.scaler.scale(y)
            src, frac = X.squeeze(-1).chunk(2, dim=1)
            # add a small jitter to the input fractions to improve model
            # robustness and to increase stability
            frac = frac * (1 + (torch.randn_like(frac)) * self.fudge)  # uniform
            frac = torch.clamp(frac, 0, 1)
            frac[src == 0] = 0
            frac = frac / frac.sum(dim=1).unsqueeze(1).repeat(1, frac.shape[-1])

            src = src.to(self.compute_device, dtype=torch.long, non_blocking=True)
            frac = frac.to(self.compute_device, dtype=data_type_torch, non_blocking=True)
            y = y.to(self.compute_device, dtype=data_type_torch, non_blocking=True)

            ##################################
            # Force evaluate dataset so that we can capture it in the hook
            # here we are using the train_loader, but we can also use
            # general data_loader
            if self.capture_every == "step":
                # print('capturing every step!')
                # print(f'data_loader size: {len(self.data_loader.dataset)}')
                self.capture_flag = True
                # (act, pred, formulae, uncert)
                self.act_v, self.pred_v, _, _ = self.predict(self.data_loader)
                self.capture_flag = False
            ##################################

            with torch.cuda.amp.autocast(enabled=self.use_amp):
                output = self.model.forward(src, frac)
                prediction, uncertainty = output.chunk(2, dim=-1)
                loss = self.criterion(
                    prediction.view(-1), uncertainty.view(-1), y.view(-1)
                )

            self.optimizer.zero_grad()
            self.scaler_amp.scale(loss).backward()
            self.scaler_amp.step(self.optimizer)
            self.scaler_amp.update()

            if self.stepping:
                self.lr_scheduler.step()

            swa_check = self.epochs_step * self.swa_start - 1
            epoch_check = (self.epoch + 1) % (2 * self.epochs_step) == 0
            learning_time = epoch_check and self.epoch >= swa_check
            if learning_time:
                act_v, pred_v, _, _ = self.predict(self.data_loader)
                mae_v = mean_absolute_error(act_v, pred_v)
                self.optimizer.update_swa(mae_v)
                minima.append(self.optimizer.minimum_found)

        if learning_time and not any(minima):
            self.optimizer.discard_count += 1
            print(f"Epoch {self.epoch} failed to improve.")
            print(
                f"Discarded: {self.optimizer.discard_count}/"
                f"{self.discard_n} weight updates ♻🗑️"
            )

        dt = time() - ti
        datalen = len(self.train_loader.dataset)
        # print(f'{datalen = }, {dt = :0.4f}, s/datum = {dt / datalen:0.4f}')

    def fit(self, epochs=None, checkin=None, losscurve=False):
        assert_train_str = "Please Load Training Data (self.train_loader)"
        assert_val_str = "Please Load Validation Data (self.data_loader)"
        assert self.train_loader is not None, assert_train_str
        assert self.data_loader is not None, assert_val_str
        self.loss_curve = {}
        self.loss_curve["train"] = []
        self.loss_curve["val"] = []

        # change epochs_step
        # self.epochs_step = 10
        self.epochs_step = 1
        self.step_size = self.epochs_step * len(self.train_loader)
        print(f"stepping every {self.step_size} training passes, cycling lr every {self.epochs_step} epochs")
        if epochs is None:
            n_iterations = 1e4
            epochs = int(n_iterations / len(self.data_loader))
            print(f"running for {epochs} epochs")
        if checkin is None:
            checkin = self.epochs_step * 2
            print(f"checkin at {self.epochs_step*2} epochs to match cycle length")
        if epochs % (self.epochs_step * 2) != 0:
            updated_epochs = epochs - epochs % (self.epochs_step * 2)
            print(f"epochs not divisible by {self.epochs_step * 2}, updating epochs to {updated_epochs} for learning")
            epochs = updated_epochs

        self.step_count = 0
        self.criterion = RobustL1
        if self.classification:
            print("Using BCE loss for classification task")
            self.criterion = BCEWithLogitsLoss
        base_optim = Lamb(params=self.model.parameters())
        optimizer = Lookahead(base_optimizer=base_optim)
        self.optimizer = SWA(optimizer)

        lr_scheduler = CyclicLR(
            self.optimizer,
            base_lr=1e-4,
            max_lr=6e-3,
            cycle_momentum=False,
            step_size_up=self.step_size,
        )

        self.swa_start = 2  # start at (n/2) cycle (lr minimum)
        self.lr_scheduler = lr_scheduler
        self.stepping = True
        self.lr_list = []
        self.xswa = []
        self.yswa = []
        self.discard_n = 3

        for epoch in range(epochs):
            self.epoch = epoch
            self.epochs = epochs
            ti = time()
            self.train()
            # print(f'epoch time: {(time() - ti):0.3f}')
            self.lr_list.append(self.optimizer.param_groups[0]["lr"])

            if (epoch + 1) % checkin == 0 or epoch == epochs - 1 or epoch == 0:
                ti = time()
                act_t, pred_t, _, _ = self.predict(self.train_loader)
                dt = time() - ti
                datasize = len(act_t)
                # print(f'inference speed: {datasize/dt:0.3f}')
                mae_t = mean_absolute_error(act_t, pred_t)
                self.loss_curve["train"].append(mae_t)
                act_v, pred_v, _, _ = self.predict(self.data_loader)
                mae_v = mean_absolute_error(act_v, pred_v)
                self.loss_curve["val"].append(mae_v)
                epoch_str = f"Epoch: {epoch}/{epochs} ---"
                train_str = f'train mae: {self.loss_curve["train"][-1]:0.3g}'
                val_str = f'val mae: {self.loss_curve["val"][-1]:0.3g}'
                if self.classification:
                    train_str = train_str.replace("mae", "logloss")
                    val_str = val_str.replace("mae", "logloss")
                print(epoch_str, train_str, val_str)

                if self.epoch >= (self.epochs_step * self.swa_start - 1):
                    if (self.epoch + 1) % (self.epochs_step * 2) == 0:
                        self.xswa.append(self.epoch)
                        self.yswa.append(mae_v)

            if (
                self.optimizer.discard_count >= self.discard_n
                and self.epoch >= self.epochs_step * self.swa_start
            ):
                print(f"Discarded: {self.optimizer.discard_count}/{self.discard_n} weight updates, early-stopping now 🙅🛑")
                self.optimizer.swap_swa_sgd()
                break

        if not (self.optimizer.discard_count >= self.discard_n):
            self.optimizer.swap_swa_sgd()

    def predict(self, loader):
        len_dataset = len(loader.dataset)
        n_atoms = int(len(loader.dataset[0][0]) / 2)
        act = np.zeros(len_dataset)
        pred = np.zeros(len_dataset)
        uncert = np.zeros(len_dataset)
        formulae = np.empty(len_dataset, dtype=list)
        atoms = np.empty((len_dataset, n_atoms))
        fractions = np.empty((len_dataset, n_atoms))
        self.model.eval()
        with torch.no_grad():
            for i, data in enumerate(loader):
                X, y, formula = data
                src, frac = X.squeeze(-1).chunk(2, dim=1)
                src = src.to(self.compute_device, dtype=torch.long, non_blocking=True)
                frac = frac.to(self.compute_device, dtype=data_type_torch, non_blocking=True)
                y = y.to(self.compute_device, dtype=data_type_torch, non_blocking=True)
                output = self.model.forward(src, frac)
                prediction, uncertainty = output.chunk(2, dim=-1)
                uncertainty = torch.exp(uncertainty) * self.scaler.std
                prediction = self.scaler.unscale(prediction)
                if self.classification:
                    prediction = torch.sigmoid(prediction)

                data_loc = slice(i * self.batch_size, i * self.batch_size + len(y), 1)

                atoms[data_loc, :] = src.cpu().numpy().astype("int32")
                fractions[data_loc, :] = frac.cpu().numpy().astype("float32")
                act[data_loc] = y.view(-1).cpu().numpy().astype("float32")
                pred[data_loc] = prediction.view(-1).cpu().detach().numpy().astype("float32")
                uncert[data_loc] = uncertainty.view(-1).cpu().detach().numpy().astype("float32")
                formulae[data_loc] = formula
        self.model.train()

        return (act, pred, formulae, uncert)

    def save_network(self, model_name=None):
        if model_name is None:
            model_name = self.model_name
            os.makedirs("models/trained_models", exist_ok=True)
            path = f"models/trained_models/{model_name}.pth"
            print(f"Saving network ({model_name}) to {path}")
        else:
            path = f"models/trained_models/{model_name}.pth"
            print(f"Saving checkpoint ({model_name}) to {path}")

        save_dict = {
            "weights": self.model.state_dict(),
            "scaler_state": self.scaler.state_dict(),
            "model_name": model_name,
        }
        torch.save(save_dict, path)

    def load_network(self, path):
        path = f"models/trained_models/{path}"
        network = torch.load(path, map_location=self.compute_device)
        base_optim = Lamb(params=self.model.parameters())
        optimizer = Lookahead(base_optimizer=base_optim)
        self.optimizer = SWA(optimizer)
        self.scaler = Scaler(torch.zeros(3))
        self.model.load_state_dict(network["weights"])
        self.scaler.load_state_dict(network["scaler_state"])
        self.model_name = network["model_name"]
        if self.compute_device.type == "cuda":
            torch.cuda.empty_cache()


# %%
def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def RobustL1(output, log_std, target):
    """
    Robust L1 loss using a lorentzian prior. Allows for estimation
    of an aleatoric uncertainty.
    """
    absolute = torch.abs(output - target)
    loss = np.sqrt(2.0) * absolute * torch.exp(-log_std) + log_std
    return torch.mean(loss)


def BCEWithLogitsLoss(output, log_std, target):
    loss = nn.functional.binary_cross_entropy_with_logits(output, target)
    return loss


def mean_absolute_error(act, pred):
    return np.mean(np.abs(np.asarray(act) - np.asarray(pred)))


if __name__ == "__main__":
    from crabnet.kingcrab import CrabNet

    compute_device = get_compute_device(prefer_last=True)
    model = Model(CrabNet(compute_device=compute_device).to(compute_device))
