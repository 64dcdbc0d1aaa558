# Analyze an audio file, or all audio files in a directory.
# For each audio file, extract spectrograms, analyze them and output an Audacity label file
# with the class predictions.

import argparse
import logging
import os
import re
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import torch

from core import audio
from core import cfg
from core import filters
from core import util
from model import main_model

class ClassInfo:
    def __init__(self, name, code, ignore):
        self.name = name
        self.code = code
        self.ignore = ignore
        self.max_occurrence = 0
        self.is_bird = True
        self.reset()

    def reset(self):
        self.has_label = False
        self.scores = []     # predictions (one per segment)
        self.is_label = []   # True iff corresponding offset is a label

class Label:
    def __init__(self, class_name, score, start_time, end_time):
        self.class_name = class_name
        self.score = score
        self.start_time = start_time
        self.end_time = end_time

class Analyzer:
    def __init__(self, input_path, output_path, start_time, end_time, date_str, latitude, longitude, region,
                 filelist, debug_mode, merge, overlap, device, thread_num=1):
        self.input_path = input_path.strip()
        self.output_path = output_path.strip()
        self.start_seconds = self._get_seconds_from_time_string(start_time)
        self.end_seconds = self._get_seconds_from_time_string(end_time)
        self.date_str = date_str
        self.latitude = latitude
        self.longitude = longitude
        self.region = region
        self.filelist = filelist
        self.debug_mode = debug_mode
        self.overlap = overlap
        self.thread_num = thread_num
        self.merge_labels = (merge == 1)
        self.occurrences = {}
        self.issued_skip_files_warning = False
        self.have_rarities_directory = False

        if self.start_seconds is not None and self.end_seconds is not None and self.end_seconds < self.start_seconds + cfg.audio.segment_len:
            logging.error(f"Error: end time must be >= start time + {cfg.audio.segment_len} seconds")
            quit()

        if self.end_seconds is not None:
            # convert end seconds to start seconds of the last segment
            self.end_seconds -= cfg.audio.segment_len

        # if no output path is specified, put the output labels in the input directory
        if len(self.output_path) == 0:
            if os.path.isdir(self.input_path):
                self.output_path = self.input_path
            else:
                self.output_path = Path(self.input_path).parent
        elif not os.path.exists(self.output_path):
            os.makedirs(self.output_path)

        # use a GPU if available; Apple Silicon is supported through MPS
        if device == "auto":
            if torch.cuda.is_available():
                self.device = "cuda"
            elif torch.backends.mps.is_available():
                self.device = "mps"
            else:
                self.device = "cpu"
        else:
            self.device = device

        self.audio = audio.Audio(device=self.device)

    @staticmethod
    def _get_file_list(input_path):
        if os.path.isdir(input_path):
            return util.get_audio_files(input_path)
        elif util.is_audio_file(input_path):
            return [input_path]
        else:
            logging.error(f"Error: {input_path} is not a directory or an audio file")
            quit()

    # return week number in the range [1, 48] as used by eBird barcharts, i.e. 4 weeks per month
    @staticmethod
    def _get_week_num_from_date_str(date_str):
        if not isinstance(date_str, str):
            return None # e.g. if filelist is used to filter recordings and no date is specified

        date_str = date_str.replace('-', '') # for case with yyyy-mm-dd dates in CSV file
        if not date_str.isnumeric():
            return None

        if len(date_str) >= 4:
            month = int(date_str[-4:-2])
            day = int(date_str[-2:])
            week_num = (month - 1) * 4 + min(4, (day - 1) // 7 + 1)
            return week_num
        else:
            return None

    # convert a time string to seconds; input format is one of: seconds, mm:ss, hh:mm:ss
    @staticmethod
    def _get_seconds_from_time_string(time_str):
        time_str = time_str.strip()
        if len(time_str) == 0:
            return None

        seconds = 0
        tokens = time_str.split(':')
        if len(tokens) > 2:
            seconds += 3600 * int(tokens[-3])

        if len(tokens) > 1:
            seconds += 60 * int(tokens[-2])

        seconds += float(tokens[-1])
        return seconds

    # get class names and codes from the model, which gets them from the checkpoint
    def _get_class_infos(self):
        class_names = self.models[0].train_class_names
        class_codes = self.models[0].train_class_codes
        ignore_list = util.get_file_lines(cfg.misc.ignore_file)

        # replace any "special" quotes in the class names with "plain" quotes,
        # to ensure the quotes in ignore list match these
        for i in range(len(class_names)):
            class_names[i] = class_names[i].replace('’', "'")

        class_infos = []
        for i, class_name in enumerate(class_names):
            class_infos.append(ClassInfo(class_name, class_codes[i], class_name in ignore_list))

        return class_infos

    def _get_model_paths(self):
        model_paths = sorted(Path(cfg.misc.main_ckpt_folder).glob("*.ckpt"))
        if len(model_paths) == 0:
            logging.error(f"Error: no checkpoints found in {cfg.misc.main_ckpt_folder}")
            quit()
        return model_paths

    def _load_models(self):
        self.models = []
        for model_path in self._get_model_paths():
            model = main_model.MainModel.load_from_checkpoint(model_path, map_location=torch.device(self.device))
            model.eval() # set inference mode
            self.models.append(model)

    def _get_predictions(self, signal, rate):
        # if needed, pad the signal with zeros to get the last spectrogram
        total_seconds = signal.shape[0] / rate
        last_segment_len = total_seconds - cfg.audio.segment_len * (total_seconds // cfg.audio.segment_len)
        if last_segment_len > 0.5:
            # more than 1/2 a second at the end, so we'd better analyze it
            pad_amount = int(rate * (cfg.audio.segment_len - last_segment_len)) + 1
            signal = np.pad(signal, (0, pad_amount), 'constant', constant_values=(0, 0))

        start_seconds = 0 if self.start_seconds is None else self.start_seconds
        max_end_seconds = max(0, (signal.shape[0] / rate) - cfg.audio.segment_len)
        end_seconds = max_end_seconds if self.end_seconds is None else self.end_seconds

        specs = self._get_specs(start_seconds, end_seconds)
        logging.debug(f"Analyzing from {start_seconds} to {end_seconds} seconds")
        logging.debug(f"Retrieved {len(specs)} spectrograms")

        if self.device == "cuda" and cfg.infer.use_fp16:
            specs = specs.half()

        predictions = []
        for model in self.models:
            if specs.dtype == torch.float16:
                model = model.half()
            model.to(self.device)
            with torch.no_grad():
                model_predictions = model.get_predictions(specs, self.device, use_softmax=False)
            predictions.append(model_predictions)

        # calculate and return the average across models
        avg_pred = np.mean(predictions, axis=0)
        return avg_pred

    def _get_specs(self, start_seconds, end_seconds):
        self.offsets = np.arange(start_seconds, end_seconds + 1.0, 3.0 - self.overlap).tolist()
        self.raw_spectrograms = [0 for i in range(len(self.offsets))]
        specs = self.audio.get_spectrograms(self.offsets, segment_len=cfg.audio.segment_len, raw_spectrograms=self.raw_spectrograms)

        spec_array = np.zeros((len(specs), 1, cfg.audio.spec_height, cfg.audio.spec_width))
        for i in range(len(specs)):
            if specs[i] is not None:
                spec_array[i] = specs[i].reshape((1, cfg.audio.spec_height, cfg.audio.spec_width)).astype(np.float32)
            else:
                logging.debug(f"No spectrogram returned for offset {i} ({self.offsets[i]:.2f})")

        return torch.Tensor(spec_array).to(self.device)

    def _analyze_file(self, file_path):
        check_frequency = cfg.infer.check_frequency
        logging.info(f"Thread {self.thread_num}: Analyzing {file_path}")

        # clear info from previous recording, and mark classes where occurrence of eBird reports/checklists is < cutoff
        for class_info in self.class_infos:
            class_info.reset()

        signal, rate = self.audio.load(file_path)

        if not self.audio.have_signal:
            return

        self._set_class_occurrences(file_path)
        predictions = self._get_predictions(signal, rate)

        # populate class_infos with predictions
        for i in range(len(self.offsets)):
            for j in range(len(self.class_infos)):
                    self.class_infos[j].scores.append(predictions[i][j])
                    self.class_infos[j].is_label.append(False)
                    if (self.class_infos[j].scores[-1] >= cfg.infer.min_score):
                        self.class_infos[j].has_label = True

        self._save_labels(file_path)

    def _set_class_occurrences(self, file_path):
        # placeholder: eBird occurrence filtering is applied when region/lat-lon is given
        for class_info in self.class_infos:
            class_info.max_occurrence = 1.0

    def _save_labels(self, file_path):
        labels = []
        min_adj_score = cfg.infer.min_score
        for class_info in self.class_infos:
            if class_info.ignore or not class_info.has_label:
                continue

            prev_label = None
            for i in range(len(class_info.scores)):
                score = class_info.scores[i]
                if score >= min_adj_score:
                    end_time = self.offsets[i] + cfg.audio.segment_len
                    if self.merge_labels and prev_label is not None and prev_label.end_time >= self.offsets[i]:
                        prev_label.end_time = end_time
                        prev_label.score = max(prev_label.score, score)
                    else:
                        label = Label(class_info.code, score, self.offsets[i], end_time)
                        labels.append(label)
                        prev_label = label

        output_path = os.path.join(self.output_path, f'{Path(file_path).stem}_HawkEars.txt')
        logging.info(f"Thread {self.thread_num}: Writing {output_path}")
        try:
            with open(output_path, 'w') as file:
                for label in labels:
                    file.write(f'{label.start_time:.2f}\t{label.end_time:.2f}\t{label.class_name};{label.score:.3f}\n')
        except:
            logging.error(f"Unable to write file {output_path}")
            quit()

    def run(self, file_list):
        torch.cuda.empty_cache()
        self._load_models()
        self.class_infos = self._get_class_infos()

        for file_path in file_list:
            self._analyze_file(file_path)

if __name__ == '__main__':
    check_frequency = cfg.infer.check_frequency

    # command-line arguments
    parser = argparse.ArgumentParser()
    parser.add_argument('-b', '--band', type=int, default=1 * cfg.infer.use_banding_codes, help=f"If 1, use banding codes labels. If 0, use common names. Default = {1 * cfg.infer.use_banding_codes}.")
    parser.add_argument('--debug', default=False, action='store_true', help='Flag for debug mode (analyze one spectrogram only, and output several top candidates).')
    parser.add_argument('--device', type=str, default='auto', choices=['auto', 'cuda', 'mps', 'cpu'], help="Device for inference. Default = auto (GPU if available).")
    parser.add_argument('-d', '--date', type=str, default=None, help=f"Date in yyyymmdd, mmdd, or file. Specifying file extracts the date from the file name, using the file_date_regex in base_config.py.")
    parser.add_argument('-e', '--end', type=str, default='', help="Optional end time in hh:mm:ss format, where hh and mm are optional.")
    parser.add_argument('-i', '--input', type=str, default='', help="Input path (single audio file or directory). No default.")
    parser.add_argument('-o', '--output', type=str, default='', help="Output directory to contain label files. Default is input path, if that is a directory.")
    parser.add_argument('--overlap', type=float, default=cfg.infer.spec_overlap_seconds, help=f"Seconds of overlap for adjacent 3-second spectrograms. Default = {cfg.infer.spec_overlap_seconds}.")
    parser.add_argument('-m', '--merge', type=int, default=1, help=f'Specify 0 to not merge adjacent labels of same species. Default = 1, i.e. merge.')
    parser.add_argument('-p', '--min_score', type=float, default=cfg.infer.min_score, help=f"Generate label if score >= this. Default = {cfg.infer.min_score}.")
    parser.add_argument('--fast', default=False, action='store_true', help='Flag for faster analysis (fewer models in the ensemble).')
    parser.add_argument('--threads', type=int, default=cfg.infer.num_threads, help=f'Number of threads. Default = {cfg.infer.num_threads}')
    parser.add_argument('--fp16', default=False, action='store_true', help='Use half precision on the GPU (faster, slightly different scores).')
    parser.add_argument('--start', type=str, default='', help="Optional start time in hh:mm:ss format, where hh and mm are optional.")

    args = parser.parse_args()

    cfg.infer.use_banding_codes = args.band
    cfg.infer.min_score = args.min_score
    cfg.infer.use_fp16 = args.fp16
    if cfg.infer.min_score < 0:
        logging.error("Error: min_score must be >= 0")
        quit()

    logging.basicConfig(format='%(message)s', level=logging.INFO)
    start_time = time.time()
    logging.info("Initializing")

    num_threads = args.threads
    file_list = Analyzer._get_file_list(args.input)
    if num_threads == 1:
        # keep it simple in case multithreading code has undesirable side-effects (e.g. disabling echo to terminal)
        analyzer = Analyzer(args.input, args.output, args.start, args.end, args.date, None, None, None,
                            None, args.debug, args.merge, args.overlap, args.device, 1)
        analyzer.run(file_list)
    else:
        # split input files into one group per thread
        file_lists = [[] for i in range(num_threads)]
        for i in range(len(file_list)):
            file_lists[i % num_threads].append(file_list[i])

        # for some reason using processes is faster than just using threads, but that disables output on Windows
        processes = []
        for i in range(num_threads):
            if len(file_lists[i]) > 0:
                analyzer = Analyzer(args.input, args.output, args.start, args.end, args.date, None, None, None,
                                    None, args.debug, args.merge, args.overlap, args.device, i + 1)
                thread = threading.Thread(target=analyzer.run, args=(file_lists[i], ))
                thread.start()
                processes.append(thread)

        # wait for processes to complete
        for process in processes:
            try:
                process.join()
            except Exception as e:
                logging.error(f"Caught exception: {e}")

    elapsed = time.time() - start_time
    minutes = int(elapsed) // 60
    seconds = int(elapsed) % 60
    logging.info(f"Elapsed time = {minutes}m {seconds}s")
