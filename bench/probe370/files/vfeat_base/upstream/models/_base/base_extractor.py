import os
import traceback
from pathlib import Path
from typing import Dict, Union

import numpy as np
import torch
from utils.utils import action_on_extraction


class BaseExtractor(object):
    '''Common things to be inherited by every descendant'''

    def __init__(self,
        feature_type: str,
        on_extraction: str,
        tmp_path: str,
        output_path: str,
        keep_tmp_files: bool,
        device: str,
    ) -> None:
        self.feature_type = feature_type
        self.on_extraction = on_extraction
        self.tmp_path = tmp_path
        self.output_path = output_path
        self.keep_tmp_files = keep_tmp_files
        self.device = device

    @torch.no_grad()
    def _extract(self, video_path: str) -> None:
        '''A wrapper around self.extract. It handles exceptions, checks if files already exist and saves
        the extracted files if a user desires.

        Args:
            video_path (str): a video path from which to extract features
        '''
        # the extractor is in a single process per device; to run on another GPU start another process
        try:
            # skips a video path if already exists
            if self.is_already_exist(video_path):
                return
            # extracts features for a video path
            feats_dict = self.extract(video_path)
            # either prints or saves to disk
            action_on_extraction(feats_dict, video_path, self.output_path, self.on_extraction)
        except KeyboardInterrupt:
            raise KeyboardInterrupt
        except Exception as e:
            # prints only the last line of an error. Use `traceback.print_exc()` for the whole traceback
            traceback.print_exc()
            print(e)
            print(f'Extraction failed at: {video_path} with error (↑). Continuing extraction')
        finally:
            # long videos leave large activations in the caching allocator; release them between videos
            if 'cuda' in str(self.device):
                torch.cuda.empty_cache()

    def extract(self, video_path: str) -> Dict[str, np.ndarray]:
        '''This function should be implemented by each descendant

        Args:
            video_path (str): a video path from which to extract features

        Raises:
            NotImplementedError: not implemented error

        Returns:
            Dict[str, np.ndarray]: key is the name of the feature, and value is the extracted array
        '''
        raise NotImplementedError

    def load_model(self) -> Dict[str, torch.nn.Module]:
        '''Defines the models, loads checkpoints, sends them to the device.

        Raises:
            NotImplementedError: if a model is not implemented.

        Returns:
            Dict[str, torch.nn.Module]: model-agnostic dict holding modules for extraction and show_pred
        '''
        raise NotImplementedError

    def is_already_exist(self, video_path: Union[str, Path]) -> bool:
        '''Checks if the all feature files already exist, and also checks if IO is possible.

        Args:
            video_path (Union[str, Path]): the path to a video to extract features from

        Returns:
            bool: True if all feature files already exist
        '''
        if self.on_extraction not in ['save_numpy', 'save_pickle']:
            return False
        action2ext = {'save_numpy': '.npy', 'save_pickle': '.pkl'}
        ext = action2ext[self.on_extraction]
        how_many_files_should_exist = len(self.output_feat_keys)
        how_many_files_exist = 0
        for key in self.output_feat_keys:
            fname = f'{Path(video_path).stem}_{key}{ext}'
            if key == 'features':
                fname = fname.replace(f'_{key}', '')
            fpath = os.path.join(self.output_path, fname)
            if Path(fpath).exists():
                how_many_files_exist += 1
        if how_many_files_should_exist == how_many_files_exist:
            print(f'Features for {video_path} already exist in {self.output_path} - skipping..')
            return True
        return False


class BaseFrameWiseExtractor(BaseExtractor):
    '''Base class for extractors that process a video frame by frame (resnet, clip, timm)'''

    def __init__(self, feature_type, on_extraction, tmp_path, output_path, keep_tmp_files, device,
                 model_name: str, batch_size: int, extraction_fps: int, extraction_total: int,
                 show_pred: bool) -> None:
        super().__init__(feature_type, on_extraction, tmp_path, output_path, keep_tmp_files, device)
        self.model_name = model_name
        self.batch_size = batch_size
        self.extraction_fps = extraction_fps
        self.extraction_total = extraction_total
        self.show_pred = show_pred
        self.output_feat_keys = [self.feature_type, 'fps', 'timestamps_ms']

    def run_on_a_batch(self, batch: list) -> torch.Tensor:
        model = self.name2module['model']
        batch = torch.cat(batch).to(self.device)
        batch_feats = model(batch)
        self.maybe_show_pred(batch_feats)
        return batch_feats

    def maybe_show_pred(self, feats: torch.Tensor):
        if self.show_pred:
            logits = self.name2module['class_head'](feats)
            from utils.utils import show_predictions_on_dataset
            show_predictions_on_dataset(logits, 'imagenet')
