import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from utils.hparams import HParams


class CNNBlock(nn.Module):
    """Conv2d -> BN -> ReLU stack used by the McFee & Bello / Humphrey style chord CNNs."""

    def __init__(self, in_ch, out_ch, n_convs=2, kernel=(3, 3), pool=(1, 2), dropout=0.2):
        super().__init__()
        layers = []
        for i in range(n_convs):
            layers += [nn.Conv2d(in_ch if i == 0 else out_ch, out_ch, kernel, padding=(kernel[0] // 2, kernel[1] // 2)),
                       nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True)]
        self.convs = nn.Sequential(*layers)
        self.pool = nn.MaxPool2d(pool) if pool is not None else nn.Identity()
        self.drop = nn.Dropout2d(dropout)

    def forward(self, x):
        return self.drop(self.pool(self.convs(x)))


class CNN(nn.Module):
    """Frame-wise chord classifier: (B, T, F) CQT -> (B, T, n_chords)."""

    def __init__(self, config):
        super().__init__()
        self.timestep = config['timestep']
        self.num_chords = config['num_chords']
        self.feature_size = config['feature_size']
        ch = config.get('cnn_channels', 32)
        self.blocks = nn.Sequential(
            CNNBlock(1, ch, pool=(1, 3)),
            CNNBlock(ch, ch * 2, pool=(1, 3)),
            CNNBlock(ch * 2, ch * 4, pool=(1, 2)),
        )
        reduced = self.feature_size // 18
        self.proj = nn.Conv2d(ch * 4, 128, kernel_size=(1, reduced))
        self.output_layer = nn.Linear(128, self.num_chords)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x, labels):
        # x: (B, T, F)
        h = self.blocks(x.unsqueeze(1))                   # (B, C, T, F')
        h = F.relu(self.proj(h)).squeeze(-1)              # (B, 128, T)
        logits = self.output_layer(h.transpose(1, 2))     # (B, T, n_chords)
        loss = self.loss(logits.reshape(-1, self.num_chords), labels.reshape(-1))
        top2 = logits.topk(2, dim=-1).indices
        return top2[..., 0].reshape(-1), loss, None, top2[..., 1].reshape(-1)


class CRNN(nn.Module):
    """Conv front-end + bidirectional GRU over frames (Jiang et al. / McFee & Bello CR2 baseline).

    Songs are cut into `timestep`-frame excerpts, but the last excerpt of each song is
    zero-padded; `lengths` lets the GRU skip the padding.
    """

    def __init__(self, config):
        super().__init__()
        self.timestep = config['timestep']
        self.num_chords = config['num_chords']
        self.feature_size = config['feature_size']
        hidden = config.get('rnn_hidden', 256)
        ch = config.get('cnn_channels', 16)

        self.conv1 = nn.Conv2d(1, ch, kernel_size=(5, 5), padding=2)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, 1, kernel_size=(1, 1))
        # frequency pooling on the 1-channel map: (B*T, 1, F) -> (B*T, 1, F/4)
        self.freq_pool = nn.MaxPool1d(kernel_size=4, stride=4)
        self.fc_in = nn.Linear(self.feature_size // 4, hidden)
        self.gru = nn.GRU(input_size=hidden, hidden_size=hidden, num_layers=2,
                          batch_first=True, bidirectional=True, dropout=0.5)
        self.output_layer = nn.Linear(2 * hidden, self.num_chords)
        self.loss = nn.CrossEntropyLoss(ignore_index=-1)

    def encode(self, x, lengths=None):
        B, T, Fq = x.shape
        h = F.relu(self.bn1(self.conv1(x.unsqueeze(1))))   # (B, C, T, F)
        h = F.relu(self.conv2(h)).squeeze(1)                # (B, T, F)
        h = self.freq_pool(h.reshape(B * T, 1, Fq)).reshape(B, T, -1)
        h = torch.tanh(self.fc_in(h))
        if lengths is not None:
            packed = pack_padded_sequence(h, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, _ = self.gru(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        else:
            out, _ = self.gru(h)
        return out

    def forward(self, x, labels, lengths=None):
        out = self.encode(x, lengths)
        logits = self.output_layer(out)                     # (B, T, n_chords)
        if lengths is not None:
            frame_idx = torch.arange(x.size(1), device=x.device)[None, :]
            labels = labels.masked_fill(frame_idx >= lengths.to(x.device)[:, None], -1)
        loss = self.loss(logits.reshape(-1, self.num_chords), labels.reshape(-1))
        top2 = logits.topk(2, dim=-1).indices
        return top2[..., 0].reshape(-1), loss, None, top2[..., 1].reshape(-1)

    @torch.no_grad()
    def predict(self, x, lengths=None):
        logits = self.output_layer(self.encode(x, lengths))
        return logits.argmax(dim=-1)


class ChordCRF(nn.Module):
    """Linear-chain CRF on top of frame logits (optional smoothing of chord changes)."""

    def __init__(self, num_chords):
        super().__init__()
        self.transitions = nn.Parameter(torch.zeros(num_chords, num_chords))
        self.start = nn.Parameter(torch.zeros(num_chords))
        self.end = nn.Parameter(torch.zeros(num_chords))

    def log_partition(self, emissions):
        # emissions: (B, T, K)
        alpha = self.start[None, :] + emissions[:, 0]
        for t in range(1, emissions.size(1)):
            alpha = torch.logsumexp(alpha[:, :, None] + self.transitions[None], dim=1) + emissions[:, t]
        return torch.logsumexp(alpha + self.end[None, :], dim=1)

    def score(self, emissions, tags):
        B, T, K = emissions.shape
        s = self.start[tags[:, 0]] + emissions[:, 0].gather(1, tags[:, :1]).squeeze(1)
        for t in range(1, T):
            s = s + self.transitions[tags[:, t - 1], tags[:, t]] + emissions[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
        return s + self.end[tags[:, -1]]

    def nll(self, emissions, tags):
        return (self.log_partition(emissions) - self.score(emissions, tags)).mean()

    @torch.no_grad()
    def decode(self, emissions):
        B, T, K = emissions.shape
        score = self.start[None, :] + emissions[:, 0]
        history = []
        for t in range(1, T):
            best, idx = (score[:, :, None] + self.transitions[None]).max(dim=1)
            history.append(idx)
            score = best + emissions[:, t]
        score = score + self.end[None, :]
        best_last = score.argmax(dim=-1)
        path = [best_last]
        for idx in reversed(history):
            best_last = idx.gather(1, best_last[:, None]).squeeze(1)
            path.append(best_last)
        return torch.stack(path[::-1], dim=1)


if __name__ == "__main__":
    config = HParams.load("run_config.yaml")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    batch_size = 2
    timestep = 108
    feature_size = 144
    num_chords = 25

    features = torch.randn(batch_size, timestep, feature_size, requires_grad=True).to(device)
    chords = torch.randint(25, (batch_size * timestep,)).to(device)
    lengths = torch.tensor([timestep, timestep - 20])

    model = CRNN(config=config.model).to(device)
    prediction, loss, _, _ = model(features, chords.view(batch_size, timestep), lengths)
    print(prediction.size(), loss)
