# Copyright 2020, Sophos Limited. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License").
#
# Global configuration for the SOREL-20M baseline models. Edit these values to
# match your environment before running train.py / evaluate.py.

# location of the meta.db sqlite file and the ember_features lmdb directory
db_path = '/home/ubuntu/SOREL/'

# training hyper-parameters
batch_size = 8192
epochs = 10

# number of dataloader worker processes; the lmdb reader is mostly IO bound
workers = 16

# device to train / evaluate on; the published models were trained on a single
# p3.2xlarge (V100)
device = 'cuda:0'

# timestamps used to split the data into train / validation / test
train_validation_split = 1547279640.0
validation_test_split = 1549313776.0

# names of the tags predicted by the multi-target model
tags = ["adware", "flooder", "ransomware", "dropper", "spyware", "packed",
        "crypto_miner", "file_infector", "installer", "worm", "downloader"]
