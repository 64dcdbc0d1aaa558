#!/usr/bin/env python
# coding: utf-8
# Chapter 17 -- A Neural Net from the Foundations (fastbook/17_foundations.ipynb as a script)
#
# The notebook used %timeit; the timings below use timeit/perf_counter and CUDA events
# so that the script can be run headless on the course GPU box.

import timeit
import torch
from torch import tensor
from fastbook import *

def gpu_time(f, n=10):
    "Time `f` on the GPU with CUDA events (ms per call)"
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    f()  # warm up
    start.record()
    for _ in range(n): f()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / n

# ## Building a Neural Net Layer from Scratch
# ### Modeling a Neuron / Matrix Multiplication from Scratch

def matmul(a,b):
    ar,ac = a.shape # n_rows * n_cols
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac): c[i,j] += a[i,k] * b[k,j]
    return c

m1 = torch.randn(5,28*28)
m2 = torch.randn(784,10)

t = timeit.timeit(lambda: matmul(m1, m2), number=1)
print(f"python triple loop: {t*1000:.0f} ms")
t = timeit.timeit(lambda: m1@m2, number=20)/20
print(f"torch @ on CPU: {t*1e6:.1f} µs")

# ### Elementwise Arithmetic

a = tensor([10., 6, -4])
b = tensor([2., 8, 7])
print(a + b, a < b, (a < b).all(), (a==b).all())
print((a + b).mean().item())
m = tensor([[1., 2, 3], [4,5,6], [7,8,9]])
print(m*m)

def matmul(a,b):
    ar,ac = a.shape
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i,j] = (a[i] * b[:,j]).sum()
    return c

t = timeit.timeit(lambda: matmul(m1, m2), number=5)/5
print(f"elementwise inner loop: {t*1000:.2f} ms")

# ### Broadcasting

a = tensor([10., 6, -4])
print(a > 0)
m = tensor([[1., 2, 3], [4,5,6], [7,8,9]])
print((m - 5) / 2.5)
c = tensor([10.,20,30])
print(m + c)
print(c.expand_as(m))
t = c.expand_as(m)
print(t.storage())
print(t.stride(), t.shape)
print(c.unsqueeze(0).shape,c.unsqueeze(1).shape)
print(c[:,None].expand_as(m))

def matmul(a,b):
    ar,ac = a.shape
    br,bc = b.shape
    assert ac==br
    c = torch.zeros(ar, bc)
    for i in range(ar):
#       c[i,j] = (a[i,:]          * b[:,j]).sum() # previous
        c[i]   = (a[i  ].unsqueeze(-1) * b).sum(dim=0)
    return c

t = timeit.timeit(lambda: matmul(m1, m2), number=20)/20
print(f"broadcast matmul: {t*1e6:.0f} µs")

# ### Einstein Summation

def matmul(a,b): return torch.einsum('ik,kj->ij', a, b)
t = timeit.timeit(lambda: matmul(m1, m2), number=20)/20
print(f"einsum: {t*1e6:.0f} µs")

# ### ... and on the GPU
# Bigger matrices so the GPU has something to do

big1, big2 = torch.randn(4096, 4096), torch.randn(4096, 4096)
g1, g2 = big1.cuda(), big2.cuda()
print(f"CPU 4096^2 matmul: {timeit.timeit(lambda: big1@big2, number=3)/3*1000:.1f} ms")
print(f"GPU 4096^2 matmul: {gpu_time(lambda: g1@g2):.2f} ms")
print(f"GPU half matmul:   {gpu_time(lambda: g1.half()@g2.half()):.2f} ms")
assert torch.allclose((g1@g2).cpu(), big1@big2, atol=1e-2, rtol=1e-3)

# ## The Forward and Backward Passes
# ### Defining and Initializing a Layer

def lin(x, w, b): return x @ w + b

x = torch.randn(200, 100)
y = torch.randn(200)

w1 = torch.randn(100,50)
b1 = torch.zeros(50)
w2 = torch.randn(50,1)
b2 = torch.zeros(1)

l1 = lin(x, w1, b1)
print(l1.shape, l1.mean(), l1.std())

x = torch.randn(200, 100)
for i in range(50): x = x @ torch.randn(100,100)
print(x[0:5,0:5])

