import torch
from options import *
from config import *
from model import *
import numpy as np
from dataset_loader import *
from sklearn.metrics import roc_curve, auc, precision_recall_curve
import warnings
warnings.filterwarnings("ignore")


def test(net, config, wind, test_loader, test_info, step, model_file = None):
    with torch.no_grad():
        net.eval()
        net.flag = "Test"
        if model_file is not None:
            net.load_state_dict(torch.load(model_file))

        load_iter = iter(test_loader)
        frame_gt = np.load("frame_label/gt-ucf.npy")
        frame_predict = None

        cls_label = []
        cls_pre = []
        temp_predict = torch.zeros((0)).cuda()

        for i in range(len(test_loader.dataset)):

            _data, _label = next(load_iter)

            _data = _data.cuda()
            _label = _label.cuda()

            res = net(_data)
            a_predict = res["frame"]
            temp_predict = torch.cat([temp_predict, a_predict], dim=0)
            if (i + 1) % 10 == 0 :
                cls_label.append(int(_label))
                a_predict = temp_predict.mean(0).cpu().numpy()

                cls_pre.append(1 if a_predict.max() > 0.5 else 0)
                fpre_ = np.repeat(a_predict, 16)
                if frame_predict is None:
                    frame_predict = fpre_
                else:
                    frame_predict = np.concatenate([frame_predict, fpre_])
                temp_predict = torch.zeros((0)).cuda()  # reset for the next video (10 crops)

        fpr, tpr, _ = roc_curve(frame_gt, frame_predict)
        auc_score = auc(fpr, tpr)

        corrent_num = np.sum(np.array(cls_label) == np.array(cls_pre), axis=0)
        accuracy = corrent_num / (len(cls_pre))

        precision, recall, th = precision_recall_curve(frame_gt, frame_predict,)
        ap_score = auc(recall, precision)

        wind.log({"roc_auc": auc_score, "pr_auc": ap_score, "accuracy": accuracy}, step = step)

        test_info["step"].append(step)
        test_info["auc"].append(auc_score)
        test_info["ap"].append(ap_score)
        test_info["ac"].append(accuracy)


class _NoLog(object):
    def log(self, *args, **kwargs):
        pass


if __name__ == "__main__":
    # standalone inference with a released checkpoint (models/ucf_trans_2022.pkl)
    args = parse_args()
    config = Config(args)
    config.len_feature = 1024
    net = WSAD(input_size = config.len_feature, flag = "Test", a_nums = 60, n_nums = 60)
    net = net.cuda()
    test_loader = data.DataLoader(
        UCF_crime(root_dir = config.root_dir, mode = 'Test', modal = config.modal, num_segments = config.num_segments, len_feature = config.len_feature),
            batch_size = 1,
            shuffle = False, num_workers = config.num_workers)
    test_info = {"step": [], "auc": [], "ap": [], "ac": []}
    test(net, config, _NoLog(), test_loader, test_info, 0, model_file = args.model_file)
    print("AUC: {:.4f}  AP: {:.4f}  ACC: {:.4f}".format(test_info["auc"][-1], test_info["ap"][-1], test_info["ac"][-1]))
