"""
In this example the use of ActiveLearner is demonstrated with a PyTorch
model wrapped in skorch's NeuralNetClassifier, on MNIST.  Two query strategies
are compared: plain uncertainty sampling on a deterministic CNN and
max-entropy with MC-dropout on the same architecture.

Run:  python pytorch_model_training.py --n-queries 10 --query-size 200
"""
import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision.transforms import ToTensor
from torchvision.datasets import MNIST
from skorch import NeuralNetClassifier
from skorch.callbacks import EarlyStopping

from modAL.models import ActiveLearner
from modAL.uncertainty import uncertainty_sampling

# use the GPU if there is one -- skorch moves module and batches for us
device = "cuda" if torch.cuda.is_available() else "cpu"


# build class for the skorch API
class Torch_Model(nn.Module):
    def __init__(self,):
        super(Torch_Model, self).__init__()
        self.convs = nn.Sequential(
                                nn.Conv2d(1, 32, 3),
                                nn.ReLU(),
                                nn.Conv2d(32, 64, 3),
                                nn.ReLU(),
                                nn.MaxPool2d(2),
                                nn.Dropout(0.25)
        )
        self.fcs = nn.Sequential(
                                nn.Linear(12*12*64, 128),
                                nn.ReLU(),
                                nn.Dropout(0.5),
                                nn.Linear(128, 10),
        )

    def forward(self, x):
        out = x
        out = self.convs(out)
        out = out.view(-1, 12*12*64)
        out = self.fcs(out)
        return out


def max_entropy_mc(classifier, X, n_instances=1, T=20):
    """MC-dropout max-entropy query: keep dropout active at inference time."""
    random_subset = np.random.choice(range(len(X)), size=min(2000, len(X)), replace=False)
    module = classifier.estimator.module_
    module.train()
    with torch.no_grad():
        x = torch.from_numpy(X[random_subset]).to(classifier.estimator.device)
        outputs = np.stack([torch.softmax(module(x), dim=-1).cpu().numpy() for _ in range(T)])
    pc = outputs.mean(axis=0)
    acquisition = (-pc * np.log(pc + 1e-10)).sum(axis=-1)
    idx = (-acquisition).argsort()[:n_instances]
    query_idx = random_subset[idx]
    return query_idx, X[query_idx]


def load_mnist():
    mnist_data = MNIST('.', download=True, transform=ToTensor())
    dataloader = DataLoader(mnist_data, shuffle=True, batch_size=60000)
    X, y = next(iter(dataloader))

    # read training data
    X_train, X_test, y_train, y_test = X[:50000], X[50000:], y[:50000], y[50000:]
    X_train = X_train.reshape(50000, 1, 28, 28)
    X_test = X_test.reshape(10000, 1, 28, 28)
    return X_train.numpy(), X_test.numpy(), y_train.numpy(), y_test.numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--n-initial', type=int, default=1000)
    parser.add_argument('--n-queries', type=int, default=10)
    parser.add_argument('--query-size', type=int, default=200)
    parser.add_argument('--max-epochs', type=int, default=10)
    args = parser.parse_args()

    X_train, X_test, y_train, y_test = load_mnist()

    # assemble initial data
    initial_idx = np.random.choice(range(len(X_train)), size=args.n_initial, replace=False)
    X_initial = X_train[initial_idx]
    y_initial = y_train[initial_idx]

    # generate the pool
    # remove the initial data from the training dataset
    X_pool = np.delete(X_train, initial_idx, axis=0)
    y_pool = np.delete(y_train, initial_idx, axis=0)

    # create the classifier
    classifier = NeuralNetClassifier(Torch_Model,
                                     criterion=nn.CrossEntropyLoss,
                                     optimizer=torch.optim.Adam,
                                     train_split=None,
                                     max_epochs=args.max_epochs,
                                     verbose=1,
                                     device=device)

    # MC-dropout classifier, always trained on the first GPU
    classifier_mc = NeuralNetClassifier(Torch_Model,
                                        criterion=nn.CrossEntropyLoss,
                                        optimizer=torch.optim.Adam,
                                        train_split=None,
                                        max_epochs=args.max_epochs,
                                        callbacks=[EarlyStopping(monitor='train_loss', patience=3)],
                                        verbose=0,
                                        device='cuda:0')

    learners = {
        'uncertainty': ActiveLearner(estimator=classifier,
                                     query_strategy=uncertainty_sampling,
                                     X_training=X_initial, y_training=y_initial),
        'mc_entropy': ActiveLearner(estimator=classifier_mc,
                                    query_strategy=max_entropy_mc,
                                    X_training=X_initial, y_training=y_initial),
    }

    for name, learner in learners.items():
        Xp, yp = X_pool.copy(), y_pool.copy()
        print('{}: initial accuracy {:.4f}'.format(name, learner.score(X_test, y_test)))
        for idx in range(args.n_queries):
            print('Query no. %d' % (idx + 1))
            query_idx, query_instance = learner.query(Xp, n_instances=args.query_size)
            learner.teach(
                X=Xp[query_idx], y=yp[query_idx], only_new=False,
            )
            # remove queried instance from pool
            Xp = np.delete(Xp, query_idx, axis=0)
            yp = np.delete(yp, query_idx, axis=0)
            print('  accuracy after query: {:.4f}'.format(learner.score(X_test, y_test)))


if __name__ == '__main__':
    main()
