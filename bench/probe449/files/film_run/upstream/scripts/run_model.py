#!/usr/bin/env python3

# Copyright 2017-present, Facebook, Inc.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

import argparse
import ipdb as pdb
import json
import random
import shutil
import sys
import os
sys.path.insert(0, os.path.abspath('.'))

import torch
from torch.autograd import Variable
import torch.nn.functional as F
import torchvision
import numpy as np
import h5py
from scipy.misc import imread, imresize, imsave

import vr.utils as utils
import vr.programs
from vr.data import ClevrDataset, ClevrDataLoader
from vr.preprocess import tokenize, encode


parser = argparse.ArgumentParser()
parser.add_argument('--program_generator', default=None)
parser.add_argument('--execution_engine', default=None)
parser.add_argument('--baseline_model', default=None)
parser.add_argument('--model_type', default='FiLM')
parser.add_argument('--debug_every', default=float('inf'), type=float)
parser.add_argument('--use_gpu', default=1, type=int)

# For running on a preprocessed dataset
parser.add_argument('--input_question_h5', default=None)
parser.add_argument('--input_features_h5', default=None)

# This will override the vocab stored in the checkpoint;
# we need this to run CLEVR models on human data
parser.add_argument('--vocab_json', default=None)

# For running on a single example
parser.add_argument('--question', default=None)
parser.add_argument('--image', default='img/CLEVR_val_000017.png')
parser.add_argument('--cnn_model', default='resnet101')
parser.add_argument('--cnn_model_stage', default=3, type=int)
parser.add_argument('--image_width', default=224, type=int)
parser.add_argument('--image_height', default=224, type=int)
parser.add_argument('--enforce_clevr_vocab', default=1, type=int)

parser.add_argument('--batch_size', default=64, type=int)
parser.add_argument('--num_samples', default=None, type=int)
parser.add_argument('--num_last_words_shuffled', default=0, type=int)  # -1 for all shuffled
parser.add_argument('--family_split_file', default=None)

parser.add_argument('--sample_argmax', type=int, default=1)
parser.add_argument('--temperature', default=1.0, type=float)

# FiLM models only
parser.add_argument('--gamma_option', default='linear',
  choices=['linear', 'sigmoid', 'tanh', 'exp', 'relu', 'softplus'])
parser.add_argument('--gamma_scale', default=1, type=float)
parser.add_argument('--gamma_shift', default=0, type=float)
parser.add_argument('--gammas_from', default=None)  # Load gammas from file
parser.add_argument('--beta_option', default='linear',
  choices=['linear', 'sigmoid', 'tanh', 'exp', 'relu', 'softplus'])
parser.add_argument('--beta_scale', default=1, type=float)
parser.add_argument('--beta_shift', default=0, type=float)
parser.add_argument('--betas_from', default=None)  # Load betas from file

# If this is passed, then save all predictions to this file
parser.add_argument('--output_h5', default=None)
parser.add_argument('--output_preds', default=None)
parser.add_argument('--output_viz_dir', default='img/')
parser.add_argument('--output_program_stats_dir', default=None)

grads = {}
programs = {}  # NOTE: Useful for zero-shot program manipulation when in debug mode


