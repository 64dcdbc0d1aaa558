import os
import os.path
import pickle
import numpy as np
import torch
import copy
from PIL import Image

import dnnlib
import legacy
from visualizer import HtmlPageVisualizer


def Vis(bname, suffix, out, rownames=None, colnames=None, lim=100):
    num_images = out.shape[0]
    step = out.shape[1]

    if colnames is None:
        colnames = [f'Step {i:02d}' for i in range(1, step + 1)]
    if rownames is None:
        rownames = [str(i) for i in range(num_images)]

    visualizer = HtmlPageVisualizer(num_rows=num_images, num_cols=step + 1, viz_size=256)
    visualizer.set_headers(
        ['Name'] + colnames)

    for i in range(num_images):
        visualizer.set_cell(i, 0, text=rownames[i])

    for i in range(num_images):
        for k in range(step):
            image = out[i, k, :, :, :]
            visualizer.set_cell(i, 1 + k, image=image)

    # Save results.
    visualizer.save(f'./html/' + bname + '_' + suffix + '.html')


def LoadData(img_path):
    tmp = img_path + 'S'
    with open(tmp, "rb") as fp:
        s_names, all_s = pickle.load(fp)
    dlatents = all_s

    pindexs = []
    mindexs = []
    for i in range(len(s_names)):
        name = s_names[i]
        if not ('ToRGB' in name):
            mindexs.append(i)
        else:
            pindexs.append(i)

    tmp = img_path + 'S_mean_std'
    with open(tmp, "rb") as fp:
        m, std = pickle.load(fp)

    return dlatents, s_names, mindexs, pindexs, m, std


def LoadModel(network_pkl, device):
    with open(network_pkl, 'rb') as f:
        G = legacy.load_network_pkl(f)['G_ema'].to(device)  # type: ignore

    G.synthesis.forward = types_forward(G.synthesis)
    return G


def types_forward(synthesis):
    # StyleCLIP patches the synthesis network so it can take per-layer style codes
    import types
    from training.networks import SynthesisForwardWithS
    return types.MethodType(SynthesisForwardWithS, synthesis)


def S2List(encoded_styles):
    all_s = []
    for name in encoded_styles.keys():
        tmp = encoded_styles[name].cpu().numpy()
        all_s.append(tmp)
    return all_s


def convert_images_to_uint8(images, drange=[-1, 1], nchw_to_nhwc=False):
    """Convert a minibatch of images from float32 to uint8 with configurable dynamic range.
    Can be used as an output transformation for Network.run().
    """
    if nchw_to_nhwc:
        images = np.transpose(images, [0, 2, 3, 1])

    scale = 255 / (drange[1] - drange[0])
    images = images * scale + (0.5 - drange[0] * scale)

    np.clip(images, 0, 255, out=images)
    images = images.astype('uint8')
    return images


def convert_images_from_uint8(images, drange=[-1, 1], nhwc_to_nchw=False):
    """Convert a minibatch of images from uint8 to float32 with configurable dynamic range.
    Can be used as an input transformation for Network.run().
    """
    if nhwc_to_nchw:
        images = np.rollaxis(images, 3, 1)
    return images / 255 * (drange[1] - drange[0]) + drange[0]


