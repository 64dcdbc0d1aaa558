import time

import numpy as np
import torch
from transformers import Wav2Vec2Processor

from model import Wav2Vec2ForEndpointing

MODEL_PATH = "pipecat-ai/smart-turn-v2"

# Load model and processor
model = Wav2Vec2ForEndpointing.from_pretrained(MODEL_PATH)
processor = Wav2Vec2Processor.from_pretrained(MODEL_PATH)

# Set model to evaluation mode and move to GPU if available
model.eval()
if torch.cuda.is_available():
    device = "cuda"
elif torch.backends.mps.is_available():
    device = "mps"
else:
    device = "cpu"
model = model.to(device)
print(f"Smart-turn running on {device}")


def predict_endpoint(audio_array):
    """
    Predict whether an audio segment is complete (turn ended) or incomplete.

    Args:
        audio_array: Numpy array containing audio samples at 16kHz

    Returns:
        Dictionary containing prediction results:
        - prediction: 1 for complete, 0 for incomplete
        - probability: Probability of completion class
    """

    # Process audio
    inputs = processor(
        audio_array,
        sampling_rate=16000,
        padding="max_length",
        truncation=True,
        max_length=16000 * 16,  # 16 seconds at 16kHz as specified in training
        return_attention_mask=True,
        return_tensors="pt",
    )

    # Move inputs to device
    inputs = {k: v.to(device) for k, v in inputs.items()}

    # Run inference
    with torch.no_grad():
        outputs = model(**inputs)

        # The model returns sigmoid probabilities directly in the logits field
        probability = outputs["logits"][0].item()

        # Make prediction (1 for Complete, 0 for Incomplete)
        prediction = 1 if probability > 0.5 else 0

    return {
        "prediction": prediction,
        "probability": probability,
    }


if __name__ == "__main__":
    # quick smoke test on silence followed by a burst of noise
    audio = np.concatenate([np.zeros(16000 * 2, dtype=np.float32),
                            np.random.randn(16000).astype(np.float32) * 0.1])
    t0 = time.perf_counter()
    result = predict_endpoint(audio)
    print(f"{result} in {(time.perf_counter() - t0) * 1000:.1f} ms")