def main(args):
  print()
  model = None
  if args.baseline_model is not None:
    print('Loading baseline model from ', args.baseline_model)
    model, _ = utils.load_baseline(args.baseline_model)
    if args.vocab_json is not None:
      new_vocab = utils.load_vocab(args.vocab_json)
      model.rnn.expand_vocab(new_vocab['question_token_to_idx'])
  elif args.program_generator is not None and args.execution_engine is not None:
    pg, _ = utils.load_program_generator(args.program_generator, args.model_type)
    ee, _ = utils.load_execution_engine(
      args.execution_engine, verbose=False, model_type=args.model_type)
    if args.vocab_json is not None:
      new_vocab = utils.load_vocab(args.vocab_json)
      pg.expand_encoder_vocab(new_vocab['question_token_to_idx'])
    model = (pg, ee)
  else:
    print('Must give either --baseline_model or --program_generator and --execution_engine')
    return

  dtype = torch.FloatTensor
  if args.use_gpu == 1:
    dtype = torch.cuda.FloatTensor
  if args.question is not None and args.image is not None:
    run_single_example(args, model, dtype, args.question)
  # Interactive mode
  elif args.image is not None and args.input_question_h5 is None and args.input_features_h5 is None:
    feats_var = extract_image_features(args, dtype)
    print(colored('Ask me something!', 'cyan'))
    while True:
      # Get user question
      question_raw = input(">>> ")
      run_single_example(args, model, dtype, question_raw, feats_var)
  else:
    vocab = load_vocab(args)
    loader_kwargs = {
      'question_h5': args.input_question_h5,
      'feature_h5': args.input_features_h5,
      'vocab': vocab,
      'batch_size': args.batch_size,
    }
    if args.num_samples is not None and args.num_samples > 0:
      loader_kwargs['max_samples'] = args.num_samples
    if args.family_split_file is not None:
      with open(args.family_split_file, 'r') as f:
        loader_kwargs['question_families'] = json.load(f)
    with ClevrDataLoader(**loader_kwargs) as loader:
      run_batch(args, model, dtype, loader)


def extract_image_features(args, dtype):
  # Build the CNN to use for feature extraction
  print('Extracting image features...')
  cnn = build_cnn(args, dtype)

  # Load and preprocess the image
  img_size = (args.image_height, args.image_width)
  img = imread(args.image, mode='RGB')
  img = imresize(img, img_size, interp='bicubic')
  img = img.transpose(2, 0, 1)[None]
  mean = np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)
  std = np.array([0.229, 0.224, 0.224]).reshape(1, 3, 1, 1)
  img = (img / 255.0 - mean) / std

  # Use CNN to extract features for the image
  img_var = Variable(torch.FloatTensor(img).type(dtype), volatile=False, requires_grad=True)
  feats_var = cnn(img_var)
  return feats_var


def run_single_example(args, model, dtype, question_raw, feats_var=None):
  interactive = feats_var is not None
  if not interactive:
    feats_var = extract_image_features(args, dtype)

  # Tokenize the question
  vocab = load_vocab(args)
  question_tokens = tokenize(question_raw,
                      punct_to_keep=[';', ','],
                      punct_to_remove=['?', '.'])
  if args.enforce_clevr_vocab == 1:
    for word in question_tokens:
      if word not in vocab['question_token_to_idx']:
        print(colored('No one taught me what "%s" means :( Try me again!' % (word), 'magenta'))
        return
  question_encoded = encode(question_tokens,
                       vocab['question_token_to_idx'],
                       allow_unk=True)
  question_encoded = torch.LongTensor(question_encoded).view(1, -1)
  question_encoded = question_encoded.type(dtype).long()
  question_var = Variable(question_encoded, volatile=False)

  # Run the model
  scores = None
  predicted_program = None
  if type(model) is tuple:
    pg, ee = model
    pg.type(dtype)
    pg.eval()
    ee.type(dtype)
    ee.eval()
    if args.model_type == 'FiLM':
      predicted_program = pg(question_var)
    else:
      predicted_program = pg.reinforce_sample(
                            question_var,
                            temperature=args.temperature,
                            argmax=(args.sample_argmax == 1))
    scores = ee(feats_var, predicted_program, save_activations=True)
  else:
    model.type(dtype)
    scores = model(question_var, feats_var)

  # Print results
  predicted_probs = scores.data.cpu()
  _, predicted_answer_idx = predicted_probs[0].max(dim=0)
  predicted_probs = F.softmax(Variable(predicted_probs[0]), dim=0).data
  answer = vocab['answer_idx_to_token'][predicted_answer_idx.item()]

  print(colored('Question: "%s"' % question_raw, 'cyan'))
  print(colored(str(answer), 'cyan'))


