# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
#   accelerator: GPU
#   colab:
#     gpuType: T4
# ---

# %% [markdown]
# # Automatic Model Training (openWakeWord)
#
# This notebook trains a custom wake word model end to end with synthetic speech:
#
# 1. generate positive and adversarial-negative clips with Piper TTS,
# 2. augment them with room impulse responses and background noise,
# 3. compute openWakeWord features and train a small DNN,
# 4. export the model to ONNX and TFLite.
#
# It is meant for Google Colab with a GPU runtime (Runtime > Change runtime type > T4 GPU).
# A full run with the default settings takes about an hour on a T4.

# %%
# @title Environment setup { display-mode: "form" }
import os
import subprocess
import sys


def sh(cmd):
    """Run a shell command, echoing it like a notebook `!` cell would."""
    print(f"$ {cmd}")
    subprocess.run(cmd, shell=True, check=True)


sh("nvidia-smi")

# piper-sample-generator for synthetic positive/negative clips
sh("git clone https://github.com/rhasspy/piper-sample-generator")
sh("wget -O piper-sample-generator/models/en_US-libritts_r-medium.pt "
   "'https://github.com/rhasspy/piper-sample-generator/releases/download/v2.0.0/en_US-libritts_r-medium.pt'")
sh("pip install piper-phonemize==1.1.0")
sh("pip install webrtcvad")

# openWakeWord itself and its training extras
sh("git clone https://github.com/dscripka/openwakeword")
sh("pip install -e ./openwakeword")
sh("pip install torch==2.1.2+cu118 torchaudio==2.1.2+cu118 --index-url https://download.pytorch.org/whl/cu118")
sh("pip install mutagen==1.47.0 torchinfo==1.8.0 torchmetrics==1.2.0 speechbrain==0.5.14 "
   "audiomentations==0.33.0 torch-audiomentations==0.11.0 acoustics==0.2.6")
sh("pip install onnxruntime-gpu==1.16.3")
sh("pip install tensorflow-cpu==2.8.1 tensorflow_probability==0.16.0 onnx_tf==1.10.0 pronouncing==0.2.0")
sh("pip install datasets==2.14.6 deep-phonemizer==0.0.19")

# download the openWakeWord feature models and a few false-positive validation features
os.makedirs("./openwakeword/openwakeword/resources/models", exist_ok=True)
for fname in ["embedding_model.onnx", "embedding_model.tflite", "melspectrogram.onnx", "melspectrogram.tflite"]:
    sh(f"wget -q https://github.com/dscripka/openWakeWord/releases/download/v0.5.1/{fname} "
       f"-O ./openwakeword/openwakeword/resources/models/{fname}")

# %%
# @title Check the runtime { display-mode: "form" }
import numpy as np
import torch
import yaml

assert torch.cuda.is_available(), "No GPU found: switch the Colab runtime to a GPU runtime first."
print("GPU:", torch.cuda.get_device_name(0))
print("torch", torch.__version__)

# %%
# @title Listen to an example of the target phrase { display-mode: "form" }
target_word = "hey_sebastian"  # @param {type:"string"}

sh(f"{sys.executable} piper-sample-generator/generate_samples.py \"{target_word.replace('_', ' ')}\" "
   "--model piper-sample-generator/models/en_US-libritts_r-medium.pt "
   "--max-samples 1 --batch-size 1 --output-dir ./example")

try:
    from IPython.display import Audio, display
    display(Audio("./example/0.wav", autoplay=True))
except ImportError:
    print("example written to ./example/0.wav")

# %%
# @title Download room impulse responses and background audio { display-mode: "form" }
import datasets
import scipy.io.wavfile
from tqdm import tqdm

output_dir = "./mit_rirs"
if not os.path.exists(output_dir):
    os.mkdir(output_dir)
    rir_dataset = datasets.load_dataset("davidscripka/MIT_environmental_impulse_responses", split="train", streaming=True)
    for row in tqdm(rir_dataset):
        name = row["audio"]["path"].split("/")[-1]
        scipy.io.wavfile.write(os.path.join(output_dir, name), 16000, (row["audio"]["array"] * 32767).astype(np.int16))

