# WavMark quick start (mirrors the README snippet)
#   pip install wavmark
#   python example.py --input example.wav --output example_wmd.wav
import argparse

import numpy as np
import soundfile
import torch
import wavmark


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", default="example.wav")
    parser.add_argument("--output", default="example_wmd.wav")
    parser.add_argument("--payload", default=None, help="16 bits, e.g. 0110...; random when omitted")
    parser.add_argument("--min_snr", type=float, default=20)
    parser.add_argument("--max_snr", type=float, default=38)
    args = parser.parse_args()

    # 1.load model
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = wavmark.load_model().to(device)

    # 2.create 16-bit payload
    if args.payload is None:
        payload = np.random.choice([0, 1], size=16)
    else:
        payload = np.array([int(c) for c in args.payload])
    print("Payload:", payload)

    # 3.read host audio
    # the audio should be a single-channel 16kHz wav, you can read it using soundfile:
    signal, sample_rate = soundfile.read(args.input)
    assert sample_rate == 16000, "wavmark works on 16 kHz mono audio, please resample first"
    # Otherwise, you can use the following function to convert the host audio to single-channel 16kHz format:
    # from wavmark.utils import file_reader
    # signal = file_reader.read_as_single_channel(args.input, aim_sr=16000)

    # 4.encode watermark
    watermarked_signal, _ = wavmark.encode_watermark(model, signal, payload, show_progress=True)
    # you can save it as a new wav:
    soundfile.write(args.output, watermarked_signal, 16000)

    # 5.decode watermark
    payload_decoded, _ = wavmark.decode_watermark(model, watermarked_signal, show_progress=True)
    if payload_decoded is None:
        print("No watermark found")
        return
    BER = (payload != payload_decoded).mean() * 100
    print("Decode BER:%.1f" % BER)


if __name__ == "__main__":
    main()
