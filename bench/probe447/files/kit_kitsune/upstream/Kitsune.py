from FeatureExtractor import *
from KitNET.KitNET import KitNET

# MIT License
#
# Copyright (c) 2018 Yisroel mirsky
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.


class Kitsune:
    """
    Kitsune: an ensemble of autoencoders for online network intrusion detection.

    This fork runs the KitNET ensemble with PyTorch (optionally on an
    accelerator) and processes packets in mini-batches during execution to
    amortise kernel launch overhead. Feature extraction is unchanged and stays on
    the CPU.
    """

    def __init__(self, file_path, limit, max_autoencoder_size=10, FM_grace_period=None, AD_grace_period=10000,
                 learning_rate=0.1, hidden_ratio=0.75, batch_size=256, device=None):
        # init packet feature extractor (AfterImage)
        self.FE = FE(file_path, limit)

        # init Kitnet
        self.AnomDetector = KitNET(self.FE.get_num_features(), max_autoencoder_size, FM_grace_period,
                                   AD_grace_period, learning_rate, hidden_ratio, device=device)
        self.batch_size = batch_size
        self._pending = []

    def proc_next_packet(self):
        # create feature vector
        x = self.FE.get_next_vector()
        if len(x) == 0:
            return -1  # Error or no packets left

        # process KitNET
        return self.AnomDetector.process(x)  # will train during the grace periods, then execute on all the rest.

    def proc_batch(self):
        """Collect up to batch_size vectors and score them together (execute phase only)."""
        xs = []
        while len(xs) < self.batch_size:
            x = self.FE.get_next_vector()
            if len(x) == 0:
                break
            xs.append(x)
        if not xs:
            return None
        return self.AnomDetector.execute_batch(np.stack(xs))
