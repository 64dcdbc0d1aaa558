"""Predict the emotion of a few audio files with a fine-tuned checkpoint.

    python predict.py --model m3hrdadfi/hubert-base-persian-speech-emotion-recognition a.wav b.wav
"""
import argparse

import librosa
import numpy as np
import torch
import torch.nn.functional as F
import torchaudio
from transformers import AutoConfig, Wav2Vec2FeatureExtractor

from src.models import HubertForSpeechClassification, Wav2Vec2ForSpeechClassification

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="m3hrdadfi/wav2vec2-xlsr-persian-speech-emotion-recognition")
parser.add_argument("files", nargs="+")
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model_name_or_path = args.model
config = AutoConfig.from_pretrained(model_name_or_path)
feature_extractor = Wav2Vec2FeatureExtractor.from_pretrained(model_name_or_path)
sampling_rate = feature_extractor.sampling_rate

model_cls = HubertForSpeechClassification if config.model_type == "hubert" else Wav2Vec2ForSpeechClassification
model = model_cls.from_pretrained(model_name_or_path).to(device)
model.eval()


def speech_file_to_array_fn(path, sampling_rate):
    speech_array, _sampling_rate = torchaudio.load(path)
    resampler = torchaudio.transforms.Resample(_sampling_rate, sampling_rate)
    speech = resampler(speech_array).squeeze().numpy()
    return speech


def predict(path, sampling_rate):
    speech = speech_file_to_array_fn(path, sampling_rate)
    features = feature_extractor(speech, sampling_rate=sampling_rate, return_tensors="pt", padding=True)

    input_values = features.input_values.to(device)
    attention_mask = features.attention_mask.to(device) if "attention_mask" in features else None

    with torch.no_grad():
        logits = model(input_values, attention_mask=attention_mask).logits

    scores = F.softmax(logits, dim=1).detach().cpu().numpy()[0]
    outputs = [{"Emotion": config.id2label[i], "Score": f"{round(score * 100, 3):.1f}%"}
               for i, score in enumerate(scores)]
    return outputs


for path in args.files:
    outputs = predict(path, sampling_rate)
    best = max(outputs, key=lambda o: float(o["Score"].rstrip("%")))
    print(path, best["Emotion"], best["Score"])
    for o in outputs:
        print("   ", o)
