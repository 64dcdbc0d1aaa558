import subprocess
import numpy as np
import os
import sys
import pandas as pd
from PIL import Image
import h5py
import matplotlib.pyplot as plt
from typing import List, Tuple, Optional
from pathlib import Path

import torch
from torch.utils import data
from tqdm.notebook import tqdm
import torch.nn as nn
from torchvision.transforms import Compose, Normalize, Resize, InterpolationMode

import sklearn
from sklearn.metrics import confusion_matrix, accuracy_score, roc_auc_score, roc_curve, auc
from sklearn.metrics import average_precision_score

import clip
from model import CLIP
from eval import evaluate, plot_roc, accuracy, sigmoid, bootstrap, compute_cis

CXR_FILEPATH = '../../project-files/data/test_cxr.h5'
FINAL_LABEL_PATH = '../../project-files/data/final_paths.csv'

# all evaluation runs on the first visible GPU when there is one
device = "cuda" if torch.cuda.is_available() else "cpu"


class CXRTestDataset(torch.utils.data.Dataset):
    """Represents an abstract HDF5 dataset.

    Input params:
        img_path: Path to hdf5 file containing images.
        label_path: Path to file containing labels
        transform: PyTorch transform to apply to every data instance (default=None).
    """
    def __init__(
        self,
        img_path: str,
        transform = None,
    ):
        super().__init__()
        self.img_dset = h5py.File(img_path, 'r')['cxr']
        self.transform = transform

    def __len__(self):
        return len(self.img_dset)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()

        img = self.img_dset[idx] # np array, (320, 320)
        img = np.expand_dims(img, axis=0)
        img = np.repeat(img, 3, axis=0)
        img = torch.from_numpy(img) # torch, (3, 320, 320)

        if self.transform:
            img = self.transform(img)

        sample = {'img': img}

        return sample


def load_clip(model_path, pretrained=False, context_length=77):
    """
    FUNCTION: load_clip
    ---------------------------------
    """
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if pretrained is False:
        # use new model params
        params = {
            'embed_dim':768,
            'image_resolution': 320,
            'vision_layers': 12,
            'vision_width': 768,
            'vision_patch_size': 16,
            'context_length': context_length,
            'vocab_size': 49408,
            'transformer_width': 512,
            'transformer_heads': 8,
            'transformer_layers': 12
        }

        model = CLIP(**params)
    else:
        model, preprocess = clip.load("ViT-B/32", device=device, jit=False)
    try:
        model.load_state_dict(torch.load(model_path, map_location=device))
    except:
        print("Argument error. Set pretrained = True.", sys.exc_info()[0])
        raise
    return model


def zeroshot_classifier(classnames, templates, model, context_length=77):
    """
    FUNCTION: zeroshot_classifier
    -------------------------------------
    This function outputs the weights for each of the classes based on the
    output of the trained clip model text transformer.

    args:
    * classnames - list, classes to predict
    * templates - list, templates to input into model. If using
    positive and negative templates, can input a list of two strings.
    * model - trained clip model
    * context_length (optional) - int, max number of tokens of text inputted into the model.

    Returns PyTorch Tensor, output of the text encoder given templates.
    """
    with torch.no_grad():
        zeroshot_weights = []
        # compute embedding through model for each class
        for classname in tqdm(classnames):
            texts = [template.format(classname) for template in templates] # format with class
            texts = clip.tokenize(texts, context_length=context_length).to(device) # tokenize
            class_embeddings = model.encode_text(texts) # embed with text encoder

            # normalize class_embeddings
            class_embeddings /= class_embeddings.norm(dim=-1, keepdim=True)
            # average over templates
            class_embedding = class_embeddings.mean(dim=0)
            # norm over new averaged templates
            class_embedding /= class_embedding.norm()
            zeroshot_weights.append(class_embedding)
        zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()
    return zeroshot_weights


