import torch

# Global device used by every icon_registration module. Override before building
# networks, e.g. `icon_registration.config.device = torch.device("cuda:1")`.
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
