import argparse

import torch
from torch.autograd import Variable
import utils
import dataset
from PIL import Image

import models.crnn as crnn

parser = argparse.ArgumentParser(description='Run a pretrained CRNN on a single word image.')
parser.add_argument('--model_path', default='./data/crnn.pth', help='checkpoint written by train.py')
parser.add_argument('--img_path', default='./data/demo.png', help='grayscale word image')
parser.add_argument('--alphabet', default='0123456789abcdefghijklmnopqrstuvwxyz')
args = parser.parse_args()

model = crnn.CRNN(32, 1, len(args.alphabet) + 1, 256)
use_cuda = torch.cuda.is_available()
if use_cuda:
    model = model.cuda()
print('loading pretrained model from %s' % args.model_path)
model.load_state_dict(torch.load(args.model_path))

converter = utils.strLabelConverter(args.alphabet)

transformer = dataset.resizeNormalize((100, 32))
image = Image.open(args.img_path).convert('L')
image = transformer(image)
if use_cuda:
    image = image.cuda()
image = image.view(1, *image.size())
image = Variable(image)

model.eval()
preds = model(image)

_, preds = preds.max(2)
preds = preds.transpose(1, 0).contiguous().view(-1)

preds_size = Variable(torch.IntTensor([preds.size(0)]))
raw_pred = converter.decode(preds.data, preds_size.data, raw=True)
sim_pred = converter.decode(preds.data, preds_size.data, raw=False)
print('%-20s => %-20s' % (raw_pred, sim_pred))
