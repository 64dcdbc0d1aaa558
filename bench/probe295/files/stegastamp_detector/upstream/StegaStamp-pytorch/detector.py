"""
Real-time StegaStamp decoding from a webcam / video file.

    python detector.py --decoder saved_models/decoder.pth --video 0 --secret_size 100

Frames are center-cropped to a square, resized to 400x400 and decoded on the GPU; when the BCH
code corrects the payload the decoded string is drawn on the frame.
"""
import argparse
import time

import bchlib
import cv2
import numpy as np
import torch

BCH_POLYNOMIAL = 137
BCH_BITS = 5


def decode_bits(bits, bch):
    """ bits: iterable of 0/1 of length >= 96 -> decoded 7-char string or None """
    packet_binary = "".join([str(int(b)) for b in bits[:96]])
    packet = bytes(int(packet_binary[i: i + 8], 2) for i in range(0, len(packet_binary), 8))
    packet = bytearray(packet)

    data, ecc = packet[:-bch.ecc_bytes], packet[-bch.ecc_bytes:]

    bitflips = bch.decode_inplace(data, ecc)
    if bitflips != -1:
        try:
            return data.decode("utf-8"), bitflips
        except UnicodeDecodeError:
            return None, bitflips
    return None, bitflips


def preprocess(frame, size=400):
    h, w, _ = frame.shape
    s = min(h, w)
    y0, x0 = (h - s) // 2, (w - s) // 2
    crop = frame[y0:y0 + s, x0:x0 + s]
    crop = cv2.resize(crop, (size, size), interpolation=cv2.INTER_AREA)
    crop = cv2.cvtColor(crop, cv2.COLOR_BGR2RGB)
    tensor = torch.from_numpy(crop).float().permute(2, 0, 1).unsqueeze(0) / 255.0
    return tensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--decoder', type=str, required=True)
    parser.add_argument('--video', type=str, default='0', help='webcam index or video path')
    parser.add_argument('--secret_size', type=int, default=100)
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--show', action='store_true')
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True

    # the decoder was pickled from a GPU training run; load it straight onto the first GPU
    decoder = torch.load(args.decoder, map_location='cuda:0')
    decoder.eval()
    if args.fp16:
        decoder = decoder.half()

    bch = bchlib.BCH(BCH_POLYNOMIAL, BCH_BITS)

    source = int(args.video) if args.video.isdigit() else args.video
    cap = cv2.VideoCapture(source)
    n_frames, n_found, t0 = 0, 0, time.time()

    with torch.no_grad():
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            n_frames += 1

            image = preprocess(frame).to('cuda:0', non_blocking=True)
            if args.fp16:
                image = image.half()

            secret = decoder(image)
            secret = torch.round(secret.float()).cpu().numpy()[0]

            code, bitflips = decode_bits(secret, bch)
            if code is not None:
                n_found += 1
                print('frame {:6d} | decoded: {} ({} bit flips)'.format(n_frames, code, bitflips))
                cv2.putText(frame, code, (30, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 255, 0), 3)

            if args.show:
                cv2.imshow('StegaStamp detector', frame)
                if cv2.waitKey(1) & 0xFF == ord('q'):
                    break

    cap.release()
    cv2.destroyAllWindows()
    elapsed = time.time() - t0
    print('{} frames, {} decoded, {:.1f} fps'.format(n_frames, n_found, n_frames / max(elapsed, 1e-6)))


if __name__ == '__main__':
    main()
