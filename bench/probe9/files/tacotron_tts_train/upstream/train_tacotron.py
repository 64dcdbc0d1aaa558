import argparse
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

from utils import hparams as hp
from utils.display import stream, simple_table, save_attention
from utils.dataset import get_tts_datasets
from utils.text.symbols import symbols
from utils.paths import Paths


# ----------------------------------------------------------------------------- model pieces
class ConvNorm(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=5):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2, bias=False)
        self.bn = nn.BatchNorm1d(out_channels)

    def forward(self, x):
        return self.bn(self.conv(x))


class Encoder(nn.Module):
    """Three 1-D conv layers followed by a bidirectional LSTM over the (packed) character sequence."""

    def __init__(self, n_symbols, embed_dim=512):
        super().__init__()
        self.embedding = nn.Embedding(n_symbols, embed_dim)
        self.convolutions = nn.ModuleList([ConvNorm(embed_dim, embed_dim) for _ in range(3)])
        self.lstm = nn.LSTM(embed_dim, embed_dim // 2, 1, batch_first=True, bidirectional=True)

    def forward(self, x, input_lengths):
        x = self.embedding(x).transpose(1, 2)
        for conv in self.convolutions:
            x = F.dropout(F.relu(conv(x)), 0.5, self.training)
        x = x.transpose(1, 2)
        input_lengths = input_lengths.cpu().numpy()
        x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, batch_first=True, enforce_sorted=False)
        self.lstm.flatten_parameters()
        outputs, _ = self.lstm(x)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class LSA(nn.Module):
    """Location-sensitive attention."""

    def __init__(self, attn_dim, kernel_size=31, filters=32):
        super().__init__()
        self.conv = nn.Conv1d(2, filters, padding=(kernel_size - 1) // 2, kernel_size=kernel_size, bias=True)
        self.L = nn.Linear(filters, attn_dim, bias=False)
        self.W = nn.Linear(attn_dim, attn_dim, bias=True)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.cumulative = None
        self.attention = None

    def init_attention(self, encoder_seq_proj):
        b, t, c = encoder_seq_proj.size()
        self.cumulative = encoder_seq_proj.new_zeros(b, t)
        self.attention = encoder_seq_proj.new_zeros(b, t)

    def forward(self, encoder_seq_proj, query, t, mask):
        if t == 0:
            self.init_attention(encoder_seq_proj)
        processed_query = self.W(query).unsqueeze(1)
        location = torch.cat([self.cumulative.unsqueeze(1), self.attention.unsqueeze(1)], dim=1)
        processed_loc = self.L(self.conv(location).transpose(1, 2))
        u = self.v(torch.tanh(processed_query + encoder_seq_proj + processed_loc)).squeeze(-1)
        u = u.masked_fill(~mask, -float('inf'))
        scores = F.softmax(u, dim=1)
        self.attention = scores
        self.cumulative = self.cumulative + self.attention
        return scores.unsqueeze(-1).transpose(1, 2)


class Decoder(nn.Module):
    def __init__(self, n_mels, enc_dim=512, rnn_dim=1024, prenet_dim=256, r=2):
        super().__init__()
        self.n_mels, self.r = n_mels, r
        self.prenet = nn.Sequential(nn.Linear(n_mels, prenet_dim), nn.ReLU(), nn.Dropout(0.5),
                                    nn.Linear(prenet_dim, prenet_dim), nn.ReLU(), nn.Dropout(0.5))
        self.attn_rnn = nn.LSTMCell(prenet_dim + enc_dim, rnn_dim)
        self.attn_proj = nn.Linear(enc_dim, 128)
        self.attention = LSA(128)
        self.query_proj = nn.Linear(rnn_dim, 128)
        self.rnn = nn.LSTMCell(rnn_dim + enc_dim, rnn_dim)
        self.mel_proj = nn.Linear(rnn_dim + enc_dim, n_mels * r)

    def forward(self, enc, mels, mask):
        b, T_enc, _ = enc.size()
        enc_proj = self.attn_proj(enc)
        h1 = enc.new_zeros(b, self.attn_rnn.hidden_size)
        c1 = torch.zeros_like(h1)
        h2, c2 = torch.zeros_like(h1), torch.zeros_like(h1)
        ctx = enc.new_zeros(b, enc.size(-1))
        prev = enc.new_zeros(b, self.n_mels)
        outs, attns = [], []
        for t in range(0, mels.size(2), self.r):
            p = self.prenet(prev)
            h1, c1 = self.attn_rnn(torch.cat([p, ctx], -1), (h1, c1))
            scores = self.attention(enc_proj, self.query_proj(h1), t, mask)
            ctx = (scores @ enc).squeeze(1)
            h2, c2 = self.rnn(torch.cat([h1, ctx], -1), (h2, c2))
            frame = self.mel_proj(torch.cat([h2, ctx], -1)).view(b, self.n_mels, self.r)
            outs.append(frame)
            attns.append(scores)
            prev = mels[:, :, t + self.r - 1]
        return torch.cat(outs, dim=2), torch.cat(attns, dim=1)


class Tacotron(nn.Module):
    def __init__(self, n_symbols, n_mels=80, r=2):
        super().__init__()
        self.encoder = Encoder(n_symbols)
        self.decoder = Decoder(n_mels, r=r)
        self.postnet = nn.Sequential(*[ConvNorm(n_mels if i == 0 else 512, 512 if i < 4 else n_mels)
                                       for i in range(5)])
        self.register_buffer('step', torch.zeros(1, dtype=torch.long))

    def forward(self, x, m, x_lens=None):
        self.step += 1
        if x_lens is None:
            x_lens = (x != 0).sum(1)
        mask = torch.arange(x.size(1), device=x.device)[None, :] < x_lens[:, None]
        enc = self.encoder(x, x_lens)
        m1_hat, attention = self.decoder(enc, m, mask[:, :enc.size(1)])
        m2_hat = m1_hat + self.postnet(m1_hat)
        return m1_hat, m2_hat, attention

    def get_step(self):
        return self.step.data.item()


# ----------------------------------------------------------------------------- training
def np_now(x: torch.Tensor):
    return x.detach().cpu().numpy()


def data_parallel_workaround(model, *input):
    device_ids = list(range(torch.cuda.device_count()))
    output_device = device_ids[0]
    replicas = torch.nn.parallel.replicate(model, device_ids)
    inputs = torch.nn.parallel.scatter(input, device_ids)
    replicas = replicas[:len(inputs)]
    outputs = torch.nn.parallel.parallel_apply(replicas, inputs)
    y_hat = torch.nn.parallel.gather(outputs, output_device)
    return y_hat


def tts_train_loop(paths, model, optimizer, train_set, lr, train_steps, attn_example):
    device = next(model.parameters()).device  # use same device as model parameters
    for g in optimizer.param_groups:
        g['lr'] = lr

    total_iters = len(train_set)
    epochs = train_steps // total_iters + 1
    for e in range(1, epochs + 1):
        start = time.time()
        running_loss = 0
        for i, (x, m, ids, x_lens) in enumerate(train_set, 1):
            x, m, x_lens = x.to(device), m.to(device), x_lens.to(device)

            # Parallelize model onto GPUS using workaround due to python bug
            if device.type == 'cuda' and torch.cuda.device_count() > 1:
                m1_hat, m2_hat, attention = data_parallel_workaround(model, x, m)
            else:
                m1_hat, m2_hat, attention = model(x, m, x_lens)

            m1_loss = F.l1_loss(m1_hat, m)
            m2_loss = F.l1_loss(m2_hat, m)
            loss = m1_loss + m2_loss

            optimizer.zero_grad()
            loss.backward()
            if hp.tts_clip_grad_norm is not None:
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), hp.tts_clip_grad_norm)
                if np.isnan(grad_norm.item()):
                    print('grad_norm was NaN!')
            optimizer.step()

            running_loss += loss.item()
            avg_loss = running_loss / i
            speed = i / (time.time() - start)
            step = model.get_step()
            k = step // 1000

            if step % hp.tts_checkpoint_every == 0:
                ckpt_name = f'taco_step{k}K'
                torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()},
                           paths.tts_checkpoints / f'{ckpt_name}.pt')

            if attn_example in ids:
                idx = ids.index(attn_example)
                save_attention(np_now(attention[idx][:, :160]), paths.tts_attention / f'{step}')

            msg = f'| Epoch: {e}/{epochs} ({i}/{total_iters}) | Loss: {avg_loss:#.4} | {speed:#.2} steps/s | Step: {k}k | '
            stream(msg)
        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, paths.tts_latest_weights)
        print(' ')


