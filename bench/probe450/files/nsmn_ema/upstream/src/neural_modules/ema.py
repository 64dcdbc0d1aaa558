import copy


class EMA(object):
    """Exponential moving average of the trainable parameters (kept on the parameters' own device)."""

    def __init__(self, parameters, mu=0.9999):
        self.mu = mu
        self.shadow = {}
        for name, param in parameters:
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def register(self, name, val):
        self.shadow[name] = val.clone()

    def __call__(self, parameters):
        for name, param in parameters:
            if param.requires_grad:
                assert name in self.shadow
                new_average = (1.0 - self.mu) * param.data + self.mu * self.shadow[name]
                self.shadow[name] = new_average.clone()

    def get(self, name):
        return self.shadow[name]


def get_ema_gpu_id_list(ema):
    """Devices the shadow weights live on (used only for logging)."""
    return sorted({str(v.device) for v in ema.shadow.values()})


def load_ema_to_model(model, ema):
    for name, param in model.named_parameters():
        if param.requires_grad:
            param.data = ema.get(name)


def get_ema_model(model, ema):
    cp_model = copy.deepcopy(model)
    load_ema_to_model(cp_model, ema)
    return cp_model
