"""PyTorch dataset for the Diverse Dermatology Images (DDI) dataset.

The metadata file ddi_metadata.csv has one row per image with columns
DDI_ID, DDI_file, skin_tone (12 / 34 / 56), malignant (True/False) and disease.
"""
import os

import pandas as pd
import torchvision.transforms as transforms
from torchvision.datasets import ImageFolder
from torchvision.datasets.folder import default_loader


# inception-v3 input size; DeepDerm and HAM10000 models were trained at 299 px
test_transform = transforms.Compose([
    transforms.Resize(299),
    transforms.CenterCrop(299),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.485, 0.456, 0.406],
                         std=[0.229, 0.224, 0.225]),
])


class DDI_Dataset(ImageFolder):
    _DDI_CSV = 'ddi_metadata.csv'

    def __init__(self, root, csv_path=None, transform=None, target_transform=None,
                 loader=default_loader, is_valid_file=None, subset=None):
        """
        Args:
            root (string): Root directory of dataset.
            csv_path (string): Path to the metadata CSV file. Defaults to
                `{root}/ddi_metadata.csv`.
            transform (callable, optional): A function/transform that takes in
                a PIL image and returns a transformed version.
            subset (string, optional): one of "12", "34", "56" to keep only
                images of that Fitzpatrick group.
        """
        super(DDI_Dataset, self).__init__(
            root,
            transform=transform,
            target_transform=target_transform,
            loader=loader,
            is_valid_file=is_valid_file)

        if csv_path is None:
            csv_path = os.path.join(root, self._DDI_CSV)
        assert os.path.exists(csv_path), f"Path not found <{csv_path}>."
        self.annotations = pd.read_csv(csv_path)
        m_key = 'malignant'
        if m_key not in self.annotations:
            self.annotations[m_key] = self.annotations['malignancy(malig=1)'].apply(lambda x: x == 1)

        if subset is not None:
            keep = self.annotations.skin_tone.astype(str) == str(subset)
            keep_files = set(self.annotations[keep].DDI_file)
            self.samples = [s for s in self.samples if os.path.basename(s[0]) in keep_files]
            self.imgs = self.samples

    def __getitem__(self, index):
        path, _ = self.samples[index]
        img = self.loader(path)
        if self.transform is not None:
            img = self.transform(img)
        row = self.annotations[self.annotations.DDI_file == path.split("/")[-1]]
        target = int(row.malignant.values[0])  # 1 if malignant, 0 if benign
        skin_tone = row.skin_tone.values[0]  # Fitzpatrick- 12, 34, or 56
        return path, img, target, skin_tone

    def subset(self, skin_tone=None, diagnosis=None):
        """Return a subset of the DDI dataset based on skin tone and/or diagnosis."""
        skin_tone = [12, 34, 56] if skin_tone is None else skin_tone
        diagnosis = ["benign", "malignant"] if diagnosis is None else diagnosis
        for si in skin_tone:
            assert si in [12, 34, 56], f"{si} is not a valid skin tone"
        for di in diagnosis:
            assert di in ["benign", "malignant"], f"{di} is not a valid diagnosis"
        indices = []
        for i, (path, _) in enumerate(self.samples):
            row = self.annotations[self.annotations.DDI_file == os.path.basename(path)]
            tone = int(row.skin_tone.values[0])
            mal = "malignant" if bool(row.malignant.values[0]) else "benign"
            if tone in skin_tone and mal in diagnosis:
                indices.append(i)
        import torch.utils.data
        return torch.utils.data.Subset(self, indices)
