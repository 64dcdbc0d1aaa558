#!/usr/bin/env python3
# This file is covered by the LICENSE file in the root of this project.

import argparse
import subprocess
import datetime
import yaml
from shutil import copyfile
import os
import shutil
import __init__ as booger

from tasks.segmentation.modules.trainer import *

if __name__ == '__main__':
  parser = argparse.ArgumentParser("./train.py")
  parser.add_argument(
      '--cfg', '-c',
      type=str,
      required=True,
      help='Classification yaml cfg file. See /config for sample. No default!',
  )
  parser.add_argument(
      '--log', '-l',
      type=str,
      default=os.path.expanduser("~") + '/logs/' +
      datetime.datetime.now().strftime("%Y-%-m-%d-%H:%M") + '/',
      help='Directory to put the log data. Default: ~/logs/date+time'
  )
  parser.add_argument(
      '--path', '-p',
      type=str,
      required=False,
      default=None,
      help='Directory to get the trained model. If not passed, do from scratch!'
  )
  parser.add_argument(
      '--eval', '-e',
      dest='eval',
      default=False,
      action='store_true',
      help='Set to skip training and just evaluate the model.'
  )
  parser.add_argument(
      '--no_batchnorm', '-nb',
      dest='no_batchnorm',
      default=False,
      action='store_true',
      help='Set to block the batchnorm rolling averages (good for finetuning).'
  )
  FLAGS, unparsed = parser.parse_known_args()

  # print summary of what we will do
  print("----------")
  print("INTERFACE:")
  print("config yaml: ", FLAGS.cfg)
  print("log dir", FLAGS.log)
  print("model path", FLAGS.path)
  print("eval only", FLAGS.eval)
  print("No batchnorm", FLAGS.no_batchnorm)
  print("----------\n")
  print("Commit hash (training version): ", str(
      subprocess.check_output(['git', 'rev-parse', '--short', 'HEAD']).strip()))
  print("----------\n")

  # open arch config file
  try:
    print("Opening config file %s" % FLAGS.cfg)
    CFG = yaml.safe_load(open(FLAGS.cfg, 'r'))
  except Exception as e:
    print(e)
    print("Error opening yaml file.")
    quit()

  # create log folder
  try:
    if os.path.isdir(FLAGS.log):
      shutil.rmtree(FLAGS.log)
    os.makedirs(FLAGS.log)
  except Exception as e:
    print(e)
    print("Error creating log directory. Check permissions!")
    quit()

  # does model folder exist?
  if FLAGS.path is not None:
    if os.path.isdir(FLAGS.path):
      print("model folder exists! Using model from %s" % (FLAGS.path))
    else:
      print("model folder doesnt exist! Start with random weights...")
  else:
    print("No pretrained directory found.")

  # copy all files to log folder (to remember what we did, and make inference
  # easier). Also, standardize name to be able to open it later
  try:
    print("Copying files to %s for further reference." % FLAGS.log)
    copyfile(FLAGS.cfg, FLAGS.log + "/cfg.yaml")
  except Exception as e:
    print(e)
    print("Error copying files, check permissions. Exiting...")
    quit()

  # create trainer and start the training
  trainer = Trainer(CFG, FLAGS.log, FLAGS.path, FLAGS.eval, FLAGS.no_batchnorm)

  if FLAGS.eval:
    trainer.evaluate()
  else:
    trainer.train()
