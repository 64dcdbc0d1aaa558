import os
import pprint
import argparse
from tqdm import tqdm

import numpy as np
import pandas as pd
import h5py
import matplotlib.pyplot as plt

import torch
from torch.utils import data
from torch import nn
import torch.optim as optim
from torchvision.transforms import Compose, Normalize, Resize, InterpolationMode

import clip
from model import CLIP
from simple_tokenizer import SimpleTokenizer


class CXRDataset(data.Dataset):
    """Represents an abstract HDF5 dataset.

    Input params:
        img_path: Path to hdf5 file containing images.
        txt_path: Path to the csv file containing the radiology report impressions.
        column: Name of the csv column holding the text.
        transform: PyTorch transform to apply to every data instance (default=None).
    """
    def __init__(self, img_path, txt_path, column='report', size=None, transform=None):
        super().__init__()
        if size != None:
            self.img_dset = h5py.File(img_path, 'r')['cxr'][:size]
            self.txt_dset = pd.read_csv(txt_path)[column][:size]
        else:
            self.img_dset = h5py.File(img_path, 'r')['cxr']
            self.txt_dset = pd.read_csv(txt_path)[column]
        self.transform = transform

    def __len__(self):
        return len(self.txt_dset)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()

        img = self.img_dset[idx] # np array, (320, 320)
        img = np.expand_dims(img, axis=0)
        img = np.repeat(img, 3, axis=0)
        txt = self.txt_dset[idx] # python str
        if type(txt) == type(float("nan")): # capture the case of empty "Impression" sections
            txt = " "

        img = torch.from_numpy(img) # torch, (3, 320, 320)
        if self.transform:
            img = self.transform(img)
        sample = {'img': img, 'txt': txt }

        return sample


def load_data(cxr_filepath, txt_filepath, batch_size=4, column='report', pretrained=False, verbose=False):
    if torch.cuda.is_available():
        dev = "cuda:0"
        cuda_available = True
        print('Using CUDA.')
    else:
        dev = "cpu"
        cuda_available = False
        print('Using cpu.')

    device = torch.device(dev)

    if cuda_available:
        torch.cuda.set_device(device)

    if pretrained:
        input_resolution = 224
        transform = Compose([
            Normalize((101.48761, 101.48761, 101.48761), (83.43944, 83.43944, 83.43944)),
            Resize(input_resolution, interpolation=InterpolationMode.BICUBIC),
        ])
        print('Interpolation Mode: ', InterpolationMode.BICUBIC)
        print("Finished image transforms for pretrained model.")
    else:
        input_resolution = 320
        transform = Compose([
            Normalize((101.48761, 101.48761, 101.48761), (83.43944, 83.43944, 83.43944)),
        ])
        print("Finished image transforms for clip model.")

    torch_dset = CXRDataset(img_path=cxr_filepath,
                            txt_path=txt_filepath, column=column, transform=transform)

    if verbose:
        for i in range(len(torch_dset)):
            if i > 3:
                break
            sample = torch_dset[i]
            plt.imshow(sample['img'][0])
            plt.show()
            print(i, sample['img'].size(), sample['txt'])

    loader_params = {'batch_size':batch_size, 'shuffle': True, 'num_workers': 0}
    data_loader = data.DataLoader(torch_dset, **loader_params)
    return data_loader, device


def load_clip(model_path=None, pretrained=False, context_length=77):
    '''
    FUNCTION: load_clip
    -------------------------------
    This function loads in a model with the CLIP model
    architecture.

    args:
        * model_path (optional) - path to model weights that the model
        will be initialized with
        * pretrained (optional) - if True, will load the pretrained
        CLIP model
        * context_length (optional) - length of the maximum number of
        tokens that can be inputted into the CLIP model
    '''

    params = {
        'embed_dim':768,
        'image_resolution': 320,
        'vision_layers': 12,
        'vision_width': 768,
        'vision_patch_size': 16,
        'context_length': context_length, # length of caption
        'vocab_size': 49408,
        'transformer_width': 512,
        'transformer_heads': 8,
        'transformer_layers': 12
    }

    # set device
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    if pretrained:
        # load clip pre-trained model
        model, preprocess = clip.load("ViT-B/32", device=device, jit=False)
        print("Loaded in pretrained model.")
    else:
        model = CLIP(**params)
        print("Loaded in clip model.")

    # if a model_path is provided, load in weights to backbone
    if model_path != None:
        model.load_state_dict(torch.load(model_path, map_location=device))
    return model


def preprocess_text(texts, model):
#     if model.context_length is None:
#         model = model.module

    _tokenizer = SimpleTokenizer()
    sot_token = _tokenizer.encoder["<|startoftext|>"]
    eot_token = _tokenizer.encoder["<|endoftext|>"]
    all_tokens = [[sot_token] + _tokenizer.encode(text) + [eot_token] for text in texts]
    result = torch.zeros(len(all_tokens), model.context_length, dtype=torch.long)

    for i, tokens in enumerate(all_tokens):
        if len(tokens) > model.context_length:
            tokens = tokens[:model.context_length]
            tokens[model.context_length - 1] = eot_token
        result[i, :len(tokens)] = torch.tensor(tokens)
    return result


