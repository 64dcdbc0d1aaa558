import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import slayerCuda
# import matplotlib.pyplot as plt

# # Consider dictionary for easier iteration and better scalability
# class yamlParams(object):
#     '''
#     This class reads yaml parameter file and allows dictionary like access to the members.
#     '''


class spikeLayer(torch.nn.Module):
    '''
    This class defines the main engine of SLAYER.
    It provides necessary functions for describing a SNN layer.
    The input to output connection can be fully-connected, convolutional, or aggregation (pool)
    It also defines the psp operation and spiking mechanism of a spiking neuron in the layer.

    **Important:** It assumes all the tensors that are being processed are 5 dimensional.
    (Batch, Channels, Height, Width, Time) or ``NCHWT`` format.
    The user must make sure that an input of correct dimension is supplied.

    *If the layer does not have spatial dimension, the neurons can be distributed along either
    Channel, Height or Width dimension where Channel * Height * Width is equal to number of neurons.
    It is recommended (for speed reasons) to define the neuons in Channels dimension and make Height and Width
    dimension one.*

    Arguments:
        * ``neuronDesc`` (``slayerParams.yamlParams``): spiking neuron descriptor.
            .. code-block:: python

                neuron:
                    type:     SRMALPHA  # neuron type
                    theta:    10    # neuron threshold
                    tauSr:    10.0  # neuron time constant
                    tauRef:   1.0   # neuron refractory time constant
                    scaleRef: 2     # neuron refractory response scaling (relative to theta)
                    tauRho:   1     # spike function derivative time constant (relative to theta)
                    scaleRho: 1     # spike function derivative scale factor
        * ``simulationDesc`` (``slayerParams.yamlParams``): simulation descriptor
            .. code-block:: python

                simulation:
                    Ts: 1.0         # sampling time (ms)
                    tSample: 300    # time length of sample (ms)
        * ``fullRefKernel`` (``bool``, optional): high resolution refractory kernel (the user shall not use it in practice)

    Usage:

    >>> snnLayer = slayer.spikeLayer(neuronDesc, simulationDesc)
    '''

    def __init__(self, neuronDesc, simulationDesc, fullRefKernel=False):
        super(spikeLayer, self).__init__()
        self.neuron = neuronDesc
        self.simulation = simulationDesc
        self.fullRefKernel = fullRefKernel

        # self.srmKernel = self.calculateSrmKernel()
        # self.refKernel = self.calculateRefKernel()
        self.register_buffer('srmKernel', self.calculateSrmKernel())
        self.register_buffer('refKernel', self.calculateRefKernel())

    def calculateSrmKernel(self):
        srmKernel = self._calculateAlphaKernel(self.neuron['tauSr'])
        # TODO implement for different types of kernels
        # return torch.tensor(srmKernel)
        return torch.tensor(self._zeroPadAndFlip(srmKernel))  # to be removed later when custom cuda code is implemented

    def calculateRefKernel(self):
        if self.fullRefKernel:
            refKernel = self._calculateAlphaKernel(tau=self.neuron['tauRef'], mult=-self.neuron['scaleRef'] * self.neuron['theta'], EPSILON=0.0001)
            # This gives the high precision refractory kernel as MATLAB implementation, however, it is expensive
        else:
            refKernel = self._calculateAlphaKernel(tau=self.neuron['tauRef'], mult=-self.neuron['scaleRef'] * self.neuron['theta'])

        # TODO implement for different types of kernels
        return torch.tensor(refKernel)

    def _calculateAlphaKernel(self, tau, mult=1, EPSILON=0.01):
        # could be made faster... NOT A PRIORITY NOW
        eps = []
        # tauSr = self.neuron['tauSr']
        for t in np.arange(0, self.simulation['tSample'], self.simulation['Ts']):
            epsVal = mult * t / tau * math.exp(1 - t / tau)
            if abs(epsVal) < EPSILON and t > tau:
                break
            eps.append(epsVal)
        return eps

    def _zeroPadAndFlip(self, kernel):
        if (len(kernel) % 2) == 0:
            kernel.append(0)
        prependedZeros = np.zeros((len(kernel) - 1))
        return np.flip(np.concatenate((prependedZeros, kernel))).tolist()

    def psp(self, spike):
        '''
        Applies psp filtering to spikes.
        The output tensor dimension is same as input.

        Arguments:
            * ``spike``: input spike tensor.

        Usage:

        >>> filteredSpike = snnLayer.psp(spike)
        '''
        return _pspFunction.apply(spike, self.srmKernel, self.simulation['Ts'])

    def dense(self, inFeatures, outFeatures, weightScale=10, preHookFx=None):
        '''
        Returns a function that can be called to apply dense layer mapping to input tensor per time instance.
        It behaves similar to ``torch.nn.Linear`` applied for each time instance.
        '''
        return _denseLayer(inFeatures, outFeatures, weightScale, preHookFx)

    def conv(self, inChannels, outChannels, kernelSize, stride=1, padding=0, dilation=1, groups=1, weightScale=100,
             preHookFx=None):
        '''Returns a function that applies a 2-D convolution to every time instance of an NCHWT tensor.'''
        return _convLayer(inChannels, outChannels, kernelSize, stride, padding, dilation, groups, weightScale, preHookFx)

    def pool(self, kernelSize, stride=None, padding=0, dilation=1, preHookFx=None):
        '''Returns a function that sum-pools every time instance, with weights scaled to the neuron threshold.'''
        return _poolLayer(self.neuron['theta'], kernelSize, stride, padding, dilation, preHookFx)

    def spike(self, membranePotential):
        '''
        Applies spike function and refractory response.
        The output tensor dimension is same as input.
        ``membranePotential`` will reflect spike and refractory behaviour as well.

        Arguments:
            * ``membranePotential``: subthreshold membrane potential.

        Usage:

        >>> outSpike = snnLayer.spike(membranePotential)
        '''
        return _spikeFunction.apply(membranePotential, self.refKernel, self.neuron, self.simulation['Ts'])

    def delayShift(self, input, delay, Ts=1):
        '''
        Applies delay in time dimension (assumed to be the last dimension of the tensor) of the input tensor.
        The autograd backward link is established as well.
        '''
        return _delayFunctionNoGradient.apply(input, delay, Ts)

    def delay(self, inputSize):
        '''Returns a function that can be called to apply a learnable delay to each neuron of the input.'''
        return _delayLayer(inputSize, self.simulation['Ts'])


