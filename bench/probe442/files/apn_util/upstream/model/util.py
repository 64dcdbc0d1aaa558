import numpy as np
import scipy.io as sio
import torch
import torch.utils.data as data
from sklearn import preprocessing
from PIL import Image
import os
import os.path
import pickle


def map_label(label, classes):
    mapped_label = torch.LongTensor(label.size())
    for i in range(classes.size(0)):
        mapped_label[label == classes[i]] = i
    return mapped_label


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def default_loader(path):
    return Image.open(path).convert('RGB')


class ImageFilelist(data.Dataset):
    def __init__(self, opt, data_inf=None, transform=None, target_transform=None, dataset=None,
                 flist_reader=None, loader=default_loader, image_type=None, select_num=None):
        self.root = opt.image_root
        self.transform = transform
        self.target_transform = target_transform
        self.loader = loader
        self.dataset = dataset
        self.image_type = image_type
        if image_type == 'test_unseen_small_loc':
            self.img_loc = data_inf.test_unseen_small_loc
        elif image_type == 'test_unseen_loc':
            self.img_loc = data_inf.test_unseen_loc
        elif image_type == 'trainval_loc':
            self.img_loc = data_inf.trainval_loc
        elif image_type == 'train_loc':
            self.img_loc = data_inf.train_loc
        elif image_type == 'test_seen_loc':
            self.img_loc = data_inf.test_seen_loc
        else:
            try:
                sys.exit(0)
            except:
                print("choose the image_type in ImageFileList")

        if select_num is not None:
            # select_num is the number of images that we want to use
            # shuffle the image loc and choose #select_num images
            np.random.shuffle(self.img_loc)
            self.img_loc = self.img_loc[:select_num]

        self.image_files = data_inf.image_files
        self.image_labels = data_inf.label
        self.dataset = opt.dataset
        self.imlist = [(self.image_files[i], self.image_labels[i]) for i in self.img_loc]
        self.image_labels = self.image_labels[self.img_loc]
        label_set = set(self.image_labels.tolist())
        self.image_labels_org = self.image_labels
        if self.image_type != 'test_seen_loc' and self.image_type != 'test_unseen_loc':
            self.image_labels = map_label(torch.from_numpy(self.image_labels),
                                          torch.from_numpy(np.array(sorted(label_set)))).numpy()

    def __getitem__(self, index):
        impath, target = self.imlist[index]
        img = self.loader(os.path.join(self.root, impath))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target, impath

    def __len__(self):
        num = len(self.imlist)
        return num


class DATA_LOADER(object):
    def __init__(self, opt):
        self.read_matdataset(opt)
        self.index_in_epoch = 0
        self.epochs_completed = 0

    def read_matdataset(self, opt):
        matcontent = sio.loadmat(opt.dataroot + "/" + opt.dataset + "/" + opt.image_embedding + ".mat")
        self.label = matcontent['labels'].astype(int).squeeze() - 1
        self.image_files = np.squeeze(matcontent['image_files'])
        img_dir = os.path.join(opt.dataroot, opt.dataset)
        new_image_files = []
        for image_file in self.image_files:
            image_file = image_file[0]
            if opt.dataset == 'CUB':
                image_file = os.path.join(img_dir, 'CUB_200_2011', '/'.join(image_file.split('/')[7:]))
            elif opt.dataset == 'AWA2':
                image_file = os.path.join(img_dir, 'Animals_with_Attributes2', '/'.join(image_file.split('/')[5:]))
            elif opt.dataset == 'SUN':
                image_file = os.path.join(img_dir, '/'.join(image_file.split('/')[7:]))
            new_image_files.append(image_file)
        self.image_files = np.array(new_image_files)

        matcontent = sio.loadmat(opt.dataroot + "/" + opt.dataset + "/" + opt.class_embedding + "_splits.mat")
        # numpy array index starts from 0, matlab starts from 1
        self.trainval_loc = matcontent['trainval_loc'].squeeze() - 1
        self.train_loc = matcontent['train_loc'].squeeze() - 1
        self.val_unseen_loc = matcontent['val_loc'].squeeze() - 1
        self.test_seen_loc = matcontent['test_seen_loc'].squeeze() - 1
        self.test_unseen_loc = matcontent['test_unseen_loc'].squeeze() - 1
        small_loc_path = os.path.join(opt.dataroot, opt.dataset, 'test_unseen_small_loc.pkl')
        if os.path.exists(small_loc_path):
            with open(small_loc_path, 'rb') as f:
                self.test_unseen_small_loc = pickle.load(f)

        self.allclasses_name = matcontent['allclasses_names']
        self.attribute = torch.from_numpy(matcontent['att'].T).float()
        self.attribute /= self.attribute.pow(2).sum(1).sqrt().unsqueeze(1).expand(self.attribute.size(0),
                                                                                    self.attribute.size(1))

        self.train_label = torch.from_numpy(self.label[self.trainval_loc]).long()
        self.test_unseen_label = torch.from_numpy(self.label[self.test_unseen_loc]).long()
        self.test_seen_label = torch.from_numpy(self.label[self.test_seen_loc]).long()

        self.seenclasses = torch.from_numpy(np.unique(self.train_label.numpy()))
        self.unseenclasses = torch.from_numpy(np.unique(self.test_unseen_label.numpy()))
        self.ntrain = self.train_label.size()[0]
        self.ntrain_class = self.seenclasses.size(0)
        self.ntest_class = self.unseenclasses.size(0)
        self.train_class = self.seenclasses.clone()
        self.allclasses = torch.arange(0, self.ntrain_class + self.ntest_class).long()
        self.train_mapped_label = map_label(self.train_label, self.seenclasses)
