import torch

from contextlib import contextmanager
from colbert.utils.utils import NullContextManager


class MixedPrecisionManager:
    """
    Thin wrapper around torch.cuda.amp so that the training loop reads the same with and
    without mixed precision:

        amp = MixedPrecisionManager(config.amp)
        with amp.context():
            loss = colbert(...)
        amp.backward(loss)
        amp.step(colbert, optimizer, scheduler)
    """

    def __init__(self, activated, dtype=torch.float16, max_grad_norm=2.0):
        self.activated = activated
        self.dtype = dtype
        self.max_grad_norm = max_grad_norm

        if self.activated:
            self.scaler = torch.cuda.amp.GradScaler(enabled=(dtype == torch.float16))

    def context(self):
        if not self.activated:
            return NullContextManager()
        return torch.cuda.amp.autocast(dtype=self.dtype)

    def backward(self, loss):
        if self.activated:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self, colbert, optimizer, scheduler=None):
        if self.activated:
            self.scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(colbert.parameters(), self.max_grad_norm, error_if_nonfinite=False)

            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            torch.nn.utils.clip_grad_norm_(colbert.parameters(), self.max_grad_norm)
            optimizer.step()

        if scheduler is not None:
            scheduler.step()

        optimizer.zero_grad()

    def state_dict(self):
        return self.scaler.state_dict() if self.activated else {}

    def load_state_dict(self, state):
        if self.activated and state:
            self.scaler.load_state_dict(state)


@contextmanager
def inference_autocast(enabled=True, dtype=torch.float16):
    """Autocast for encoding passages at indexing time (no scaler needed)."""
    if not enabled:
        yield
        return
    with torch.autocast(device_type="cuda", dtype=dtype):
        yield
