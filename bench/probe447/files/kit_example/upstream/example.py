import os
import time

# Pin the run to a single GPU before torch is imported
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import numpy as np
import torch

from Kitsune import Kitsune

##############################################################################
# Kitsune a lightweight online network intrusion detection system based on an ensemble of autoencoders (kitNET).
# For more information and citation, please see our NDSS'18 paper: Kitsune: An Ensemble of Autoencoders for Online Network Intrusion Detection

# This script demonstrates Kitsune's ability to incrementally learn, and detect anomalies in recorded a pcap of the Mirai Malware.
# The demo involves an m-by-n dataset with n=115 dimensions (features), and m=100,000 observations.
# Each observation is a snapshot of the network's state in terms of incremental damped statistics (see the NDSS paper for more details)

# The runtimes presented in the paper, are based on the C++ implimentation (roughly 100x faster than the python implimentation)
# This fork additionally batches the execute phase on the GPU (see --batch below).
###################  Last Tested with Anaconda 3.10 #######################

# Load Mirai pcap (a recording of the Mirai botnet malware being activated)
# The first 70,000 observations are clean...
print("Unzipping Sample Capture...")
import zipfile

with zipfile.ZipFile("mirai.zip", "r") as zip_ref:
    zip_ref.extractall()


# File location
path = "mirai.pcap"  # the pcap, pcapng, or tsv file to process.
packet_limit = np.inf  # the number of packets to process

# KitNET params:
maxAE = 10  # maximum size for any autoencoder in the ensemble layer
FMgrace = 5000  # the number of instances taken to learn the feature mapping (the ensemble's architecture)
ADgrace = 50000  # the number of instances used to train the anomaly detector (ensemble itself)
batch = 512  # execute-phase batch size

use_gpu = torch.cuda.is_available()
device = "cuda:0" if use_gpu else "cpu"

# Build Kitsune
K = Kitsune(path, packet_limit, maxAE, FMgrace, ADgrace, batch_size=batch, device=device)

print("Running Kitsune on", device)
RMSEs = []
i = 0
start = time.time()
# Here we process (train/execute) each individual packet.
# In this way, each observation is discarded after performing process() method.
while i < FMgrace + ADgrace + 1:
    i += 1
    if i % 1000 == 0:
        print(i)
    rmse = K.proc_next_packet()
    if rmse == -1:
        break
    RMSEs.append(rmse)
stop = time.time()
print("Training complete. Time elapsed: " + str(stop - start))

# Execute phase: batched scoring on the accelerator
if use_gpu:
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
t0 = time.time()
while True:
    scores = K.proc_batch()
    if scores is None:
        break
    RMSEs.extend(scores.tolist())
    i += len(scores)
    if i % 10240 < batch:
        print(i)
if use_gpu:
    end_evt.record()
    torch.cuda.synchronize()
    print("Execute phase device time: {:.1f} ms".format(start_evt.elapsed_time(end_evt)))
    print("Peak GPU memory: {:.1f} MB".format(torch.cuda.max_memory_allocated() / 2 ** 20))
print("Execute phase wall time: " + str(time.time() - t0))

np.save("mirai_rmse.npy", np.asarray(RMSEs))

# Here we demonstrate how one can fit the RMSE scores to a log-normal distribution (useful for finding/setting a cutoff threshold \phi)
from scipy.stats import norm

benignSample = np.log(RMSEs[FMgrace + ADgrace + 1:100000])
logProbs = norm.logsf(np.log(RMSEs), np.mean(benignSample), np.std(benignSample))

# plot the RMSE anomaly scores
print("Plotting results")
from matplotlib import pyplot as plt
from matplotlib import cm

plt.figure(figsize=(10, 5))
fig = plt.scatter(range(FMgrace + ADgrace + 1, len(RMSEs)), RMSEs[FMgrace + ADgrace + 1:], s=0.1,
                  c=logProbs[FMgrace + ADgrace + 1:], cmap='RdYlGn')
plt.yscale("log")
plt.title("Anomaly Scores from Kitsune's Execution Phase")
plt.ylabel("RMSE (log scaled)")
plt.xlabel("Time elapsed [min]")
figbar = plt.colorbar()
figbar.ax.set_ylabel('Log Probability\n ', rotation=270)
plt.savefig("mirai_rmse.png", dpi=150)
plt.show()