def main():
    parser = argparse.ArgumentParser(description='Train Tacotron TTS')
    parser.add_argument('--force_train', '-f', action='store_true', help='Forces the model to train past total steps')
    parser.add_argument('--hp_file', metavar='FILE', default='hparams.py', help='The file to use for the hyperparameters')
    args = parser.parse_args()

    hp.configure(args.hp_file)  # Load hparams from file
    paths = Paths(hp.data_path, hp.voc_model_id, hp.tts_model_id)

    force_train = args.force_train

    if torch.cuda.is_available():
        device = torch.device('cuda')
        for session in hp.tts_schedule:
            _, _, _, batch_size = session
            if batch_size % torch.cuda.device_count() != 0:
                raise ValueError('`batch_size` must be evenly divisible by n_gpus!')
    else:
        device = torch.device('cpu')
    print('Using device:', device)

    # Instantiate Tacotron Model
    print('\nInitialising Tacotron Model...\n')
    model = Tacotron(n_symbols=len(symbols), n_mels=hp.num_mels, r=hp.tts_r).to(device)
    optimizer = optim.Adam(model.parameters())

    if paths.tts_latest_weights.exists():
        state = torch.load(paths.tts_latest_weights, map_location=device)
        model.load_state_dict(state['model'])
        optimizer.load_state_dict(state['optimizer'])

    current_step = model.get_step()
    if not force_train and current_step >= hp.tts_schedule[-1][-2]:
        print('Training already finished')
        return

    for i, session in enumerate(hp.tts_schedule):
        r, lr, max_step, batch_size = session
        if current_step < max_step:
            train_set, attn_example = get_tts_datasets(paths.data, batch_size, r)
            training_steps = max_step - current_step
            simple_table([('Steps with r=%s' % repr(r), str(training_steps // 1000) + 'k Steps'),
                          ('Batch Size', batch_size),
                          ('Learning Rate', lr),
                          ('Outputs/Step (r)', model.decoder.r)])
            tts_train_loop(paths, model, optimizer, train_set, lr, training_steps, attn_example)
    print('Training Complete.')


if __name__ == "__main__":
    main()
