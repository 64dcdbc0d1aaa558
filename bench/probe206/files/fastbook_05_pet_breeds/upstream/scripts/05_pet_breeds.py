#!/usr/bin/env python
# coding: utf-8
# Chapter 5 -- Image Classification (fastbook/05_pet_breeds.ipynb, exported with `jupyter nbconvert --to script`)
# Run on a single GPU; every section below was a notebook cell.

import gc
from fastbook import *
from fastai.vision.all import *
setup_book()

# ## From Dogs and Cats to Pet Breeds

path = untar_data(URLs.PETS)
Path.BASE_PATH = path
print(path.ls())
print((path/"images").ls())

fname = (path/"images").ls()[0]
print(re.findall(r'(.+)_\d+.jpg$', fname.name))

pets = DataBlock(blocks = (ImageBlock, CategoryBlock),
                 get_items=get_image_files,
                 splitter=RandomSplitter(seed=42),
                 get_y=using_attr(RegexLabeller(r'(.+)_\d+.jpg$'), 'name'),
                 item_tfms=Resize(460),
                 batch_tfms=aug_transforms(size=224, min_scale=0.75))
dls = pets.dataloaders(path/"images")

# ## Presizing

dblock1 = DataBlock(blocks=(ImageBlock(), CategoryBlock()),
                   get_y=parent_label,
                   item_tfms=Resize(460))
# Place an image in the 'images/grizzly.jpg' subfolder where this notebook is located before running this
dls1 = dblock1.dataloaders([(Path.cwd()/'images'/'grizzly.jpg')]*100, bs=8)
dls1.train.get_idxs = lambda: Inf.ones
x,y = dls1.valid.one_batch()
_,axs = subplots(1, 2)

x1 = TensorImage(x.clone())
x1 = x1.affine_coord(sz=224)
x1 = x1.rotate(draw=30, p=1.)
x1 = x1.zoom(draw=1.2, p=1.)
x1 = x1.warp(draw_x=-0.2, draw_y=0.2, p=1.)

tfms = setup_aug_tfms([Rotate(draw=30, p=1, size=224), Zoom(draw=1.2, p=1., size=224),
                       Warp(draw_x=-0.2, draw_y=0.2, p=1., size=224)])
x = Pipeline(tfms)(x)
#x.affine_coord(coord_tfm=coord_tfm, sz=size, mode=mode, pad_mode=pad_mode)
TensorImage(x[0]).show(ctx=axs[0])
TensorImage(x1[0]).show(ctx=axs[1]);

# ### Checking and Debugging a DataBlock

dls.show_batch(nrows=1, ncols=3)

pets1 = DataBlock(blocks = (ImageBlock, CategoryBlock),
                 get_items=get_image_files,
                 splitter=RandomSplitter(seed=42),
                 get_y=using_attr(RegexLabeller(r'(.+)_\d+.jpg$'), 'name'))
try: pets1.summary(path/"images")
except Exception as e: print(f"summary failed as expected: {e}")

learn = vision_learner(dls, resnet34, metrics=error_rate)
learn.fine_tune(2)

# ## Cross-Entropy Loss
# ### Viewing Activations and Labels

x,y = dls.one_batch()
print(y)
preds,_ = learn.get_preds(dl=[(x,y)])
print(preds[0])
print(len(preds[0]),preds[0].sum())

# ### Softmax

plot_function(torch.sigmoid, min=-4,max=4)

# hide
torch.random.manual_seed(42);
acts = torch.randn((6,2))*2
print(acts)
print(acts.sigmoid())
print((acts[:,0]-acts[:,1]).sigmoid())
sm_acts = torch.softmax(acts, dim=1)
print(sm_acts)

def softmax(x): return exp(x) / exp(x).sum(dim=1, keepdim=True)

# ### Log Likelihood

targ = tensor([0,1,0,1,1,0])
idx = range(6)
print(sm_acts[idx, targ])

df = pd.DataFrame(sm_acts, columns=["3","7"])
df['targ'] = targ
df['idx'] = idx
df['result'] = sm_acts[range(6), targ]
t = df.style.hide_index()
#To have html code compatible with our script
html = t._repr_html_().split('</style>')[1]
html = re.sub(r'<table id="([^"]+)"\s*>', r'<table >', html)
display(HTML(html))

print(-sm_acts[idx, targ])
print(F.nll_loss(sm_acts, targ, reduction='none'))

# #### Taking the Log

plot_function(torch.log, min=0,max=4)
loss_func = nn.CrossEntropyLoss()
print(loss_func(acts, targ))
print(F.cross_entropy(acts, targ))
nn.CrossEntropyLoss(reduction='none')(acts, targ)

# ## Model Interpretation

interp = ClassificationInterpretation.from_learner(learn)
interp.plot_confusion_matrix(figsize=(12,12), dpi=60)
print(interp.most_confused(min_val=5))

# ## Improving Our Model
# ### The Learning Rate Finder

learn = vision_learner(dls, resnet34, metrics=error_rate)
learn.fine_tune(1, base_lr=0.1)

learn = vision_learner(dls, resnet34, metrics=error_rate)
lr_min,lr_steep = learn.lr_find(suggest_funcs=(minimum, steep))
print(f"Minimum/10: {lr_min:.2e}, steepest point: {lr_steep:.2e}")

learn = vision_learner(dls, resnet34, metrics=error_rate)
learn.fine_tune(2, base_lr=3e-3)

# ### Unfreezing and Transfer Learning

learn = vision_learner(dls, resnet34, metrics=error_rate)
learn.fit_one_cycle(3, 3e-3)
learn.unfreeze()
learn.lr_find()
learn.fit_one_cycle(6, lr_max=1e-5)

# ### Discriminative Learning Rates

learn = vision_learner(dls, resnet34, metrics=error_rate)
learn.fit_one_cycle(3, 3e-3)
learn.unfreeze()
learn.fit_one_cycle(12, lr_max=slice(1e-6,1e-4))
learn.recorder.plot_loss()

# ### Deeper Architectures
# A larger model takes a lot more GPU memory; free what the previous learners held first,
# otherwise you'll get an out-of-memory error ("CUDA out of memory") on an 8 GB card.

del learn
gc.collect()
torch.cuda.empty_cache()

from fastai.callback.fp16 import *
learn = vision_learner(dls, resnet50, metrics=error_rate).to_fp16()
learn.fine_tune(6, freeze_epochs=3)

# Check the activations really are half precision on the GPU
xb,yb = dls.one_batch()
with torch.no_grad(), torch.cuda.amp.autocast():
    out = learn.model(xb.cuda())
print(out.dtype, out.device)

learn.export('pets_resnet50.pkl')