def predict(loader, model, zeroshot_weights, softmax_eval=True, verbose=0):
    """
    FUNCTION: predict
    ---------------------------------
    This function runs the cxr images through the model
    and computes the cosine similarities between the images
    and the text embeddings.

    args:
        * loader -  PyTorch data loader, loads in cxr images
        * model - PyTorch model, trained clip model
        * zeroshot_weights - PyTorch Tensor, outputs of text encoder for labels
        * softmax_eval (optional) - Use +/- softmax method for evaluation
        * verbose (optional) - bool, If True, will print out intermediate tensor values for debugging.

    Returns numpy array, predictions on all test data samples.
    """
    y_pred = []
    with torch.no_grad():
        for i, data in enumerate(tqdm(loader)):
            images = data['img'].to(device)

            # predict
            image_features = model.encode_image(images)
            image_features /= image_features.norm(dim=-1, keepdim=True) # (1, 768)

            # obtain logits
            logits = image_features @ zeroshot_weights # (1, num_classes)
            logits = np.squeeze(logits.cpu().numpy(), axis=0) # (num_classes,)

            if softmax_eval is False:
                norm_logits = (logits - logits.mean()) / (logits.std())
                logits = sigmoid(norm_logits)

            y_pred.append(logits)

            if verbose:
                plt.imshow(images[0][0].cpu())
                plt.show()
                print('images: ', images)
                print('images size: ', images.size())

                print('image_features size: ', image_features.size())
                print('logits: ', logits)
                print('logits size: ', logits.size())

    y_pred = np.array(y_pred)
    return np.array(y_pred)


def run_single_prediction(cxr_labels, template, model, loader, softmax_eval=True, context_length=77):
    """
    FUNCTION: run_single_prediction
    --------------------------------------
    This function will make probability predictions for a single template
    (i.e. "has {}").
    """
    cxr_phrase = [template]
    zeroshot_weights = zeroshot_classifier(cxr_labels, cxr_phrase, model, context_length=context_length)
    y_pred = predict(loader, model, zeroshot_weights, softmax_eval=softmax_eval)
    return y_pred


def process_alt_labels(alt_labels_dict, cxr_labels):
    """
        Process alt labels and return relevant info. If `alt_labels_dict` is
        None, return None.

        Returns:
        alt_label_list : list
            List of all alternative labels
        alt_label_idx_map : dict
            Maps alt label to idx of original label in cxr_labels
            Needed to access correct column during evaluation
    """
    if alt_labels_dict is None:
        return None, None

    def get_inverse_labels(labels_alt_map: dict):
        """
        Returns dict mapping alternative label back to actual label.
        Used for reference during evaluation.
        """
        inverse_labels = {}
        for main in labels_alt_map:
            inverse_labels[main] = main # adds self to list of alt labels
            for alt in labels_alt_map[main]:
                inverse_labels[alt] = main
        return inverse_labels

    inv_labels_dict = get_inverse_labels(alt_labels_dict)
    alt_label_list = [w for w in inv_labels_dict.keys()]

    # create index map
    index_map = dict()
    for i, label in enumerate(cxr_labels):
        index_map[label] = i

    # make map to go from alt label directly to index
    alt_label_idx_map = dict()
    for alt_label in alt_label_list:
        alt_label_idx_map[alt_label] = index_map[inv_labels_dict[alt_label]]

    return alt_label_list, alt_label_idx_map


def run_softmax_eval(model, loader, eval_labels: list, pair_template: tuple, context_length: int = 77):
    """
    Run softmax evaluation to obtain a single prediction from the model.
    """
     # get pos and neg phrases
    pos = pair_template[0]
    neg = pair_template[1]

    # get pos and neg predictions, (num_samples, num_classes)
    pos_pred = run_single_prediction(eval_labels, pos, model, loader,
                                     softmax_eval=True, context_length=context_length)
    neg_pred = run_single_prediction(eval_labels, neg, model, loader,
                                     softmax_eval=True, context_length=context_length)

    # compute probabilities with softmax
    sum_pred = np.exp(pos_pred) + np.exp(neg_pred)
    y_pred = np.exp(pos_pred) / sum_pred
    return y_pred


def make_true_labels(
    cxr_true_labels_path: str,
    cxr_labels: List[str],
    cutlabels: bool = True
):
    """
    Loads in data containing the true binary labels
    for each pathology in `cxr_labels` for all samples. This
    is used for evaluation of model performance.
    """
    # create ground truth labels
    full_labels = pd.read_csv(cxr_true_labels_path)
    if cutlabels:
        full_labels = full_labels.loc[:, cxr_labels]
    else:
        full_labels.drop(full_labels.columns[0], axis=1, inplace=True)

    y_true = full_labels.to_numpy()
    return y_true


