"""Part-of-speech tagging with a quantum LSTM (QLSTM) cell.

Follows the structure of the QLSTM reference implementation (Chen, Yoo &
Fang, "Quantum Long Short-Term Memory", 2020): each of the four LSTM gates
is a variational quantum circuit wrapped in ``qml.qnn.TorchLayer``; the
embedding and the tagger head are classical.

    python train_qlstm_pos.py --n-qubits 4 --n-qlayers 1 --epochs 300
    python train_qlstm_pos.py --n-qubits 0   # classical LSTM baseline
    python train_qlstm_pos.py --gpu 2 --backend default.qubit.torch
"""

import argparse
import os
import time

import numpy as np
import pennylane as qml
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class QLSTM(nn.Module):
    def __init__(self, input_size, hidden_size, n_qubits=4, n_qlayers=1,
                 batch_first=True, return_sequences=False, return_state=False,
                 backend="default.qubit", torch_device="cpu"):
        super().__init__()
        self.n_inputs = input_size
        self.hidden_size = hidden_size
        self.concat_size = self.n_inputs + self.hidden_size
        self.n_qubits = n_qubits
        self.n_qlayers = n_qlayers
        self.backend = backend  # "default.qubit", "qiskit.basicaer", "qiskit.ibm"

        self.batch_first = batch_first
        self.return_sequences = return_sequences
        self.return_state = return_state

        self.wires_forget = [f"wire_forget_{i}" for i in range(self.n_qubits)]
        self.wires_input = [f"wire_input_{i}" for i in range(self.n_qubits)]
        self.wires_update = [f"wire_update_{i}" for i in range(self.n_qubits)]
        self.wires_output = [f"wire_output_{i}" for i in range(self.n_qubits)]

        dev_kwargs = {}
        if self.backend == "default.qubit.torch":
            # keep the simulator state on the same device as the LSTM weights
            dev_kwargs["torch_device"] = torch_device
        self.dev_forget = qml.device(self.backend, wires=self.wires_forget, **dev_kwargs)
        self.dev_input = qml.device(self.backend, wires=self.wires_input, **dev_kwargs)
        self.dev_update = qml.device(self.backend, wires=self.wires_update, **dev_kwargs)
        self.dev_output = qml.device(self.backend, wires=self.wires_output, **dev_kwargs)

        def _circuit_forget(inputs, weights):
            qml.templates.AngleEmbedding(inputs, wires=self.wires_forget)
            qml.templates.BasicEntanglerLayers(weights, wires=self.wires_forget)
            return [qml.expval(qml.PauliZ(wires=w)) for w in self.wires_forget]

        self.qlayer_forget = qml.QNode(_circuit_forget, self.dev_forget, interface="torch")

        def _circuit_input(inputs, weights):
            qml.templates.AngleEmbedding(inputs, wires=self.wires_input)
            qml.templates.BasicEntanglerLayers(weights, wires=self.wires_input)
            return [qml.expval(qml.PauliZ(wires=w)) for w in self.wires_input]

        self.qlayer_input = qml.QNode(_circuit_input, self.dev_input, interface="torch")

        def _circuit_update(inputs, weights):
            qml.templates.AngleEmbedding(inputs, wires=self.wires_update)
            qml.templates.BasicEntanglerLayers(weights, wires=self.wires_update)
            return [qml.expval(qml.PauliZ(wires=w)) for w in self.wires_update]

        self.qlayer_update = qml.QNode(_circuit_update, self.dev_update, interface="torch")

        def _circuit_output(inputs, weights):
            qml.templates.AngleEmbedding(inputs, wires=self.wires_output)
            qml.templates.BasicEntanglerLayers(weights, wires=self.wires_output)
            return [qml.expval(qml.PauliZ(wires=w)) for w in self.wires_output]

        self.qlayer_output = qml.QNode(_circuit_output, self.dev_output, interface="torch")

        weight_shapes = {"weights": (n_qlayers, n_qubits)}
        print(f"weight_shapes = (n_qlayers, n_qubits) = ({n_qlayers}, {n_qubits})")

        self.clayer_in = torch.nn.Linear(self.concat_size, n_qubits)
        self.VQC = {
            "forget": qml.qnn.TorchLayer(self.qlayer_forget, weight_shapes),
            "input": qml.qnn.TorchLayer(self.qlayer_input, weight_shapes),
            "update": qml.qnn.TorchLayer(self.qlayer_update, weight_shapes),
            "output": qml.qnn.TorchLayer(self.qlayer_output, weight_shapes),
        }
        # register so .to(device) and .parameters() see them
        self.vqc_modules = nn.ModuleDict(self.VQC)
        self.clayer_out = torch.nn.Linear(self.n_qubits, self.hidden_size)

    def forward(self, x, init_states=None):
        """
        x.shape is (batch_size, seq_length, feature_size)
        recurrent_activation -> sigmoid
        activation -> tanh
        """
        if self.batch_first is True:
            batch_size, seq_length, features_size = x.size()
        else:
            seq_length, batch_size, features_size = x.size()

        hidden_seq = []
        if init_states is None:
            h_t = torch.zeros(batch_size, self.hidden_size, device=x.device)  # hidden state (output)
            c_t = torch.zeros(batch_size, self.hidden_size, device=x.device)  # cell state
        else:
            # for now we ignore the fact that in PyTorch you can stack multiple RNNs
            # so we take only the first elements of the init_states tuple init_states[0][0], init_states[1][0]
            h_t, c_t = init_states
            h_t = h_t[0]
            c_t = c_t[0]

        for t in range(seq_length):
            # get features from the t-th element in seq, for all entries in the batch
            x_t = x[:, t, :]

            # Concatenate input and hidden state
            v_t = torch.cat((h_t, x_t), dim=1)

            # match qubit dimension
            y_t = self.clayer_in(v_t)

            f_t = torch.sigmoid(self.clayer_out(self.vqc_modules["forget"](y_t)))  # forget block
            i_t = torch.sigmoid(self.clayer_out(self.vqc_modules["input"](y_t)))  # input block
            g_t = torch.tanh(self.clayer_out(self.vqc_modules["update"](y_t)))  # update block
            o_t = torch.sigmoid(self.clayer_out(self.vqc_modules["output"](y_t)))  # output block

            c_t = (f_t * c_t) + (i_t * g_t)
            h_t = o_t * torch.tanh(c_t)

            hidden_seq.append(h_t.unsqueeze(0))
        hidden_seq = torch.cat(hidden_seq, dim=0)
        hidden_seq = hidden_seq.transpose(0, 1).contiguous()
        return hidden_seq, (h_t, c_t)


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size, n_qubits=0,
                 backend="default.qubit", torch_device="cpu"):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

        # The LSTM takes word embeddings as inputs, and outputs hidden states
        # with dimensionality hidden_dim.
        if n_qubits > 0:
            print(f"Tagger will use Quantum LSTM running on backend {backend}")
            self.lstm = QLSTM(embedding_dim, hidden_dim, n_qubits=n_qubits, backend=backend,
                              torch_device=torch_device)
        else:
            print("Tagger will use Classical LSTM")
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)

        # The linear layer that maps from hidden state space to tag space
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_logits = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_logits, dim=1)
        return tag_scores