x = torch.randn(200, 100)
for i in range(50): x = x @ (torch.randn(100,100) * 0.01)
print(x[0:5,0:5])

x = torch.randn(200, 100)
for i in range(50): x = x @ (torch.randn(100,100) * 0.1)
print(x[0:5,0:5], x.std())

x = torch.randn(200, 100)
y = torch.randn(200)

from math import sqrt
w1 = torch.randn(100,50) / sqrt(100)
b1 = torch.zeros(50)
w2 = torch.randn(50,1) / sqrt(50)
b2 = torch.zeros(1)

def relu(x): return x.clamp_min(0.)

w1 = torch.randn(100,50) * sqrt(2 / 100)
l1 = lin(x, w1, b1)
l2 = relu(l1)
print(l2.mean(), l2.std())

def model(x):
    l1 = lin(x, w1, b1)
    l2 = relu(l1)
    l3 = lin(l2, w2, b2)
    return l3

out = model(x)
def mse(output, targ): return (output.squeeze(-1) - targ).pow(2).mean()
loss = mse(out, y)

# ### Gradients and the Backward Pass

def mse_grad(inp, targ):
    # grad of loss with respect to output of previous layer
    inp.g = 2. * (inp.squeeze() - targ).unsqueeze(-1) / inp.shape[0]

def relu_grad(inp, out):
    # grad of relu with respect to input activations
    inp.g = (inp>0).float() * out.g

def lin_grad(inp, out, w, b):
    # grad of matmul with respect to input
    inp.g = out.g @ w.t()
    w.g = inp.t() @ out.g
    b.g = out.g.sum(0)

def forward_and_backward(inp, targ):
    # forward pass:
    l1 = inp @ w1 + b1
    l2 = relu(l1)
    out = l2 @ w2 + b2
    # we don't actually need the loss in backward!
    loss = mse(out, targ)

    # backward pass:
    mse_grad(out, targ)
    lin_grad(l2, out, w2, b2)
    relu_grad(l1, l2)
    lin_grad(inp, l1, w1, b1)

forward_and_backward(x, y)

# ### Refactoring the Model

class Relu():
    def __call__(self, inp):
        self.inp = inp
        self.out = inp.clamp_min(0.)
        return self.out
    def backward(self): self.inp.g = (self.inp>0).float() * self.out.g

class Lin():
    def __init__(self, w, b): self.w,self.b = w,b
    def __call__(self, inp):
        self.inp = inp
        self.out = inp@self.w + self.b
        return self.out
    def backward(self):
        self.inp.g = self.out.g @ self.w.t()
        self.w.g = self.inp.t() @ self.out.g
        self.b.g = self.out.g.sum(0)

class Mse():
    def __call__(self, inp, targ):
        self.inp = inp
        self.targ = targ
        self.out = (inp.squeeze() - targ).pow(2).mean()
        return self.out
    def backward(self):
        x = (self.inp.squeeze()-self.targ).unsqueeze(-1)
        self.inp.g = 2.*x/self.targ.shape[0]

class Model():
    def __init__(self, w1, b1, w2, b2):
        self.layers = [Lin(w1,b1), Relu(), Lin(w2,b2)]
        self.loss = Mse()
    def __call__(self, x, targ):
        for l in self.layers: x = l(x)
        return self.loss(x, targ)
    def backward(self):
        self.loss.backward()
        for l in reversed(self.layers): l.backward()

model = Model(w1, b1, w2, b2)
loss = model(x, y)
model.backward()

# ### Going to PyTorch

class LinearLayer(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * sqrt(2/n_in))
        self.bias = nn.Parameter(torch.zeros(n_out))
    def forward(self, x): return x @ self.weight.t() + self.bias

class TorchModel(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(n_in,nh), nn.ReLU(), nn.Linear(nh,n_out))
        self.loss = mse
    def forward(self, x, targ): return self.loss(self.layers(x).squeeze(), targ)

dev = 'cuda' if torch.cuda.is_available() else 'cpu'
tm = TorchModel(100, 50, 1).to(dev)
xg, yg = x.to(dev), y.to(dev)
loss = tm(xg, yg)
loss.backward()
print(dev, loss.item(), tm.layers[0].weight.grad.norm().item())
