import numpy as np
import torch
from sklearn.neighbors import KDTree

import gen_utils as gu
import ops_utils as tu
from models.modules.tsegnet import TSegNetModule


class InferencePipeLine:
    def __init__(self, model):
        self.model = model

        self.scaler = 1.8
        self.shifter = 0.8

    def __call__(self, stl_path):
        DEBUG = False
        _, mesh = gu.read_txt_obj_ls(stl_path, ret_mesh=True, use_tri_mesh=True)
        vertices = np.array(mesh.vertices)
        n_vertices = vertices.shape[0]
        vertices[:, :3] -= np.mean(vertices[:, :3], axis=0)
        vertices[:, :3] = ((vertices[:, :3] - np.min(vertices[:, 1])) / (np.max(vertices[:, 1]) - np.min(vertices[:, 1]))) * self.scaler - self.shifter
        org_feats = np.concatenate([vertices, np.array(mesh.vertex_normals)], axis=1)

        # the network expects 24000 points: farthest-point-sample on the GPU first
        input_cuda_feats = torch.from_numpy(np.array([org_feats.astype('float32')])).cuda().permute(0, 2, 1)
        fps_idx = gu.get_fps_idx(input_cuda_feats[:, :3, :], 24000)
        sampled_feats = gu.index_points(input_cuda_feats.permute(0, 2, 1), fps_idx).permute(0, 2, 1).contiguous()

        with torch.no_grad():
            outputs = self.model([sampled_feats, None], test=True)

        centroids = outputs["centroids"][0].cpu().numpy()
        cropped_idx = outputs["cropped_idx"].cpu().numpy()
        pd_mask = torch.sigmoid(outputs["pd_1"]).cpu().numpy()
        pd_id = torch.argmax(outputs["id_pred"], dim=1).cpu().numpy()
        sampled_xyz = sampled_feats[0, :3, :].permute(1, 0).cpu().numpy()

        sampled_labels = np.zeros(sampled_xyz.shape[0], dtype=np.int64)
        best_score = np.zeros(sampled_xyz.shape[0], dtype=np.float32)
        for k in range(cropped_idx.shape[0]):
            pts = cropped_idx[k]
            score = pd_mask[k]
            fdi = tu.class_to_fdi(int(pd_id[k]))
            take = (score > 0.5) & (score > best_score[pts])
            sampled_labels[pts[take]] = fdi
            best_score[pts[take]] = score[take]

        # nearest-neighbour upsampling back to the full-resolution mesh
        tree = KDTree(sampled_xyz, leaf_size=2)
        near_points = tree.query(vertices[:, :3], k=1, return_distance=False)
        result_labels = sampled_labels[near_points.reshape(-1)]

        if DEBUG:
            gu.print_3d(gu.get_colored_mesh(mesh, result_labels))
        return {
            "sem": result_labels.reshape(-1),
            "ins": result_labels.reshape(-1),
            "centroids": centroids,
        }


def load_pipeline(ckpt_path, config):
    module = TSegNetModule(config["model_parameter"])
    state = torch.load(ckpt_path + ".h5")
    module.load_state_dict(state)
    module.cuda()
    module.eval()
    return InferencePipeLine(module)


if __name__ == "__main__":
    import argparse
    import json
    from train_configs.tsegnet import config

    parser = argparse.ArgumentParser()
    parser.add_argument("--input_path", type=str, required=True)
    parser.add_argument("--checkpoint_path", type=str, default="ckpts/tsegnet")
    parser.add_argument("--save_path", type=str, default="pred.json")
    args = parser.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("TSegNet inference needs a CUDA GPU (pointops kernels)")

    config["model_parameter"]["run_type"] = "test"
    pipeline = load_pipeline(args.checkpoint_path, config)
    pred = pipeline(args.input_path)
    with open(args.save_path, "w") as f:
        json.dump({"labels": pred["sem"].tolist(), "instances": pred["ins"].tolist()}, f)
    print("saved", args.save_path)
