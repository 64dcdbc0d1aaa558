import sys
sys.dont_write_bytecode = True
import os
import torch
import torch.nn.parallel
import torch.multiprocessing as mp
from gtad_lib import opts
from gtad_lib.models import GTAD
from gtad_lib.dataset import VideoDataSet
import numpy as np
import pandas as pd


def save_proposals(opt, video_name, start_scores, end_scores, clr_confidence, reg_confidence):
    tscale = opt["temporal_scale"]
    new_props = []
    for idx in range(tscale):
        for jdx in range(tscale):
            start_index = jdx
            end_index = start_index + idx + 1
            if end_index < tscale and start_index < tscale:
                xmin = start_index / tscale
                xmax = end_index / tscale
                xmin_score = start_scores[start_index]
                xmax_score = end_scores[end_index]
                clr_score = clr_confidence[idx, jdx]
                reg_score = reg_confidence[idx, jdx]
                new_props.append([xmin, xmax, xmin_score, xmax_score, clr_score, reg_score])
    new_props = np.stack(new_props)

    col_name = ["xmin", "xmax", "xmin_score", "xmax_score", "clr_score", "reg_socre"]
    new_df = pd.DataFrame(new_props, columns=col_name)
    new_df.to_csv(opt["output"] + "/results/" + video_name + ".csv", index=False)


if __name__ == '__main__':
    opt = opts.parse_opt()
    opt = vars(opt)
    if not os.path.exists(opt["output"] + "/results"):
        os.makedirs(opt["output"] + "/results")

    model = GTAD(opt)
    model = torch.nn.DataParallel(model, device_ids=list(range(opt['n_gpu']))).cuda()
    checkpoint = torch.load(opt["output"] + "/GTAD_best.pth.tar")
    model.load_state_dict(checkpoint['state_dict'])
    model.eval()

    test_loader = torch.utils.data.DataLoader(VideoDataSet(opt, subset=opt['inference_subset']),
                                              batch_size=1, shuffle=False,
                                              num_workers=8, pin_memory=True, drop_last=False)

    print("Inference start")
    with torch.no_grad():
        for idx, input_data in test_loader:
            video_name = test_loader.dataset.video_list[idx[0]]
            input_data = input_data.cuda()
            confidence_map, start_map, end_map = model(input_data)

            # move everything back to the host for the proposal dump
            start_scores = start_map[0].detach().cpu().numpy()
            end_scores = end_map[0].detach().cpu().numpy()
            clr_confidence = (confidence_map[0][1]).detach().cpu().numpy()
            reg_confidence = (confidence_map[0][0]).detach().cpu().numpy()

            save_proposals(opt, video_name, start_scores, end_scores, clr_confidence, reg_confidence)

    print("Inference finished")
