import torch
import lietorch
import numpy as np

from droid_net import DroidNet
from depth_video import DepthVideo
from motion_filter import MotionFilter
from droid_frontend import DroidFrontend
from droid_backend import DroidBackend
from trajectory_filler import PoseTrajectoryFiller

from collections import OrderedDict
from torch.multiprocessing import Process


class Droid:
    """Front-end/back-end DROID-SLAM system driven frame by frame from a Python loop.

    The keyframe graph lives in a DepthVideo whose buffers are shared with the
    (optional) Open3D visualiser process.
    """

    def __init__(self, args):
        super(Droid, self).__init__()
        self.load_weights(args.weights)
        self.args = args
        self.disable_vis = args.disable_vis

        # store images, depth, poses, intrinsics (shared between processes)
        self.video = DepthVideo(args.image_size, args.buffer, stereo=args.stereo)

        # filter incoming frames so that there is enough motion
        self.filterx = MotionFilter(self.net, self.video, thresh=args.filter_thresh)

        # frontend process
        self.frontend = DroidFrontend(self.net, self.video, self.args)

        # backend process
        self.backend = DroidBackend(self.net, self.video, self.args)

        # visualizer
        if not self.disable_vis:
            from visualization import droid_visualization
            self.visualizer = Process(target=droid_visualization, args=(self.video,))
            self.visualizer.start()

        # post processor - fill in poses for non-keyframes
        self.traj_filler = PoseTrajectoryFiller(self.net, self.video)

    def load_weights(self, weights):
        """ load trained model weights """

        print(weights)
        self.net = DroidNet()
        checkpoint = torch.load(weights)
        state_dict = OrderedDict([
            (k.replace("module.", ""), v) for (k, v) in checkpoint.items()])

        # the released checkpoint predicts 3 update channels; the network only uses 2
        state_dict["update.weight.2.weight"] = state_dict["update.weight.2.weight"][:2]
        state_dict["update.weight.2.bias"] = state_dict["update.weight.2.bias"][:2]
        state_dict["update.delta.2.weight"] = state_dict["update.delta.2.weight"][:2]
        state_dict["update.delta.2.bias"] = state_dict["update.delta.2.bias"][:2]

        self.net.load_state_dict(state_dict)
        self.net.to("cuda:0").eval()

    def track(self, tstamp, image, depth=None, intrinsics=None):
        """ main thread - update map """

        with torch.no_grad():
            # check there is enough motion
            self.filterx.track(tstamp, image, depth, intrinsics)

            # local bundle adjustment
            self.frontend()

            # global bundle adjustment
            # self.backend()

    def terminate(self, stream=None):
        """ terminate the visualization process, return poses [t, q] """

        del self.frontend

        torch.cuda.empty_cache()
        print("#" * 32)
        self.backend(7)

        torch.cuda.empty_cache()  # free the frontend graph before the second global BA
        print("#" * 32)
        self.backend(12)

        camera_trajectory = self.traj_filler(stream)
        return camera_trajectory.inv().data.cpu().numpy()

    def save_reconstruction(self, path):
        """Dump keyframe timestamps, images, poses, disparities and intrinsics to a .pth file."""
        t = self.video.counter.value
        payload = {
            "tstamps": self.video.tstamp[:t].cpu(),
            "images": self.video.images[:t].cpu(),
            "disps": self.video.disps_up[:t].cpu(),
            "poses": self.video.poses[:t].cpu(),
            "intrinsics": self.video.intrinsics[:t].cpu(),
        }
        torch.save(payload, path)
        return t

    def keyframe_poses(self):
        """World-to-camera SE3 poses of the current keyframes as a (N, 7) numpy array."""
        with self.video.get_lock():
            t = self.video.counter.value
            poses = self.video.poses[:t].clone()
        return lietorch.SE3(poses).inv().data.cpu().numpy()

    def point_cloud(self, filter_thresh=0.005, min_count=2):
        """Back-project the filtered keyframe depth maps into a coloured point cloud."""
        with self.video.get_lock():
            t = self.video.counter.value
        points, colors = self.video.export_point_cloud(t, filter_thresh, min_count)
        return points.cpu().numpy(), colors.cpu().numpy()
