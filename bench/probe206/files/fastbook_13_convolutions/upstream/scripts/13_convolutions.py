#!/usr/bin/env python
# coding: utf-8
# Chapter 13 -- Convolutional Neural Networks (fastbook/13_convolutions.ipynb as a script)

from fastbook import *
from fastai.vision.all import *
from fastai.callback.hook import *
setup_book()

matplotlib.rc('image', cmap='Greys')

# ## The Magic of Convolutions

top_edge = tensor([[-1,-1,-1],
                   [ 0, 0, 0],
                   [ 1, 1, 1]]).float()

path = untar_data(URLs.MNIST_SAMPLE)
Path.BASE_PATH = path
im3 = Image.open(path/'train'/'3'/'12.png')
show_image(im3);

show_image(top_edge, noframe=False);

df = pd.DataFrame(tensor(im3)[:10,:20])
df.style.set_properties(**{'font-size':'6pt'}).background_gradient('Greys')

im3_t = tensor(im3)
print(im3_t[0:3,0:3] * top_edge)
print((im3_t[0:3,0:3] * top_edge).sum())

def apply_kernel(row, col, kernel):
    return (im3_t[row-1:row+2,col-1:col+2] * kernel).sum()

print(apply_kernel(5,7,top_edge))

# ### Mapping a Convolution Kernel

rng = range(1,27)
top_edge3 = tensor([[apply_kernel(i,j,top_edge) for j in rng] for i in rng])
show_image(top_edge3);

left_edge = tensor([[-1,1,0],
                    [-1,1,0],
                    [-1,1,0]]).float()
left_edge3 = tensor([[apply_kernel(i,j,left_edge) for j in rng] for i in rng])
show_image(left_edge3);

# ### Convolutions in PyTorch

diag1_edge = tensor([[ 0,-1, 1],
                     [-1, 1, 0],
                     [ 1, 0, 0]]).float()
diag2_edge = tensor([[ 1,-1, 0],
                     [ 0, 1,-1],
                     [ 0, 0, 1]]).float()

edge_kernels = torch.stack([left_edge, top_edge, diag1_edge, diag2_edge])
print(edge_kernels.shape)

mnist = DataBlock((ImageBlock(cls=PILImageBW), CategoryBlock),
                  get_items=get_image_files,
                  splitter=GrandparentSplitter(),
                  get_y=parent_label)

dls = mnist.dataloaders(path)
xb,yb = first(dls.valid)
print(xb.shape)

# the batch lives on the GPU; pull it back to the CPU for the plain-tensor experiments
xb,yb = to_cpu(xb),to_cpu(yb)

edge_kernels = edge_kernels.unsqueeze(1)
print(edge_kernels.shape)

batch_features = F.conv2d(xb, edge_kernels)
print(batch_features.shape)
show_image(batch_features[0,0]);

# The same convolution on the GPU, timed, to show why we don't do this with Python loops
xb_gpu, ek_gpu = xb.cuda(), edge_kernels.cuda()
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(100): F.conv2d(xb_gpu, ek_gpu)
torch.cuda.synchronize(); elapsed = time.perf_counter()-start
print(f"100 conv2d calls on GPU: {elapsed*1000:.1f} ms")

# ## Our First Convolutional Neural Network
# ### Creating the CNN

simple_net = nn.Sequential(
    nn.Linear(28*28,30),
    nn.ReLU(),
    nn.Linear(30,1)
)

broken_cnn = sequential(
    nn.Conv2d(1,30, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.Conv2d(30,1, kernel_size=3, padding=1)
)
print(broken_cnn(xb).shape)

def conv(ni, nf, ks=3, act=True):
    res = nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks//2)
    if act: res = nn.Sequential(res, nn.ReLU())
    return res

simple_cnn = sequential(
    conv(1 ,4),            #14x14
    conv(4 ,8),            #7x7
    conv(8 ,16),           #4x4
    conv(16,32),           #2x2
    conv(32,2, act=False), #1x1
    Flatten(),
)
print(simple_cnn(xb).shape)

learn = Learner(dls, simple_cnn, loss_func=F.cross_entropy, metrics=accuracy)
learn.summary()
learn.fit_one_cycle(2, 0.01)

# ## Improving Training Stability

path = untar_data(URLs.MNIST)

def get_dls(bs=64):
    return DataBlock(
        blocks=(ImageBlock(cls=PILImageBW), CategoryBlock),
        get_items=get_image_files,
        splitter=GrandparentSplitter('training','testing'),
        get_y=parent_label,
        batch_tfms=Normalize()
    ).dataloaders(path, bs=bs)

dls = get_dls()
dls.show_batch(max_n=9, figsize=(4,4))

# ### A Simple Baseline

def conv(ni, nf, ks=3, act=True):
    layers = [nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks//2)]
    if act: layers.append(nn.ReLU())
    layers.append(nn.BatchNorm2d(nf))
    return nn.Sequential(*layers)

def simple_cnn():
    return sequential(
        conv(1 ,8, ks=5),        #14x14
        conv(8 ,16),             #7x7
        conv(16,32),             #4x4
        conv(32,64),             #2x2
        conv(64,10, act=False),  #1x1
        Flatten(),
    )

def fit(epochs=1, lr=0.06):
    learn = Learner(dls, simple_cnn(), loss_func=F.cross_entropy,
                    metrics=accuracy, cbs=ActivationStats(with_hist=True))
    learn.fit_one_cycle(epochs, lr)
    return learn

learn = fit()
learn.activation_stats.plot_layer_stats(-2)
learn.activation_stats.color_dim(-2)

# ### Increase Batch Size

dls = get_dls(512)
learn = fit()
learn.activation_stats.plot_layer_stats(-2)

# ### 1cycle Training

def fit(epochs=1, lr=0.06):
    learn = Learner(dls, simple_cnn(), loss_func=F.cross_entropy,
                    metrics=accuracy, cbs=ActivationStats(with_hist=True))
    learn.fit_one_cycle(epochs, lr)
    return learn

learn = fit()
learn.recorder.plot_sched()
learn.activation_stats.plot_layer_stats(-2)

# ### Batch Normalization

learn = fit(5, lr=0.1)

# ### Inspecting a trained filter on the GPU model

with torch.no_grad():
    w = learn.model[0][0].weight.detach()
    print(w.device, w.shape)
    feats = learn.model[0](xb.cuda())
print(feats.shape, feats.mean().item(), feats.std().item())
