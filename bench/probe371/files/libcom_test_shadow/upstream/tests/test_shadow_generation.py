from common import *
from libcom import ShadowGenerationModel
from libcom.utils.process_image import make_image_grid
import os
import cv2
import time
import torch

task_name = 'shadow_generation'


if __name__ == '__main__':
    # Select the GPU with: python tests/test_shadow_generation.py --device 1
    net = ShadowGenerationModel(device=args.device, model_type='ShadowGeneration', sample_steps=50)
    test_dir = '../tests/shadow_generation'
    result_dir = f'../tests/result_dir/{task_name}'
    os.makedirs(result_dir, exist_ok=True)
    print(f'begin testing {task_name}...')
    img_list = os.listdir(os.path.join(test_dir, 'composite'))
    for img_name in img_list:
        comp_img = os.path.join(test_dir, 'composite', img_name)
        comp_mask = os.path.join(test_dir, 'composite_mask', img_name)
        start = time.time()
        preds = net(comp_img, comp_mask, number=5)
        print('{}: {:.1f}s, peak memory {:.2f} GB'.format(img_name, time.time() - start,
                                                        torch.cuda.max_memory_allocated() / 1024 ** 3))
        grid_img = make_image_grid([comp_img, comp_mask] + preds)
        res_path = os.path.join(result_dir, img_name)
        cv2.imwrite(res_path, grid_img)
        print('save result to ', res_path)
    print(f'end testing {task_name}!')