if not os.path.exists("audioset_16k"):
    os.mkdir("audioset_16k")
    sh("wget -q https://huggingface.co/datasets/agkphysics/AudioSet/resolve/main/bal_train09.tar -O audioset_bal_train09.tar")
    sh("tar -xf audioset_bal_train09.tar")
    audioset_dataset = datasets.Dataset.from_dict({"audio": [str(p) for p in os.scandir("audio/bal_train")]})
    audioset_dataset = audioset_dataset.cast_column("audio", datasets.Audio(sampling_rate=16000))
    for row in tqdm(audioset_dataset):
        name = row["audio"]["path"].split("/")[-1].replace(".flac", ".wav")
        scipy.io.wavfile.write(os.path.join("audioset_16k", name), 16000, (row["audio"]["array"] * 32767).astype(np.int16))

if not os.path.exists("fma"):
    os.mkdir("fma")
    fma_dataset = datasets.load_dataset("rudraml/fma", name="small", split="train", streaming=True)
    fma_dataset = iter(fma_dataset.cast_column("audio", datasets.Audio(sampling_rate=16000)))
    n_hours = 1
    for i in tqdm(range(n_hours * 3600 // 30)):
        row = next(fma_dataset)
        name = row["audio"]["path"].split("/")[-1].replace(".mp3", ".wav")
        scipy.io.wavfile.write(os.path.join("fma", name), 16000, (row["audio"]["array"] * 32767).astype(np.int16))

# pre-computed openWakeWord features for negative data (~2000 hours) and a validation set
sh("wget -q https://huggingface.co/datasets/davidscripka/openwakeword_features/resolve/main/openwakeword_features_ACAV100M_2000_hrs_16bit.npy")
sh("wget -q https://huggingface.co/datasets/davidscripka/openwakeword_features/resolve/main/validation_set_features.npy")

# %%
# @title Write the training config { display-mode: "form" }
number_of_examples = 1000  # @param {type:"slider", min:100, max:50000, step:50}
number_of_training_steps = 10000  # @param {type:"slider", min:0, max:50000, step:100}
false_activation_penalty = 1500  # @param {type:"slider", min:100, max:5000, step:50}

config = yaml.load(open("openwakeword/examples/custom_model.yml", "r").read(), yaml.Loader)
config["target_phrase"] = [target_word.replace("_", " ")]
config["model_name"] = target_word
config["n_samples"] = number_of_examples
config["n_samples_val"] = max(500, number_of_examples // 10)
config["steps"] = number_of_training_steps
config["target_accuracy"] = 0.6
config["target_recall"] = 0.25
config["output_dir"] = "./my_custom_model"
config["max_negative_weight"] = false_activation_penalty
# batch size for the TTS model; 50 fits a 16 GB T4
config["tts_batch_size"] = 50
config["augmentation_batch_size"] = 16
config["piper_sample_generator_path"] = "./piper-sample-generator"
config["background_paths"] = ["./audioset_16k", "./fma"]
config["false_positive_validation_data_path"] = "validation_set_features.npy"
config["feature_data_files"] = {"ACAV100M_sample": "openwakeword_features_ACAV100M_2000_hrs_16bit.npy"}

with open("my_model.yaml", "w") as file:
    yaml.dump(config, file)

# %%
# @title Generate clips, augment, and train { display-mode: "form" }
sh(f"{sys.executable} openwakeword/openwakeword/train.py --training_config my_model.yaml --generate_clips")
sh(f"CUDA_VISIBLE_DEVICES=0 {sys.executable} openwakeword/openwakeword/train.py --training_config my_model.yaml --augment_clips")
sh(f"{sys.executable} openwakeword/openwakeword/train.py --training_config my_model.yaml --train_model")

# %%
# @title Convert to TFLite and download { display-mode: "form" }
import onnx
from onnx_tf.backend import prepare


def convert_onnx_to_tflite(onnx_model_path, output_path):
    """Converts an ONNX version of an openwakeword model to the Tensorflow tflite format."""
    import tensorflow as tf
    onnx_model = onnx.load(onnx_model_path)
    tf_rep = prepare(onnx_model, device="CPU")
    tf_rep.export_graph("tmp_tf_model")
    converter = tf.lite.TFLiteConverter.from_saved_model("tmp_tf_model")
    tflite_model = converter.convert()
    with open(output_path, "wb") as f:
        f.write(tflite_model)


convert_onnx_to_tflite(f"my_custom_model/{config['model_name']}.onnx", f"my_custom_model/{config['model_name']}.tflite")

try:
    from google.colab import files
    files.download(f"my_custom_model/{config['model_name']}.onnx")
    files.download(f"my_custom_model/{config['model_name']}.tflite")
except ImportError:
    print("models written to ./my_custom_model")
