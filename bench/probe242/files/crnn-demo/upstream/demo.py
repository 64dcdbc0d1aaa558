import argparse
import os

import torch
from torch.autograd import Variable
import utils
import dataset
from PIL import Image

import models.crnn as crnn

parser = argparse.ArgumentParser()
parser.add_argument('--model_path', default='./data/crnn.pth')
parser.add_argument('--alphabet', default='0123456789abcdefghijklmnopqrstuvwxyz')
parser.add_argument('images', nargs='*', default=['./data/demo.png'])
args = parser.parse_args()

model_path = args.model_path
alphabet = args.alphabet

use_cuda = torch.cuda.is_available()
model = crnn.CRNN(32, 1, 37, 256)
if use_cuda:
    model = model.cuda()
print('loading pretrained model from %s' % model_path)
state_dict = torch.load(model_path)
# the released checkpoint was trained with nn.DataParallel
state_dict = {k.replace('module.', '', 1): v for k, v in state_dict.items()}
model.load_state_dict(state_dict)

converter = utils.strLabelConverter(alphabet)

transformer = dataset.resizeNormalize((100, 32))
model.eval()
for img_path in args.images:
    image = Image.open(img_path).convert('L')
    image = transformer(image)
    if use_cuda:
        image = image.cuda()
    image = image.view(1, *image.size())
    image = Variable(image)

    with torch.no_grad():
        preds = model(image)

    _, preds = preds.max(2)
    preds = preds.transpose(1, 0).contiguous().view(-1)

    preds_size = Variable(torch.IntTensor([preds.size(0)]))
    raw_pred = converter.decode(preds.data, preds_size.data, raw=True)
    sim_pred = converter.decode(preds.data, preds_size.data, raw=False)
    print('%s: %-20s => %-20s' % (os.path.basename(img_path), raw_pred, sim_pred))