def build_cnn(args, dtype):
  if not hasattr(torchvision.models, args.cnn_model):
    raise ValueError('Invalid model "%s"' % args.cnn_model)
  if not 'resnet' in args.cnn_model:
    raise ValueError('Feature extraction only supports ResNets')
  whole_cnn = getattr(torchvision.models, args.cnn_model)(pretrained=True)
  layers = [
    whole_cnn.conv1,
    whole_cnn.bn1,
    whole_cnn.relu,
    whole_cnn.maxpool,
  ]
  for i in range(args.cnn_model_stage):
    name = 'layer%d' % (i + 1)
    layers.append(getattr(whole_cnn, name))
  cnn = torch.nn.Sequential(*layers)
  cnn.type(dtype)
  cnn.eval()
  return cnn


def run_batch(args, model, dtype, loader):
  if type(model) is tuple:
    pg, ee = model
    run_our_model_batch(args, pg, ee, loader, dtype)
  else:
    run_baseline_batch(args, model, loader, dtype)


def run_baseline_batch(args, model, loader, dtype):
  model.type(dtype)
  model.eval()

  all_scores, all_probs = [], []
  num_correct, num_samples = 0, 0
  for batch in loader:
    questions, images, feats, answers, programs, program_lists = batch

    questions_var = Variable(questions.type(dtype).long(), volatile=True)
    feats_var = Variable(feats.type(dtype), volatile=True)
    scores = model(questions_var, feats_var)
    probs = F.softmax(scores, dim=1)

    _, preds = scores.data.cpu().max(1)
    all_scores.append(scores.data.cpu().clone())
    all_probs.append(probs.data.cpu().clone())

    num_correct += (preds == answers).sum()
    num_samples += preds.size(0)
    print('Ran %d samples' % num_samples)

  acc = float(num_correct) / num_samples
  print('Got %d / %d = %.2f correct' % (num_correct, num_samples, 100 * acc))


def run_our_model_batch(args, program_generator, execution_engine, loader, dtype):
  program_generator.type(dtype)
  program_generator.eval()
  execution_engine.type(dtype)
  execution_engine.eval()

  all_scores, all_programs = [], []
  all_probs = []
  all_preds = []
  num_correct, num_samples = 0, 0

  q_types = []
  for batch in loader:
    questions, images, feats, answers, programs, program_lists = batch
    if isinstance(questions, list):
      questions_var = Variable(questions[0].type(dtype).long(), volatile=True)
      q_types += [questions[1].cpu().numpy()]
    else:
      questions_var = Variable(questions.type(dtype).long(), volatile=True)
    feats_var = Variable(feats.type(dtype), volatile=True)
    if args.model_type == 'FiLM':
      programs_pred = program_generator(questions_var)
    else:
      programs_pred = program_generator.reinforce_sample(
        questions_var,
        temperature=args.temperature,
        argmax=(args.sample_argmax == 1))
    scores = execution_engine(feats_var, programs_pred)
    probs = F.softmax(scores, dim=1)

    _, preds = scores.data.cpu().max(1)
    all_programs.append(programs_pred.data.cpu().clone())
    all_scores.append(scores.data.cpu().clone())
    all_probs.append(probs.data.cpu().clone())
    all_preds.append(preds.cpu().clone())
    if answers[0] is not None:
      num_correct += (preds == answers).sum()
    num_samples += preds.size(0)

  acc = float(num_correct) / num_samples
  print('Got %d / %d = %.2f correct' % (num_correct, num_samples, 100 * acc))

  output_path = args.output_h5
  if output_path is not None:
    print('Writing output to "%s"' % output_path)
    with h5py.File(output_path, 'w') as f:
      f.create_dataset('scores', data=torch.cat(all_scores, 0).numpy())
      f.create_dataset('probs', data=torch.cat(all_probs, 0).numpy())
      f.create_dataset('predicted_programs', data=torch.cat(all_programs, 0).numpy())
    print('Wrote output to %s' % output_path)


def load_vocab(args):
  path = None
  if args.baseline_model is not None:
    path = args.baseline_model
  elif args.program_generator is not None:
    path = args.program_generator
  elif args.execution_engine is not None:
    path = args.execution_engine
  return utils.load_cpu(path)['vocab']


from termcolor import colored

if __name__ == '__main__':
  args = parser.parse_args()
  main(args)