def make(config, cxr_filepath, txt_filepath, model_path=None):
    '''
    FUNCTION: make
    ---------------------------------
    This function makes the model, the data loader, loss and optimizer.

    args:
        * config - dict, configuration of experiment
        * cxr_filepath - string, filepath to chest x-ray images
        * txt_filepath - string, filepath to corresponding text reports
        * model_path - string, filepath to previously trained model
    '''
    pretrained = not config.random_init
    data_loader, device = load_data(cxr_filepath, txt_filepath, batch_size=config.batch_size,
                                    pretrained=pretrained, column="impression")
    model = load_clip(model_path=model_path, pretrained=pretrained, context_length=config.context_length)
    model.to(device)
    print('Model on Device.')

    # make the optimizer
    criterion = nn.CrossEntropyLoss().cuda()
    # todo: incorporate - torch.optim.lr_scheduler.CosineAnnealingLR
    if config.optimizer == "adam":
        optimizer = optim.AdamW(model.parameters(), lr=config.lr)
    elif config.optimizer == "sgd":
        optimizer = optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum)
    return model, data_loader, device, criterion, optimizer


def train(model, loader, device, criterion, optimizer, config):
    model_save_dir = os.path.join(config.save_dir, config.model_name)
    if not os.path.exists(model_save_dir):
        # Create a new folder if not exists
        os.makedirs(model_save_dir)

    # Run training
    total_batches = len(loader) * config.epochs
    example_ct = 0  # number of examples seen
    batch_ct = 0
    report_freq = config.log_interval
    highest_val_auc = 0 # save highest mean auc

    for epoch in range(config.epochs):
        running_loss = 0.0 # running loss over batch
        for data in tqdm(loader):
            # get the images
            images = data['img']

            texts = data['txt']
            texts = preprocess_text(texts, model)

            # perform step for a single batch
            loss = train_batch(images, texts, model, device, criterion, optimizer)
            example_ct += len(images)
            batch_ct += 1
            running_loss += loss.item()

            # Report metrics every `report_freq` batch
            if (batch_ct % report_freq) == 0:
                train_log(running_loss / report_freq, example_ct, epoch)
                running_loss = 0.0

            if (batch_ct % config.save_interval) == 0:
                model_path = os.path.join(model_save_dir, "checkpoint_{batch_ct}.pt".format(
                    batch_ct=str(batch_ct),
                ))
                print("Saved checkpoint to: ", model_path)
                save(model, model_path)


def train_batch(images, texts, model, device, criterion, optimizer):
    images, texts = images.to(device), texts.to(device)

    # Forward pass ➡
    logits_per_image, logits_per_text = model(images, texts)

    # Create labels
    batch_size = images.shape[0]
    labels = torch.arange(batch_size).to(device)

    # Compute loss
    loss_img = criterion(logits_per_image, labels)
    loss_txt = criterion(logits_per_text, labels)
    loss = (loss_img + loss_txt)/2 # avg. img and txt loss

    # Backward pass ⬅
    optimizer.zero_grad()
    loss.backward()

    # Step with optimizer
    optimizer.step()

    return loss


def train_log(loss, example_ct, epoch):
    loss = float(loss)
    print(f"Loss after " + str(example_ct).zfill(5) + f" examples: {loss:.3f}")


def save(model, path):
    torch.save(model.state_dict(), path)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cxr_filepath', type=str, default='data/cxr.h5',
                        help="Directory to load chest x-ray image data from.")
    parser.add_argument('--txt_filepath', type=str, default='data/mimic_impressions.csv',
                        help="Directory to load radiology report impressions text from.")
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--save_interval', type=int, default=100)
    parser.add_argument('--log_interval', type=int, default=10)
    parser.add_argument('--save_dir', type=str, default="checkpoints/", help="Directory to save the trained model.")
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--optimizer', type=str, default="sgd")
    parser.add_argument('--momentum', type=float, default=0.9)
    parser.add_argument('--context_length', type=int, default=77)
    parser.add_argument('--random_init', action='store_true')
    parser.add_argument('--model_name', type=str, default="pt-imp")
    args = parser.parse_args()
    return args


def model_pipeline(config, verbose=0):
    torch.manual_seed(config.seed)
    torch.cuda.manual_seed_all(config.seed)
    np.random.seed(config.seed)

    # make the model, data, and optimization problem
    model, data_loader, device, criterion, optimizer = make(config, config.cxr_filepath, config.txt_filepath)

    # and use them to train the model
    train(model, data_loader, device, criterion, optimizer, config)

    # save model
    model_path = os.path.join(config.save_dir, str(config.model_name), 'checkpoint.pt')
    save(model, model_path)

    if verbose:
        print(model)
    return model


if __name__ == "__main__":
    args = parse_args()
    model = model_pipeline(args)
