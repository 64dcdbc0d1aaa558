import os
import argparse
import time
import glob

import torch

from piano_transcription_inference import PianoTranscription, sample_rate, load_audio


def inference(args):
    """Inference template.

    Args:
      model_type: str
      audio_path: str
      cuda: bool
    """

    # Arugments & parameters
    audio_path = args.audio_path
    output_midi_path = args.output_midi_path
    device = 'cuda' if args.cuda and torch.cuda.is_available() else 'cpu'

    # Load audio
    (audio, _) = load_audio(audio_path, sr=sample_rate, mono=True)

    # Transcriptor
    transcriptor = PianoTranscription(device=device, checkpoint_path=args.checkpoint_path)
    """device: 'cuda' | 'cpu'
    checkpoint_path: None for default path, or str for downloaded checkpoint path.
    """

    # Transcribe and write out to MIDI file
    transcribe_time = time.time()
    transcribed_dict = transcriptor.transcribe(audio, output_midi_path)
    print('Transcribe time: {:.3f} s'.format(time.time() - transcribe_time))


def inference_folder(args):
    """Transcribe every audio file in a folder, re-using one model instance."""
    device = torch.device('cuda') if args.cuda else torch.device('cpu')
    transcriptor = PianoTranscription(device=device, checkpoint_path=args.checkpoint_path)

    audio_paths = sorted(glob.glob(os.path.join(args.audio_folder, '*.mp3')) +
                         glob.glob(os.path.join(args.audio_folder, '*.wav')))
    os.makedirs(args.output_folder, exist_ok=True)

    for n, audio_path in enumerate(audio_paths):
        midi_path = os.path.join(args.output_folder,
                                 os.path.splitext(os.path.basename(audio_path))[0] + '.mid')
        if os.path.exists(midi_path):
            continue
        (audio, _) = load_audio(audio_path, sr=sample_rate, mono=True)
        t0 = time.time()
        transcriptor.transcribe(audio, midi_path)
        print('{}/{} {} ({:.1f} s)'.format(n + 1, len(audio_paths), audio_path, time.time() - t0))


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='')
    subparsers = parser.add_subparsers(dest='mode')

    parser_single = subparsers.add_parser('single')
    parser_single.add_argument('--audio_path', type=str, required=True)
    parser_single.add_argument('--output_midi_path', type=str, required=True)
    parser_single.add_argument('--checkpoint_path', type=str, default=None)
    parser_single.add_argument('--cuda', action='store_true', default=False)

    parser_folder = subparsers.add_parser('folder')
    parser_folder.add_argument('--audio_folder', type=str, required=True)
    parser_folder.add_argument('--output_folder', type=str, required=True)
    parser_folder.add_argument('--checkpoint_path', type=str, default=None)
    parser_folder.add_argument('--cuda', action='store_true', default=False)

    args = parser.parse_args()

    if args.mode == 'single':
        inference(args)
    elif args.mode == 'folder':
        inference_folder(args)
    else:
        raise Exception('Error argument!')