def make(
    model_path: str,
    cxr_filepath: str,
    pretrained: bool = True,
    context_length: bool = 77,
):
    """
    FUNCTION: make
    -------------------------------------------
    This function makes the model, the data loader, and the ground truth labels.
    """
    # load model
    model = load_clip(
        model_path=model_path,
        pretrained=pretrained,
        context_length=context_length
    )

    # load data
    transformations = [
        # means computed from sample in `cxr_stats` notebook
        Normalize((101.48761, 101.48761, 101.48761), (83.43944, 83.43944, 83.43944)),
    ]
    # if using CLIP pretrained model
    if pretrained:
        # resize to input resolution of pretrained clip model
        input_resolution = 224
        transformations.append(Resize(input_resolution, interpolation=InterpolationMode.BICUBIC))
    transform = Compose(transformations)

    # create dataset
    torch_dset = CXRTestDataset(
        img_path=cxr_filepath,
        transform=transform,
    )
    loader = torch.utils.data.DataLoader(torch_dset, shuffle=False)

    return model, loader


## Run the model on the data set using ensembled models
def ensemble_models(
    model_paths: List[str],
    cxr_filepath: str,
    cxr_labels: List[str],
    cxr_pair_template: Tuple[str],
    cache_dir: str = None,
    save_name: str = None,
) -> Tuple[List[np.ndarray], np.ndarray]:
    """
    Given a list of `model_paths`, ensemble model and return
    predictions. Caches predictions at `cache_dir` if location provided.

    Returns a list of each model's predictions and the averaged
    set of predictions.
    """

    predictions = []
    model_paths = sorted(model_paths) # ensure consistency of
    for path in model_paths: # for each model
        model_name = Path(path).stem

        # load in model and `torch.DataLoader`
        model, loader = make(
            model_path=path,
            cxr_filepath=cxr_filepath,
        )

        # path to the cached prediction
        if cache_dir is not None:
            if save_name is not None:
                cache_path = Path(cache_dir) / f"{save_name}_{model_name}.npy"
            else:
                cache_path = Path(cache_dir) / f"{model_name}.npy"

        # if prediction already cached, don't recompute prediction
        if cache_dir is not None and os.path.exists(cache_path):
            print("Loading cached prediction for {}".format(model_name))
            y_pred = np.load(cache_path)
        else: # cached prediction not found, compute preds
            print("Inferring model {}".format(path))
            y_pred = run_softmax_eval(model, loader, cxr_labels, cxr_pair_template)
            if cache_dir is not None:
                Path(cache_dir).mkdir(exist_ok=True, parents=True)
                np.save(file=cache_path, arr=y_pred)
        predictions.append(y_pred)

        # free GPU memory before loading the next checkpoint of the ensemble
        del model
        torch.cuda.empty_cache()

    # compute average predictions
    y_pred_avg = np.mean(predictions, axis=0)

    return predictions, y_pred_avg


def run_zero_shot(cxr_labels, cxr_templates, model_path, cxr_filepath, final_label_path, alt_labels_dict: dict = None, softmax_eval = True, context_length=77, pretrained: bool = False, use_bootstrap=True, cutlabels=True):
    """
    FUNCTION: run_zero_shot
    --------------------------------------
    This function is the main function to run the zero-shot pipeline given a dataset,
    labels, templates for those labels, ground truth labels, and config parameters.
    """
    np.random.seed(97)
    # make the model, data loader, and ground truth labels
    model, loader = make(
        model_path=model_path,
        cxr_filepath=cxr_filepath,
        pretrained=pretrained,
        context_length=context_length
    )

    y_true = make_true_labels(
        cxr_true_labels_path=final_label_path,
        cxr_labels=cxr_labels,
        cutlabels=cutlabels,
    )

    # run multiple models
    if softmax_eval:
        y_pred = run_softmax_eval(model, loader, cxr_labels, cxr_templates, context_length=context_length)

    else:
        # get predictions of the model (single template)
        y_pred = run_single_prediction(cxr_labels, cxr_templates[0], model, loader,
                                       softmax_eval=softmax_eval, context_length=context_length)

    # read labels
    if use_bootstrap:
        # compute bootstrap stats
        boot_stats, intervals = bootstrap(y_pred, y_true, cxr_labels)
        return boot_stats, intervals
    else:
        # evaluate model, no bootstrap
        cxr_results: pd.DataFrame = evaluate(y_pred, y_true, cxr_labels) # eval on full test datset
        return cxr_results, y_pred
