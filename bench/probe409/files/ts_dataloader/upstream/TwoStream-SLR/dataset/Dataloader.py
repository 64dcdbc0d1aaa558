import torch
from dataset.VideoLoader import load_batch_video
from dataset.FeatureLoader import load_batch_feature
from dataset.Dataset import build_dataset
import torch.distributed as dist


def collate_fn_(inputs, data_cfg, task, is_train,
                text_tokenizer=None, gloss_tokenizer=None,
                name2keypoint=None):
    outputs = {
        'name': [i['name'] for i in inputs],
        'gloss': [i['gloss'] for i in inputs],
        'text': [i['text'] for i in inputs],
        'num_frames': [i['num_frames'] for i in inputs]}
    if task == 'G2T':
        outputs['recognition_inputs'] = gloss_tokenizer(outputs['gloss'])
        outputs['translation_inputs'] = {**text_tokenizer(outputs['text'])}
        outputs['translation_inputs']['gloss_ids'] = outputs['recognition_inputs']['gloss_labels']
        outputs['translation_inputs']['gloss_lengths'] = outputs['recognition_inputs']['gls_lengths']
        return outputs

    if data_cfg['input_data'] == 'feature':
        raise NotImplementedError
    elif data_cfg['input_data'] == 'videos':
        sgn_videos, sgn_keypoints, sgn_lengths, selected_indexs = load_batch_video(
            zip_file=data_cfg['zip_file'],
            names=outputs['name'],
            num_frames=outputs['num_frames'],
            transform_cfg=data_cfg['transform_cfg'],
            dataset_name=data_cfg['dataset_name'],
            pad_length=data_cfg.get('pad_length', 'pad_to_max'),
            pad=data_cfg.get('pad', 'replicate'),
            is_train=is_train,
            name2keypoint=name2keypoint,
        )
        outputs['recognition_inputs'] = gloss_tokenizer(outputs['gloss'])
        outputs['recognition_inputs']['sgn_videos'] = sgn_videos
        outputs['recognition_inputs']['sgn_keypoints'] = sgn_keypoints
        outputs['recognition_inputs']['sgn_lengths'] = sgn_lengths
        outputs['recognition_inputs']['selected_indexs'] = selected_indexs

        if task == 'S2T':
            outputs['recognition_inputs'] = gloss_tokenizer(outputs['gloss'])
            outputs['translation_inputs'] = {**text_tokenizer(outputs['text'])}
    return outputs


def build_dataloader(cfg, split,
                     text_tokenizer=None, gloss_tokenizer=None,
                     mode='auto', val_distributed=False):
    dataset = build_dataset(cfg['data'], split)
    mode = split if mode == 'auto' else mode
    if mode == 'train':
        sampler = torch.utils.data.distributed.DistributedSampler(
            dataset,
            shuffle=cfg['training']['shuffle'] and split == 'train'
        )
    else:
        if val_distributed:
            sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=False)
        else:
            sampler = torch.utils.data.SequentialSampler(dataset)
    dataloader = torch.utils.data.DataLoader(
        dataset,
        collate_fn=lambda x: collate_fn_(
            inputs=x,
            task=cfg['task'],
            data_cfg=cfg['data'],
            is_train=(mode == 'train'),
            text_tokenizer=text_tokenizer,
            gloss_tokenizer=gloss_tokenizer,
            name2keypoint=dataset.name2keypoints),
        batch_size=cfg['training']['batch_size'],
        num_workers=cfg['training'].get('num_workers', 2),
        pin_memory=True,
        sampler=sampler,
    )
    return dataloader, sampler