TRAINING_DATA = [
    # Tags are: DET - determiner; NN - noun; V - verb
    # For example, the word "The" is a determiner
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"]),
]


def prepare_sequence(seq, to_ix, device):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long, device=device)


def main():
    parser = argparse.ArgumentParser("QLSTM Example")
    parser.add_argument("-E", "--embedding_dim", default=8, type=int)
    parser.add_argument("-H", "--hidden_dim", default=6, type=int)
    parser.add_argument("-Q", "--n-qubits", default=0, type=int)
    parser.add_argument("-e", "--epochs", default=300, type=int)
    parser.add_argument("-B", "--backend", default="default.qubit")
    parser.add_argument("--gpu", default=None, type=str, help="value for CUDA_VISIBLE_DEVICES")
    args = parser.parse_args()

    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"Embedding dim:    {args.embedding_dim}")
    print(f"LSTM output size: {args.hidden_dim}")
    print(f"Number of qubits: {args.n_qubits}")
    print(f"Training epochs:  {args.epochs}")
    print(f"Device:           {device}")

    word_to_ix = {}
    # For each words-list (sentence) and tags-list in each tuple of training_data
    for sent, tags in TRAINING_DATA:
        for word in sent:
            if word not in word_to_ix:  # word has not been assigned an index yet
                word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
    print(f"Vocabulary: {word_to_ix}")
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index
    ix_to_tag = {i: k for k, i in tag_to_ix.items()}

    model = LSTMTagger(args.embedding_dim, args.hidden_dim, vocab_size=len(word_to_ix),
                       tagset_size=len(tag_to_ix), n_qubits=args.n_qubits,
                       backend=args.backend, torch_device=str(device)).to(device)

    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    history = {"loss": [], "acc": []}
    t_start = time.time()
    for epoch in range(args.epochs):
        losses = []
        preds = []
        targets = []
        for sentence, tags in TRAINING_DATA:
            # Step 1. Remember that Pytorch accumulates gradients.
            model.zero_grad()

            # Step 2. Get our inputs ready for the network
            sentence_in = prepare_sequence(sentence, word_to_ix, device)
            labels = prepare_sequence(tags, tag_to_ix, device)

            # Step 3. Run our forward pass.
            tag_scores = model(sentence_in)

            # Step 4. Compute the loss, gradients, and update the parameters
            loss = loss_function(tag_scores, labels)
            loss.backward()
            optimizer.step()
            losses.append(float(loss))

            probs = torch.softmax(tag_scores, dim=-1)
            preds.append(probs.argmax(dim=-1))
            targets.append(labels)

        preds = torch.cat(preds)
        targets = torch.cat(targets)
        corrects = (preds == targets)
        accuracy = corrects.sum().float() / float(targets.size(0))

        avg_loss = np.mean(losses)
        history["loss"].append(avg_loss)
        history["acc"].append(accuracy.item())

        if (epoch + 1) % 10 == 0:
            print(f"Epoch {epoch + 1} / {args.epochs}: Loss = {avg_loss:.3f} Acc = {accuracy:.2f}")

    print(f"training took {time.time() - t_start:.1f}s on {device}")

    # See what the scores are after training
    with torch.no_grad():
        input_sentence = TRAINING_DATA[0][0]
        labels = TRAINING_DATA[0][1]
        inputs = prepare_sequence(input_sentence, word_to_ix, device)
        tag_scores = model(inputs)

        tag_ids = torch.argmax(tag_scores, dim=1).cpu().numpy()
        tag_labels = [ix_to_tag[k] for k in tag_ids]
        print(f"Sentence:  {input_sentence}")
        print(f"Labels:    {labels}")
        print(f"Predicted: {tag_labels}")

    lstm_choice = "classical" if args.n_qubits == 0 else "quantum"
    torch.save(model.state_dict(), f"pos_{lstm_choice}.pt")


if __name__ == "__main__":
    main()
