from torch import nn
import torch.nn.functional as F


class SimpleMLP(nn.Module):
    """Riedel et al. (2017) 'A simple but tough-to-beat baseline' MLP over TF/TF-IDF features."""

    def __init__(self, input_dim, hidden_dim, output_dim, keep_p=0.6):
        super(SimpleMLP, self).__init__()
        self.hidden_layer = nn.Linear(input_dim, hidden_dim)
        self.output_layer = nn.Linear(hidden_dim, output_dim)
        self.dropout = nn.Dropout(p=1 - keep_p)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.output_layer(self.dropout(self.relu(self.dropout(self.hidden_layer(x)))))


class MLPWithHeadline(nn.Module):
    """Variant used for the ablation with separate claim/evidence projections."""

    def __init__(self, input_dim, hidden_dim, output_dim, keep_p=0.6):
        super(MLPWithHeadline, self).__init__()
        self.claim_proj = nn.Linear(input_dim // 2, hidden_dim // 2)
        self.evidence_proj = nn.Linear(input_dim - input_dim // 2, hidden_dim - hidden_dim // 2)
        self.output_layer = nn.Linear(hidden_dim, output_dim)
        self.dropout = nn.Dropout(p=1 - keep_p)
        self.split = input_dim // 2

    def forward(self, x):
        c = F.relu(self.claim_proj(x[:, :self.split]))
        e = F.relu(self.evidence_proj(x[:, self.split:]))
        h = self.dropout(torch_cat(c, e))
        return self.output_layer(h)


def torch_cat(a, b):
    import torch
    return torch.cat([a, b], dim=1)
