import os
import json
import argparse
import string

import numpy as np
import torch
import requests

from . import tokenizers, model
from .extra_fns import res_to_list, res_to_seq


class pretrained:
    """
    Initializes AbLang for heavy or light chains.

    The model runs on whatever device you hand it. Pass device='cuda' to run on a GPU;
    everything else in this class follows self.used_device.
    """

    def __init__(self, chain="heavy", model_folder="download", random_init=False, ncpu=7, device='cpu'):
        super().__init__()

        self.used_device = torch.device(device)

        if model_folder == "download":
            # Download model and save to specific place - if already downloaded do not download again
            model_folder = os.path.join(os.path.dirname(__file__), "model-weights-{}".format(chain))
            os.makedirs(model_folder, exist_ok=True)

            if not os.path.isfile(os.path.join(model_folder, "amodel.pt")):
                print("Downloading model ...")

                url = "https://opig.stats.ox.ac.uk/data/downloads/ablang-{}.tar.gz".format(chain)
                tmp_file = os.path.join(model_folder, "tmp.tar.gz")

                with open(tmp_file, 'wb') as f:
                    f.write(requests.get(url).content)

                os.system(f"tar -zxvf {tmp_file} -C {model_folder}")
                os.remove(tmp_file)

        self.hparams_file = os.path.join(model_folder, 'hparams.json')
        self.model_file = os.path.join(model_folder, 'amodel.pt')

        with open(self.hparams_file, 'r', encoding='utf-8') as f:
            self.hparams = argparse.Namespace(**json.load(f))

        self.AbLang = model.AbLang(self.hparams)
        self.AbLang.to(self.used_device)

        if not random_init:
            self.AbLang.load_state_dict(torch.load(self.model_file, map_location=self.used_device))

        self.tokenizer = tokenizers.ABtokenizer(os.path.join(model_folder, 'vocab.json'))
        self.AbRep = self.AbLang.AbRep

        self.ncpu = ncpu
        self.spread = 11  # Based on get_spread_sequences function
        if chain == 'heavy':
            self.max_position = 128
        else:
            self.max_position = 127

    def freeze(self):
        self.AbLang.eval()

    def unfreeze(self):
        self.AbLang.train()

    def __call__(self, sequence, mode='seqcoding', align=False, splitSize=50):
        """
        Mode: sequence, residue, restore or likelihood.
        """
        if not mode in ['rescoding', 'seqcoding', 'restore', 'likelihood']:
            raise SyntaxError("Given mode doesn't exist.")

        if isinstance(sequence, str):
            sequence = [sequence]

        if align and mode == 'restore':
            sequence = self.sequence_aligning(sequence)
            splitSize = ((splitSize // self.spread) + 1) * self.spread

        aList = []
        for sequence_part in [sequence[x:x + splitSize] for x in range(0, len(sequence), splitSize)]:
            aList.append(getattr(self, mode)(sequence_part, align))

        if mode == 'rescoding':
            if align == True:
                return aList
            return sum(aList, [])

        return np.concatenate(aList)

    def seqcoding(self, seqs, align=False):
        """
        Sequence specific representations
        """
        tokens = self.tokenizer(seqs, pad=True, device=self.used_device)

        residue_states = self.AbRep(tokens).last_hidden_states

        if torch.is_tensor(residue_states):
            residue_states = residue_states.cpu().detach().numpy()

        lens = np.vectorize(len)(seqs)
        lens = np.tile(lens.reshape(-1, 1, 1), (residue_states.shape[2], 1))

        seq_codings = np.apply_along_axis(res_to_seq, 2, np.c_[np.swapaxes(residue_states, 1, 2), lens])

        del lens
        del residue_states

        return seq_codings

    def restore(self, seqs, align=False):
        """
        Restore sequences
        """
        if align:
            nr_seqs = len(seqs) // self.spread

            tokens = self.tokenizer(seqs, pad=True, device=self.used_device)
            predictions = self.AbLang(tokens)[:, :, 1:21]

            # Reshape
            tokens = tokens.reshape(nr_seqs, self.spread, -1)
            predictions = predictions.reshape(nr_seqs, self.spread, -1, 20)
            seqs = seqs.reshape(nr_seqs, -1)

            # Find index of best predictions
            best_seq_idx = torch.argmax(torch.max(predictions, -1).values[:, :, 1:2].mean(2), -1)

            # Select best predictions
            tokens = tokens.gather(1, best_seq_idx.view(-1, 1).unsqueeze(1).repeat(1, 1, tokens.shape[-1])).squeeze(1)
            predictions = predictions[range(predictions.shape[0]), best_seq_idx]
            seqs = np.take_along_axis(seqs, best_seq_idx.view(-1, 1).cpu().numpy(), axis=1)

        else:
            tokens = self.tokenizer(seqs, pad=True, device=self.used_device)
            predictions = self.AbLang(tokens)[:, :, 1:21]

        predicted_tokens = torch.max(predictions, -1).indices + 1
        restored_tokens = torch.where(tokens == 23, predicted_tokens, tokens)

        restored_seqs = self.tokenizer(restored_tokens, encode=False)

        return np.array([res.replace('<', '').replace('>', '').replace('-', '') for res in restored_seqs])

    def likelihood(self, seqs, align=False):
        """
        Possible Mutations
        """
        tokens = self.tokenizer(seqs, pad=True, device=self.used_device)

        predictions = self.AbLang(tokens)[:, :, 1:21]

        if torch.is_tensor(predictions):
            predictions = predictions.cpu().detach().numpy()

        return predictions

    def rescoding(self, seqs, align=False):
        """
        Residue specific representations.
        """
        tokens = self.tokenizer(seqs, pad=True, device=self.used_device)
        residue_states = self.AbRep(tokens).last_hidden_states

        if torch.is_tensor(residue_states):
            residue_states = residue_states.cpu().detach().numpy()

        residue_output = [res_to_list(state, seq) for state, seq in zip(residue_states, seqs)]

        return residue_output

    def sequence_aligning(self, seqs):
        tmp_seqs = [pad_sequence.replace('*', '') for pad_sequence in seqs]

        spread_sequences = self._get_spread_sequences(seqs, self.spread - 2)

        return np.array(spread_sequences).flatten()

    def _get_spread_sequences(self, seqs, spread):
        """
        Test sequences which are 8 positions shorter (position 10 + max CDR1 gap of 7) up to 2 positions longer (possible insertions).
        """
        spread_sequences = []

        for seq in seqs:
            seq = seq.replace('-', '')
            diff = self.max_position - len(seq)
            start = max(0, diff - spread)
            stop = max(0, diff) + 1
            spread_sequences.append(
                [seq[:10] + '*' * i + seq[10:] for i in range(start, stop)]
                + [seq] * (spread - (stop - start))
            )

        return spread_sequences