class _denseLayer(nn.Conv3d):
    def __init__(self, inFeatures, outFeatures, weightScale=1, preHookFx=None):
        # extract information for kernel and inChannels
        if type(inFeatures) == int:
            kernel = (1, 1, 1)
            inChannels = inFeatures
        elif len(inFeatures) == 2:
            kernel = (inFeatures[1], inFeatures[0], 1)
            inChannels = 1
        elif len(inFeatures) == 3:
            kernel = (inFeatures[1], inFeatures[0], 1)
            inChannels = inFeatures[2]
        else:
            raise Exception('inFeatures should not be more than 3 dimension. It was: {}'.format(inFeatures.shape))

        if type(outFeatures) == int:
            outChannels = outFeatures
        else:
            raise Exception('outFeatures should not be more than 1 dimesnion. It was: {}'.format(outFeatures.shape))

        super(_denseLayer, self).__init__(inChannels, outChannels, kernel, bias=False)

        if weightScale != 1:
            self.weight = torch.nn.Parameter(weightScale * self.weight)  # scale the weight if needed

        self.preHookFx = preHookFx

    def forward(self, input):
        if self.preHookFx is None:
            return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        else:
            return F.conv3d(input, self.preHookFx(self.weight), self.bias, self.stride, self.padding,
                            self.dilation, self.groups)


