"""Streaming packet-loss concealment with the exported FRN ONNX graph.

Runs frame by frame (20 ms packets at 48 kHz) exactly as it would in a real-time
VoIP jitter buffer: every lost packet is concealed from the cached recurrent state.

    python inference_onnx.py --onnx_path lightning_logs/version_0/checkpoints/frn.onnx \
        --input lossy.wav --output concealed.wav --trace trace.txt
"""
import argparse
import time

import librosa
import numpy as np
import onnxruntime
import soundfile as sf
from tqdm import tqdm

from config import CONFIG

parser = argparse.ArgumentParser()
parser.add_argument('--onnx_path', required=True)
parser.add_argument('--input', required=True)
parser.add_argument('--output', required=True)
parser.add_argument('--trace', default=None, help='packet-loss trace, one 0/1 per packet')
parser.add_argument('--use_gpu', action='store_true', help='run the ONNX graph on the GPU')
args = parser.parse_args()

window = np.sqrt(np.hanning(CONFIG.DATA.window_size + 1)[:-1]).astype(np.float32)
hop = CONFIG.DATA.stride


def load_trace(path, n_packets):
    if path is None:
        return np.zeros(n_packets, dtype=np.int64)
    with open(path) as f:
        trace = np.array([int(l.strip()) for l in f if l.strip()], dtype=np.int64)
    if len(trace) < n_packets:
        trace = np.pad(trace, (0, n_packets - len(trace)))
    return trace[:n_packets]


def main():
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL

    if args.use_gpu:
        providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']
    else:
        providers = ['CPUExecutionProvider']
    session = onnxruntime.InferenceSession(args.onnx_path, options, providers=providers)
    print('ONNX runtime providers:', session.get_providers())

    input_names = [x.name for x in session.get_inputs()]
    output_names = [x.name for x in session.get_outputs()]

    sig, _ = librosa.load(args.input, sr=CONFIG.DATA.sr)
    packet_size = CONFIG.DATA.EVAL.packet_size
    n_packets = len(sig) // packet_size
    trace = load_trace(args.trace, n_packets)

    sig = sig[:n_packets * packet_size]
    lossy = sig.copy()
    for i, lost in enumerate(trace):
        if lost:
            lossy[i * packet_size:(i + 1) * packet_size] = 0

    spec = librosa.stft(lossy, n_fft=CONFIG.DATA.window_size, hop_length=hop,
                        win_length=CONFIG.DATA.window_size, window=window, center=True)
    inp = np.stack([spec.real, spec.imag], axis=-1).astype(np.float32)  # F, T, 2
    inp = inp.transpose(1, 0, 2)[:, None]  # T, 1, F, 2

    mag = np.zeros((1, 1, hop, 1), dtype=np.float32)
    pred_states = np.zeros((2, 1, 1, CONFIG.MODEL.pred_dim), dtype=np.float32)
    mlp_states = np.zeros((CONFIG.MODEL.enc_layers, 2, 1, 1, CONFIG.MODEL.enc_in_dim), dtype=np.float32)

    outputs = []
    start = time.time()
    for frame in tqdm(inp):
        feed = dict(zip(input_names, [frame, mag, pred_states, mlp_states]))
        out, mag, pred_states, mlp_states = session.run(output_names, feed)
        outputs.append(out)
    elapsed = time.time() - start
    print('RTF: {:.4f}'.format(elapsed / (len(sig) / CONFIG.DATA.sr)))

    out = np.concatenate(outputs, axis=0)[:, 0]  # T, F, 2
    out = out[..., 0] + 1j * out[..., 1]
    wav = librosa.istft(out.T, hop_length=hop, win_length=CONFIG.DATA.window_size, window=window,
                        length=len(sig))
    sf.write(args.output, wav, CONFIG.DATA.sr, subtype='PCM_16')


if __name__ == '__main__':
    main()
