import os
import torch
import torch.nn.functional as F
from tqdm import tqdm
import logging

from torchmeta.datasets.helpers import omniglot, miniimagenet
from torchmeta.utils.data import BatchMetaDataLoader
from torchmeta.utils.gradient_based import gradient_update_parameters

from model import ConvolutionalNeuralNetwork
from utils import get_accuracy

logger = logging.getLogger(__name__)


def get_dataset(args):
    if args.dataset == 'omniglot':
        dataset = omniglot(args.folder,
                           shots=args.num_shots,
                           ways=args.num_ways,
                           shuffle=True,
                           test_shots=15,
                           meta_train=True,
                           download=args.download)
        in_channels, hidden_size = 1, args.hidden_size
    elif args.dataset == 'miniimagenet':
        dataset = miniimagenet(args.folder,
                               shots=args.num_shots,
                               ways=args.num_ways,
                               shuffle=True,
                               test_shots=15,
                               meta_train=True,
                               download=args.download)
        in_channels, hidden_size = 3, args.hidden_size
    else:
        raise NotImplementedError('Unknown dataset `{0}`.'.format(args.dataset))
    return dataset, in_channels, hidden_size


def train(args):
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)

    dataset, in_channels, hidden_size = get_dataset(args)
    dataloader = BatchMetaDataLoader(dataset,
                                     batch_size=args.batch_size,
                                     shuffle=True,
                                     num_workers=args.num_workers,
                                     pin_memory=True)

    model = ConvolutionalNeuralNetwork(in_channels,
                                       args.num_ways,
                                       hidden_size=hidden_size)
    model.to(device=args.device)
    model.train()
    meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    # Training loop
    with tqdm(dataloader, total=args.num_batches) as pbar:
        for batch_idx, batch in enumerate(pbar):
            model.zero_grad()

            train_inputs, train_targets = batch['train']
            train_inputs = train_inputs.to(device=args.device)
            train_targets = train_targets.to(device=args.device)

            test_inputs, test_targets = batch['test']
            test_inputs = test_inputs.to(device=args.device)
            test_targets = test_targets.to(device=args.device)

            outer_loss = torch.tensor(0., device=args.device)
            accuracy = torch.tensor(0., device=args.device)
            for task_idx, (train_input, train_target, test_input,
                    test_target) in enumerate(zip(train_inputs, train_targets,
                    test_inputs, test_targets)):
                train_logit = model(train_input)
                inner_loss = F.cross_entropy(train_logit, train_target)

                model.zero_grad()
                params = gradient_update_parameters(model,
                                                    inner_loss,
                                                    step_size=args.step_size,
                                                    first_order=args.first_order)

                test_logit = model(test_input, params=params)
                outer_loss += F.cross_entropy(test_logit, test_target)

                with torch.no_grad():
                    accuracy += get_accuracy(test_logit, test_target)

            outer_loss.div_(args.batch_size)
            accuracy.div_(args.batch_size)

            outer_loss.backward()
            meta_optimizer.step()

            pbar.set_postfix(accuracy='{0:.4f}'.format(accuracy.item()))
            if batch_idx >= args.num_batches:
                break

    # Save model
    if args.output_folder is not None:
        filename = os.path.join(args.output_folder, 'maml_omniglot_'
            '{0}shot_{1}way.th'.format(args.num_shots, args.num_ways))
        with open(filename, 'wb') as f:
            state_dict = model.state_dict()
            torch.save(state_dict, f)


def evaluate(args, checkpoint):
    """Meta-test a trained model on the meta-test split. The checkpoint is
    a state dict written by `train` above (on the training GPU)."""
    dataset, in_channels, hidden_size = get_dataset(args)
    model = ConvolutionalNeuralNetwork(in_channels,
                                       args.num_ways,
                                       hidden_size=hidden_size)
    with open(checkpoint, 'rb') as f:
        model.load_state_dict(torch.load(f, map_location=args.device))
    model.to(device=args.device)

    dataloader = BatchMetaDataLoader(dataset,
                                     batch_size=args.batch_size,
                                     shuffle=False,
                                     num_workers=args.num_workers,
                                     pin_memory=(args.device.type == 'cuda'))
    accuracies = []
    for batch_idx, batch in enumerate(dataloader):
        train_inputs, train_targets = [t.to(args.device) for t in batch['train']]
        test_inputs, test_targets = [t.to(args.device) for t in batch['test']]
        for train_input, train_target, test_input, test_target in zip(
                train_inputs, train_targets, test_inputs, test_targets):
            inner_loss = F.cross_entropy(model(train_input), train_target)
            model.zero_grad()
            params = gradient_update_parameters(model, inner_loss,
                                                step_size=args.step_size,
                                                first_order=True)
            with torch.no_grad():
                test_logit = model(test_input, params=params)
                accuracies.append(get_accuracy(test_logit, test_target).item())
        if batch_idx >= args.num_batches:
            break
    logger.info('Meta-test accuracy: %.4f', sum(accuracies) / len(accuracies))
    return accuracies


if __name__ == '__main__':
    import argparse

    parser = argparse.ArgumentParser('Model-Agnostic Meta-Learning (MAML)')

    parser.add_argument('folder', type=str,
        help='Path to the folder the data is downloaded to.')
    parser.add_argument('--dataset', type=str, default='omniglot',
        choices=['omniglot', 'miniimagenet'],
        help='Name of the dataset (default: omniglot).')
    parser.add_argument('--num-shots', type=int, default=5,
        help='Number of examples per class (k in "k-shot", default: 5).')
    parser.add_argument('--num-ways', type=int, default=5,
        help='Number of classes per task (N in "N-way", default: 5).')

    parser.add_argument('--first-order', action='store_true',
        help='Use the first-order approximation of MAML.')
    parser.add_argument('--step-size', type=float, default=0.4,
        help='Step-size for the gradient step for adaptation (default: 0.4).')
    parser.add_argument('--hidden-size', type=int, default=64,
        help='Number of channels for each convolutional layer (default: 64).')

    parser.add_argument('--output-folder', type=str, default=None,
        help='Path to the output folder for saving the model (optional).')
    parser.add_argument('--batch-size', type=int, default=16,
        help='Number of tasks in a mini-batch of tasks (default: 16).')
    parser.add_argument('--num-batches', type=int, default=100,
        help='Number of batches the model is trained over (default: 100).')
    parser.add_argument('--num-workers', type=int, default=1,
        help='Number of workers for data loading (default: 1).')
    parser.add_argument('--download', action='store_true',
        help='Download the Omniglot dataset in the data folder.')
    parser.add_argument('--use-cuda', action='store_true',
        help='Use CUDA if available.')
    parser.add_argument('--verbose', action='store_true')
    parser.add_argument('--eval-checkpoint', type=str, default=None,
        help='If given, skip training and meta-test this checkpoint.')

    args = parser.parse_args()
    args.device = torch.device('cuda' if args.use_cuda
        and torch.cuda.is_available() else 'cpu')

    if args.eval_checkpoint is not None:
        evaluate(args, args.eval_checkpoint)
    else:
        train(args)
