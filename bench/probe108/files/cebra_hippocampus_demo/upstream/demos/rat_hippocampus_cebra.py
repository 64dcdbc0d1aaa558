"""Hypothesis- and discovery-driven CEBRA embeddings of rat hippocampus CA1 recordings.

Script version of the "Encoding of space, hypothesis- and discovery-driven analysis"
demo notebook: fits CEBRA-Time, CEBRA-Behavior (position + direction) and a shuffled
control on the achilles session, decodes position with a kNN decoder and saves the
3D embeddings and training losses.

The second half shows the equivalent low-level PyTorch API (model + loader + solver),
which is what we use for hyper-parameter sweeps on the cluster.

    python demos/rat_hippocampus_cebra.py --iterations 10000 --out results/hippocampus
"""
import argparse
import os

import numpy as np
import torch
import sklearn.metrics
import matplotlib.pyplot as plt

import cebra
import cebra.data
import cebra.datasets
import cebra.models
import cebra.solver
from cebra import CEBRA


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=10000)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--output-dimension", type=int, default=3)
    p.add_argument("--out", type=str, default="results/hippocampus")
    p.add_argument("--skip-lowlevel", action="store_true")
    return p.parse_args()


def split_data(data, test_ratio):
    split_idx = int(len(data.neural) * (1 - test_ratio))
    neural_train = data.neural[:split_idx]
    neural_test = data.neural[split_idx:]
    label_train = data.continuous_index[:split_idx]
    label_test = data.continuous_index[split_idx:]
    return neural_train.numpy(), neural_test.numpy(), label_train.numpy(), label_test.numpy()


def decoding_pos_dir(embedding_train, embedding_test, label_train, label_test):
    pos_decoder = cebra.KNNDecoder(n_neighbors=36, metric="cosine")
    dir_decoder = cebra.KNNDecoder(n_neighbors=36, metric="cosine")

    pos_decoder.fit(embedding_train, label_train[:, 0])
    dir_decoder.fit(embedding_train, label_train[:, 1])

    pos_pred = pos_decoder.predict(embedding_test)
    dir_pred = dir_decoder.predict(embedding_test)

    prediction = np.stack([pos_pred, dir_pred], axis=1)

    test_score = sklearn.metrics.r2_score(label_test[:, :2], prediction)
    pos_test_err = np.median(abs(prediction[:, 0] - label_test[:, 0]))
    pos_test_score = sklearn.metrics.r2_score(label_test[:, 0], prediction[:, 0])
    return test_score, pos_test_err, pos_test_score


def make_model(args, conditional):
    return CEBRA(
        model_architecture="offset10-model",
        batch_size=args.batch_size,
        learning_rate=3e-4,
        temperature=1,
        output_dimension=args.output_dimension,
        max_iterations=args.iterations,
        distance="cosine",
        conditional=conditional,
        device="cuda_if_available",
        verbose=True,
        time_offsets=10,
    )


def highlevel(args, hippocampus_pos):
    neural_train, neural_test, label_train, label_test = split_data(hippocampus_pos, 0.2)

    results = {}
    # --- CEBRA-Behavior with position + direction
    cebra_posdir = make_model(args, conditional="time_delta")
    cebra_posdir.fit(neural_train, label_train)
    cebra_posdir.save(os.path.join(args.out, "cebra_posdir_model.pt"))
    emb_tr = cebra_posdir.transform(neural_train)
    emb_te = cebra_posdir.transform(neural_test)
    results["posdir"] = decoding_pos_dir(emb_tr, emb_te, label_train, label_test)

    # --- CEBRA-Time (no labels)
    cebra_time = make_model(args, conditional="time")
    cebra_time.fit(neural_train)
    results["time"] = decoding_pos_dir(cebra_time.transform(neural_train), cebra_time.transform(neural_test),
                                       label_train, label_test)

    # --- shuffled control
    shuffled = np.random.permutation(label_train)
    cebra_shuffled = make_model(args, conditional="time_delta")
    cebra_shuffled.fit(neural_train, shuffled)
    results["shuffled"] = decoding_pos_dir(cebra_shuffled.transform(neural_train),
                                           cebra_shuffled.transform(neural_test), label_train, label_test)

    for name, (r2, err, pos_r2) in results.items():
        print(f"{name:>10s}: R2 {r2:.3f}   median pos. error {err * 100:.1f} cm   pos R2 {pos_r2:.3f}")

    ax = cebra.plot_loss(cebra_posdir, color="deepskyblue", label="position+direction")
    ax = cebra.plot_loss(cebra_shuffled, color="gray", label="shuffled", ax=ax)
    ax.legend()
    plt.savefig(os.path.join(args.out, "losses.png"), dpi=150)
    np.save(os.path.join(args.out, "embedding_posdir.npy"), emb_te)
    return results


def lowlevel(args, hippocampus_pos):
    """Same CEBRA-Behavior model with the PyTorch API, for sweeps over num_units/temperature."""
    neural = hippocampus_pos.neural
    continuous = hippocampus_pos.continuous_index

    dataset = cebra.data.TensorDataset(
        neural.type(torch.FloatTensor), continuous=continuous.type(torch.FloatTensor)
    )
    dataset = dataset.to("cuda")

    neural_model = cebra.models.init(
        name="offset10-model",
        num_neurons=dataset.input_dimension,
        num_units=32,
        num_output=args.output_dimension,
    ).to("cuda")
    dataset.configure_for(neural_model)

    loader = cebra.data.ContinuousDataLoader(
        dataset=dataset,
        num_steps=args.iterations,
        batch_size=args.batch_size,
        conditional="time_delta",
        time_offset=10,
    )

    criterion = cebra.models.criterions.LearnableCosineInfoNCE(temperature=1.0, min_temperature=0.1)
    optimizer = torch.optim.Adam(
        list(neural_model.parameters()) + list(criterion.parameters()), lr=3e-4, weight_decay=0
    )

    solver = cebra.solver.init(
        name="single-session",
        model=neural_model,
        criterion=criterion,
        optimizer=optimizer,
        tqdm_on=True,
    )
    solver.to("cuda")
    solver.fit(loader=loader, save_frequency=2000, logdir=os.path.join(args.out, "lowlevel"))

    with torch.no_grad():
        embedding = solver.transform(dataset.neural).cpu().numpy()
    np.save(os.path.join(args.out, "embedding_lowlevel.npy"), embedding)
    print("low-level embedding:", embedding.shape, "final loss:", solver.log["total"][-1])


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    if torch.cuda.is_available():
        print("Using GPU:", torch.cuda.get_device_name(0))
    else:
        print("No GPU found, CEBRA will run on CPU (slow)")

    hippocampus_pos = cebra.datasets.init("rat-hippocampus-single-achilles")
    highlevel(args, hippocampus_pos)
    if not args.skip_lowlevel:
        lowlevel(args, hippocampus_pos)


if __name__ == "__main__":
    main()
