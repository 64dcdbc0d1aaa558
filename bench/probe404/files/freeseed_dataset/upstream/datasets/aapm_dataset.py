import os
import glob
import random
import numpy as np
import torch
from torch.utils.data import Dataset


class AAPMSparseDataset(Dataset):
    """AAPM-Mayo low-dose CT challenge slices (full dose), stored as HU .npy files.

    Sparse-view inputs are simulated on the fly on the GPU (see CTTools), so the
    dataset only returns the full-dose image in attenuation units and its HU
    version for metric computation.
    """

    # patients used for validation / test as in the FreeSeed paper
    VAL_PATIENTS = ['L067']
    TEST_PATIENTS = ['L109', 'L143', 'L192', 'L286', 'L291', 'L310', 'L333', 'L506']

    def __init__(self, root, mode='train', dataset_name='aapm', min_hu=-1024, max_hu=3072,
                 mu_water=0.192, img_size=256, augment=True):
        super(AAPMSparseDataset, self).__init__()
        assert mode in ('train', 'val', 'test')
        self.mode = mode
        self.min_hu = min_hu
        self.max_hu = max_hu
        self.mu_water = mu_water
        self.img_size = img_size
        self.augment = augment and mode == 'train'
        files = sorted(glob.glob(os.path.join(root, '*', 'full_1mm', '*.npy')))
        patient = lambda f: f.split(os.sep)[-3]
        if mode == 'train':
            files = [f for f in files if patient(f) not in self.VAL_PATIENTS + self.TEST_PATIENTS]
        elif mode == 'val':
            files = [f for f in files if patient(f) in self.VAL_PATIENTS]
        else:
            files = [f for f in files if patient(f) in self.TEST_PATIENTS]
        self.files = files

    def __len__(self):
        return len(self.files)

    def _resize(self, hu):
        if hu.shape[0] == self.img_size:
            return hu
        t = torch.from_numpy(hu)[None, None]
        t = torch.nn.functional.interpolate(t, size=(self.img_size, self.img_size), mode='bilinear',
                                            align_corners=False)
        return t[0, 0].numpy()

    def __getitem__(self, index):
        hu = np.load(self.files[index]).astype(np.float32)
        hu = np.clip(hu, self.min_hu, self.max_hu)
        hu = self._resize(hu)
        if self.augment:
            if random.random() < 0.5:
                hu = hu[:, ::-1]
            k = random.randint(0, 3)
            hu = np.rot90(hu, k)
        hu = np.ascontiguousarray(hu)
        mu = self.mu_water * (1.0 + hu / 1000.0)
        mu = np.clip(mu, 0, None).astype(np.float32)
        return torch.from_numpy(mu)[None], torch.from_numpy(hu)[None], os.path.basename(self.files[index])


def preprocess_aapm(src_root, dst_root, slice_thickness='1mm'):
    """Convert the AAPM-Mayo DICOM series to per-slice HU .npy files.

    Layout produced: dst_root/<patient>/full_<thickness>/<index>.npy
    """
    import pydicom
    patients = sorted(d for d in os.listdir(src_root) if d.startswith('L'))
    for patient in patients:
        src = os.path.join(src_root, patient, 'full_{}'.format(slice_thickness))
        dst = os.path.join(dst_root, patient, 'full_{}'.format(slice_thickness))
        os.makedirs(dst, exist_ok=True)
        slices = [pydicom.dcmread(os.path.join(src, f)) for f in os.listdir(src) if f.endswith('.IMA')]
        slices.sort(key=lambda ds: float(ds.ImagePositionPatient[2]))
        for i, ds in enumerate(slices):
            hu = ds.pixel_array.astype(np.float32) * float(ds.RescaleSlope) + float(ds.RescaleIntercept)
            np.save(os.path.join(dst, '{:04d}.npy'.format(i)), hu.astype(np.float32))
        print('{}: {} slices'.format(patient, len(slices)))


if __name__ == '__main__':
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument('--src', required=True)
    parser.add_argument('--dst', required=True)
    parser.add_argument('--thickness', default='1mm')
    args = parser.parse_args()
    preprocess_aapm(args.src, args.dst, args.thickness)