class Manipulator():
    def __init__(self, dataset_name='ffhq'):
        self.file_path = './'
        self.img_path = self.file_path + 'npy/' + dataset_name + '/'
        self.model_path = self.file_path + 'model/'
        self.dataset_name = dataset_name
        self.model_name = dataset_name + '.pkl'

        self.alpha = [0]  # manipulation strength
        self.num_images = 10
        self.img_index = 0  # which image to start
        self.viz_size = 256
        self.manipulate_layers = None  # which layer to manipulate, list
        self.truncation_psi = 0.7
        self.truncation_cutoff = 8

        self.LoadModel = LoadModel

        self.Vis = Vis
        self.LoadData = LoadData
        self.fmaps, self.rgbs = None, None

        self.device = torch.device('cuda')
        self.G = LoadModel(self.model_path + self.model_name, self.device)
        self.num_layers = self.G.synthesis.num_ws

        self.dlatents, self.s_names, self.mindexs, self.pindexs, self.code_mean, self.code_std = LoadData(
            self.img_path)

        self.sess = None  # kept for API compatibility with the TF version
        self.img_size = self.G.img_resolution

    def GenerateImg(self, codes):
        num_images, step = codes[0].shape[:2]

        out = np.zeros((num_images, step, self.img_size, self.img_size, 3), dtype='uint8')
        for i in range(num_images):
            for k in range(step):
                d = {}
                for m in range(len(self.s_names)):
                    d[self.s_names[m]] = torch.from_numpy(codes[m][i, k][None, :]).to('cuda')
                img = self.G.synthesis(None, encoded_styles=d, noise_mode='const')
                img = (img.permute(0, 2, 3, 1) * 127.5 + 128).clamp(0, 255).to(torch.uint8)
                out[i, k, :, :, :] = img[0].cpu().numpy()
                if self.viz_size < self.img_size:
                    out_img = Image.fromarray(out[i, k]).resize((self.viz_size, self.viz_size), Image.LANCZOS)
                    out[i, k, :self.viz_size, :self.viz_size] = np.array(out_img)

        if self.viz_size < self.img_size:
            out = out[:, :, :self.viz_size, :self.viz_size]
        return out

    def MSCode(self, dlatent_tmp, boundary_tmp):

        step = len(self.alpha)
        dlatent_tmp1 = [tmp.reshape((self.num_images, -1)) for tmp in dlatent_tmp]
        dlatent_tmp2 = [np.tile(tmp[:, None], (1, step, 1)) for tmp in dlatent_tmp1]  # (10, 7, 512)

        l = np.array(self.alpha)
        l = l.reshape(
            [step if axis == 1 else 1 for axis in range(dlatent_tmp2[0].ndim)])

        if type(self.manipulate_layers) == int:
            tmp = [self.manipulate_layers]
        elif type(self.manipulate_layers) == list:
            tmp = self.manipulate_layers
        elif self.manipulate_layers is None:
            tmp = np.arange(len(boundary_tmp))
        else:
            raise ValueError('manipulate_layers is wrong')

        for i in tmp:
            dlatent_tmp2[i] += l * boundary_tmp[i]

        codes = []
        for i in range(len(dlatent_tmp2)):
            tmp = list(dlatent_tmp[i].shape)
            tmp.insert(1, step)
            codes.append(dlatent_tmp2[i].reshape(tmp))
        return codes

    def EditOne(self, bname, dlatent_tmp=None):
        if dlatent_tmp is None:
            dlatent_tmp = [tmp[self.img_index:(self.img_index + self.num_images)] for tmp in self.dlatents]

        boundary_tmp = []
        for i in range(len(self.boundary)):
            tmp = self.boundary[i]
            if len(tmp) <= bname:
                boundary_tmp.append(0)
            else:
                boundary_tmp.append(tmp[bname])

        codes = self.MSCode(dlatent_tmp, boundary_tmp)

        out = self.GenerateImg(codes)
        return codes, out

    def EditOneC(self, cindex, dlatent_tmp=None):
        if dlatent_tmp is None:
            dlatent_tmp = [tmp[self.img_index:(self.img_index + self.num_images)] for tmp in self.dlatents]

        boundary_tmp = [[] for i in range(len(self.dlatents))]

        # only manipulate 1 layer and one channel
        assert len(self.manipulate_layers) == 1

        ml = self.manipulate_layers[0]
        tmp = dlatent_tmp[ml].shape[1]  # ada
        tmp1 = np.zeros(tmp)
        tmp1[cindex] = self.code_std[ml][cindex]  # 1
        boundary_tmp[ml] = tmp1

        codes = self.MSCode(dlatent_tmp, boundary_tmp)
        out = self.GenerateImg(codes)
        return codes, out

    def W2S(self, dlatent_tmp):
        all_s = self.G.synthesis.W2S(torch.from_numpy(dlatent_tmp).to(self.device))
        all_s = S2List(all_s)
        return all_s

    def GetCodeMS(self, num_samples=100_000, batch_size=256, seed=5):
        """Estimates per-channel style-space mean/std from random W samples."""
        torch.manual_seed(seed)
        all_s = None
        with torch.no_grad():
            for b in range(num_samples // batch_size):
                z = torch.randn(batch_size, self.G.z_dim, device=self.device)
                ws = self.G.mapping(z, None, truncation_psi=1.0)
                encoded = S2List(self.G.synthesis.W2S(ws))
                if all_s is None:
                    all_s = [[] for _ in encoded]
                for m, s in enumerate(encoded):
                    all_s[m].append(s)
        all_s = [np.concatenate(s, axis=0) for s in all_s]
        m = [s.mean(axis=0) for s in all_s]
        std = [s.std(axis=0) for s in all_s]
        torch.cuda.empty_cache()
        return m, std

