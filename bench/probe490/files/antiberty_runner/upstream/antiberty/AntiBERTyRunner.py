import os

import torch
import transformers

import antiberty
from antiberty import AntiBERTy
from antiberty.utils.general import exists

project_path = os.path.dirname(os.path.realpath(antiberty.__file__))
trained_models_dir = os.path.join(project_path, 'trained_models')

CHECKPOINT_PATH = os.path.join(trained_models_dir, 'AntiBERTy_md_smooth')
VOCAB_FILE = os.path.join(trained_models_dir, 'vocab.txt')

LABEL_MAP = {"H": 0, "L": 1}
SPECIES_MAP = {0: "Camel", 1: "Human", 2: "Mouse", 3: "Rabbit", 4: "Rat", 5: "Rhesus"}


class AntiBERTyRunner():
    """
    Wrapper for AntiBERTy model to perform inference on batches of antibody sequences.

    The model is placed on the first GPU when one is available; sequences are tokenized on
    the host and moved over per call.
    """

    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = AntiBERTy.from_pretrained(CHECKPOINT_PATH).to(self.device)
        self.model.eval()

        self.tokenizer = transformers.BertTokenizer(vocab_file=VOCAB_FILE, do_lower_case=False)

    def _tokenize(self, sequences):
        sequences = [list(s) for s in sequences]
        for s in sequences:
            for i, c in enumerate(s):
                if c == "_":
                    s[i] = "[MASK]"
        sequences = [" ".join(s) for s in sequences]

        tokenizer_out = self.tokenizer(
            sequences,
            return_tensors="pt",
            padding=True,
        )
        tokens = tokenizer_out["input_ids"].to(self.device)
        attention_mask = tokenizer_out["attention_mask"].to(self.device)
        return tokens, attention_mask

    def embed(self, sequences, hidden_layer=-1, return_attention=False):
        """
        Embed a list of sequences.

        Args:
            sequences (list): list of sequences
            hidden_layer (int): which hidden layer to use (0 to 8)
            return_attention (bool): whether to return attention matrices

        Returns:
            list(torch.Tensor): list of embedding tensors
            list(torch.Tensor): list of attention tensors (if return_attention=True)
        """
        tokens, attention_mask = self._tokenize(sequences)

        with torch.no_grad():
            outputs = self.model(
                input_ids=tokens,
                attention_mask=attention_mask,
                output_hidden_states=True,
                output_attentions=return_attention,
            )

        # gather embeddings
        embeddings = outputs.hidden_states
        embeddings = torch.stack(embeddings, dim=1)
        embeddings = list(embeddings.detach())

        for i, a in enumerate(attention_mask):
            embeddings[i] = embeddings[i][:, a == 1]

        if exists(hidden_layer):
            for i in range(len(embeddings)):
                embeddings[i] = embeddings[i][hidden_layer]

        # gather attention matrices
        if return_attention:
            attentions = outputs.attentions
            attentions = torch.stack(attentions, dim=1)
            attentions = list(attentions.detach())

            for i, a in enumerate(attention_mask):
                attentions[i] = attentions[i][:, :, a == 1]
                attentions[i] = attentions[i][:, :, :, a == 1]

            return embeddings, attentions

        return embeddings

    def classify(self, sequences):
        """
        Classify a list of sequences by species and chain type. Sequences must be
        provided as a list of strings.
        """
        tokens, attention_mask = self._tokenize(sequences)

        with torch.no_grad():
            outputs = self.model(
                input_ids=tokens,
                attention_mask=attention_mask,
                output_hidden_states=False,
                output_attentions=False,
            )

        species_logits = outputs.species_logits
        chain_logits = outputs.chain_logits

        species_preds = torch.argmax(species_logits, dim=-1).cpu().tolist()
        chain_preds = torch.argmax(chain_logits, dim=-1).cpu().tolist()

        inv_label = {v: k for k, v in LABEL_MAP.items()}
        species_preds = [SPECIES_MAP[p] for p in species_preds]
        chain_preds = [inv_label[p] for p in chain_preds]

        return species_preds, chain_preds

    def fill_masks(self, sequences):
        """
        Fill in the missing residues in a list of sequences. Each missing token is
        represented by an underscore character.
        """
        tokens, attention_mask = self._tokenize(sequences)
        predicted_tokens = torch.clone(tokens)

        with torch.no_grad():
            outputs = self.model(
                input_ids=tokens,
                attention_mask=attention_mask,
            )

        logits = outputs.prediction_logits
        logits[:, :, self.tokenizer.all_special_ids] = -float("inf")

        mask_idx = tokens == self.tokenizer.mask_token_id
        predicted_tokens[mask_idx] = torch.argmax(logits[mask_idx], dim=-1)

        filled = [
            "".join(self.tokenizer.convert_ids_to_tokens(t[a == 1][1:-1]))
            for t, a in zip(predicted_tokens, attention_mask)
        ]
        return filled

    def pseudo_log_likelihood(self, sequences, batch_size=None):
        """
        Compute the pseudo-log-likelihood of each sequence by masking one position at a time.

        Args:
            sequences (list): list of sequences
            batch_size (int): number of masked copies run through the model at once;
                              lower it if the GPU runs out of memory.

        Returns:
            torch.Tensor: pseudo-log-likelihood of each sequence
        """
        plls = []
        for s in sequences:
            masked_sequences = []
            for i in range(len(s)):
                masked_sequence = list(s[:i]) + ["[MASK]"] + list(s[i + 1:])
                masked_sequences.append(" ".join(masked_sequence))

            tokenizer_out = self.tokenizer(
                masked_sequences,
                return_tensors="pt",
                padding=True,
            )
            tokens = tokenizer_out["input_ids"].to(self.device)
            attention_mask = tokenizer_out["attention_mask"].to(self.device)

            logits = []
            with torch.no_grad():
                if not exists(batch_size):
                    batch_size_ = len(masked_sequences)
                else:
                    batch_size_ = batch_size

                for i in range(0, len(masked_sequences), batch_size_):
                    batch_end = min(i + batch_size_, len(masked_sequences))
                    tokens_ = tokens[i:batch_end]
                    attention_mask_ = attention_mask[i:batch_end]

                    outputs = self.model(
                        input_ids=tokens_,
                        attention_mask=attention_mask_,
                    )

                    logits.append(outputs.prediction_logits)

            logits = torch.cat(logits, dim=0)
            logits[:, :, self.tokenizer.all_special_ids] = -float("inf")
            logits = logits[:, 1:-1]  # remove CLS and SEP tokens

            # get masked token logits
            logits = torch.diagonal(logits, dim1=0, dim2=1).unsqueeze(0)
            labels = self.tokenizer.encode(
                " ".join(list(s)),
                return_tensors="pt",
            )[:, 1:-1].to(self.device)
            nll = torch.nn.functional.cross_entropy(
                logits,
                labels,
                reduction="mean",
            )
            pll = -nll
            plls.append(pll)

        plls = torch.stack(plls, dim=0)

        return plls