class _convLayer(nn.Conv3d):
    def __init__(self, inFeatures, outFeatures, kernelSize, stride=1, padding=0, dilation=1, groups=1, weightScale=1,
                 preHookFx=None):
        kernel = (kernelSize, kernelSize, 1) if type(kernelSize) == int else (kernelSize[0], kernelSize[1], 1)
        stride = (stride, stride, 1) if type(stride) == int else (stride[0], stride[1], 1)
        padding = (padding, padding, 0) if type(padding) == int else (padding[0], padding[1], 0)
        dilation = (dilation, dilation, 1) if type(dilation) == int else (dilation[0], dilation[1], 1)
        super(_convLayer, self).__init__(inFeatures, outFeatures, kernel, stride, padding, dilation, groups, bias=False)
        if weightScale != 1:
            self.weight = torch.nn.Parameter(weightScale * self.weight)
        self.preHookFx = preHookFx

    def forward(self, input):
        weight = self.weight if self.preHookFx is None else self.preHookFx(self.weight)
        return F.conv3d(input, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _poolLayer(nn.Conv3d):
    def __init__(self, theta, kernelSize, stride=None, padding=0, dilation=1, preHookFx=None):
        kernel = (kernelSize, kernelSize, 1) if type(kernelSize) == int else (kernelSize[0], kernelSize[1], 1)
        stride = kernel if stride is None else ((stride, stride, 1) if type(stride) == int else (stride[0], stride[1], 1))
        padding = (padding, padding, 0) if type(padding) == int else (padding[0], padding[1], 0)
        dilation = (dilation, dilation, 1) if type(dilation) == int else (dilation[0], dilation[1], 1)
        super(_poolLayer, self).__init__(1, 1, kernel, stride, padding, dilation, bias=False)
        # set the weights to 1.1 * theta so that a single input spike in the window makes the output spike
        self.weight = torch.nn.Parameter(torch.FloatTensor(1.1 * theta * np.ones((self.weight.shape))).to(self.weight.device),
                                         requires_grad=False)
        self.preHookFx = preHookFx

    def forward(self, input):
        N, C, H, W, T = input.shape
        result = F.conv3d(input.reshape((N, 1, C * H, W, T)), self.weight, self.bias,
                          self.stride, self.padding, self.dilation)
        return result.reshape((result.shape[0], C, -1, result.shape[3], result.shape[4]))


class _spikeFunction(torch.autograd.Function):
    '''
    Custom autograd function for spike generation: threshold crossing plus refractory response on the
    CUDA kernel, spike-escape pdf as the surrogate derivative.
    '''

    @staticmethod
    def forward(ctx, membranePotential, refractoryResponse, neuron, Ts):
        device = membranePotential.device
        dtype = membranePotential.dtype
        threshold = neuron['theta']
        oldDevice = torch.cuda.current_device()

        if device != oldDevice:
            torch.cuda.set_device(device)

        # spikes = slayer_cuda.get_spikes_cuda(membranePotential,
        #                                      torch.empty_like(membranePotential),  # tensor for spikes
        #                                      refractoryResponse,
        #                                      threshold,
        #                                      Ts)
        spikes = slayerCuda.getSpikes(membranePotential.contiguous(), refractoryResponse, threshold, Ts)

        pdfScale = torch.autograd.Variable(torch.tensor(neuron['scaleRho'], device=device, dtype=dtype), requires_grad=False)
        pdfTimeConstant = torch.autograd.Variable(torch.tensor(neuron['tauRho'] * neuron['theta'], device=device, dtype=dtype), requires_grad=False)
        threshold = torch.autograd.Variable(torch.tensor(neuron['theta'], device=device, dtype=dtype), requires_grad=False)
        ctx.save_for_backward(membranePotential, threshold, pdfTimeConstant, pdfScale)

        if device != oldDevice:
            torch.cuda.set_device(oldDevice)

        return spikes

    @staticmethod
    def backward(ctx, gradOutput):
        (membranePotential, threshold, pdfTimeConstant, pdfScale) = ctx.saved_tensors
        spikePdf = pdfScale / pdfTimeConstant * torch.exp(-torch.abs(membranePotential - threshold) / pdfTimeConstant)
        return gradOutput * spikePdf, None, None, None


class _pspFunction(torch.autograd.Function):
    '''Custom autograd function for the causal temporal convolution of spikes with the SRM kernel.'''

    @staticmethod
    def forward(ctx, spike, filter, Ts):
        device = spike.device
        dtype = spike.dtype
        psp = slayerCuda.conv(spike.contiguous(), filter, Ts)
        Ts = torch.autograd.Variable(torch.tensor(Ts, device=device, dtype=dtype), requires_grad=False)
        ctx.save_for_backward(filter, Ts)
        return psp

    @staticmethod
    def backward(ctx, gradOutput):
        (filter, Ts) = ctx.saved_tensors
        gradInput = slayerCuda.corr(gradOutput.contiguous(), filter, Ts)
        if filter.requires_grad is False:
            gradFilter = None
        else:
            gradFilter = None
        return gradInput, gradFilter, None


class _delayLayer(nn.Module):
    def __init__(self, inputSize, Ts):
        super(_delayLayer, self).__init__()
        if type(inputSize) == int:
            inputChannels = inputSize
            inputHeight = 1
            inputWidth = 1
        elif len(inputSize) == 3:
            inputChannels = inputSize[0]
            inputHeight = inputSize[1]
            inputWidth = inputSize[2]
        else:
            raise Exception('inputSize can only be 1 or 2 dimension. It was: {}'.format(inputSize.shape))

        self.delay = torch.nn.Parameter(torch.rand((inputChannels, inputHeight, inputWidth)), requires_grad=True)
        self.Ts = Ts

    def forward(self, input):
        N, C, H, W, Ns = input.shape
        if input.numel() != self.delay.numel() * input.shape[-1]:
            return _delayFunction.apply(input, self.delay.repeat((1, H, W)), self.Ts)
        else:
            return _delayFunction.apply(input, self.delay, self.Ts)


class _delayFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, delay, Ts):
        device = input.device
        dtype = input.dtype
        output = slayerCuda.shift(input.contiguous(), delay.data, Ts)
        Ts = torch.autograd.Variable(torch.tensor(Ts, device=device, dtype=dtype), requires_grad=False)
        ctx.save_for_backward(output, delay.data, Ts)
        return output

    @staticmethod
    def backward(ctx, gradOutput):
        (output, delay, Ts) = ctx.saved_tensors
        diffFilter = torch.tensor([-1, 1], dtype=gradOutput.dtype).to(gradOutput.device) / Ts
        outputDiff = F.conv1d(output.reshape(-1, 1, output.shape[-1]), diffFilter.reshape(1, 1, -1), padding=1)
        outputDiff = outputDiff[..., 1:].reshape(output.shape)
        gradDelay = torch.sum(gradOutput * outputDiff, [0, -1], keepdim=True).reshape(gradOutput.shape[1:-1]) * Ts
        return slayerCuda.shift(gradOutput.contiguous(), -delay, Ts), gradDelay, None


class _delayFunctionNoGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, delay, Ts=1):
        device = input.device
        dtype = input.dtype
        output = slayerCuda.shift(input.contiguous(), delay, Ts)
        Ts = torch.autograd.Variable(torch.tensor(Ts, device=device, dtype=dtype), requires_grad=False)
        delay = torch.autograd.Variable(torch.tensor(delay, device=device, dtype=dtype), requires_grad=False)
        ctx.save_for_backward(delay, Ts)
        return output

    @staticmethod
    def backward(ctx, gradOutput):
        (delay, Ts) = ctx.saved_tensors
        return slayerCuda.shift(gradOutput.contiguous(), -delay, Ts), None, None
