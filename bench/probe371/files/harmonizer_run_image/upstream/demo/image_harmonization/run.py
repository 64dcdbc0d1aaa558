import os
import argparse

import numpy as np
from PIL import Image

import torch
import torchvision.transforms.functional as tf

from src import model


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--example-path', type=str, default='./demo/image_harmonization/example', help='')
    parser.add_argument('--pretrained', type=str, default='./pretrained/harmonizer.pth', help='')
    args = parser.parse_known_args()[0]

    print('\n')
    print('================================================================================')
    print('Image Harmonization Demo')
    print('================================================================================')
    print('NOTE:')
    print('  The example images are sampled from the iHarmony4 dataset.')
    print('  The harmonized results are saved in "{0}/harmonized"'.format(args.example_path))
    print('================================================================================\n')

    # pre-defined arguments
    cuda = torch.cuda.is_available()

    # create/load the harmonizer model
    print('Create/load Harmonizer...')
    harmonizer = model.Harmonizer()
    if cuda:
        harmonizer = harmonizer.cuda()
    harmonizer.load_state_dict(torch.load(args.pretrained), strict=True)
    harmonizer.eval()

    # define example paths
    comp_path = os.path.join(args.example_path, 'composite')
    mask_path = os.path.join(args.example_path, 'mask')
    harmonized_path = os.path.join(args.example_path, 'harmonized')
    if not os.path.exists(harmonized_path):
        os.makedirs(harmonized_path)

    # harmonize the examples
    examples = sorted(os.listdir(comp_path))
    for i, example in enumerate(examples):
        print('Process {0}/{1}: {2}'.format(i + 1, len(examples), example))
        comp = Image.open(os.path.join(comp_path, example)).convert('RGB')
        mask = Image.open(os.path.join(mask_path, example)).convert('1')
        if comp.size[0] != mask.size[0] or comp.size[1] != mask.size[1]:
            print('The size of the composite image and the mask are inconsistent')
            exit()

        comp = tf.to_tensor(comp)[None, ...]
        mask = tf.to_tensor(mask)[None, ...]

        if cuda:
            comp = comp.cuda()
            mask = mask.cuda()

        with torch.no_grad():
            arguments = harmonizer.predict_arguments(comp, mask)
            harmonized = harmonizer.restore_image(comp, mask, arguments)[-1]

        harmonized = np.transpose(harmonized[0].cpu().numpy(), (1, 2, 0)) * 255
        harmonized = Image.fromarray(harmonized.astype(np.uint8))
        harmonized.save(os.path.join(harmonized_path, example))

    print('Done\n')
