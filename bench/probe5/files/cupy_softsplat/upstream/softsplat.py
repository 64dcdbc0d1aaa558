#!/usr/bin/env python
"""
Differentiable forward warping ("splatting") of a feature map along an optical flow field.

    tenOut = softsplat(tenIn, tenFlow, tenMetric, strMode='soft')

Modes: 'sum' (plain summation), 'avg' (average of all contributions), 'linear' (weighted by
tenMetric), 'soft' (softmax-weighted by exp(tenMetric)). The scatter itself is a CUDA kernel
compiled at runtime through CuPy; kernels are specialised on dtype and tensor strides.
"""

import collections
import os
import re
import typing

import cupy
import torch

##########################################################

objCudacache = {}


def cuda_int32(intIn: int):
    return cupy.int32(intIn)


def cuda_kernel(strFunction: str, strKernel: str, objVariables: typing.Dict):
    if 'device' not in objCudacache:
        objCudacache['device'] = torch.cuda.get_device_name()

    strKey = strFunction
    for strVariable in objVariables:
        objValue = objVariables[strVariable]
        strKey += strVariable
        if objValue is None:
            continue
        elif type(objValue) == int:
            strKey += str(objValue)
        elif type(objValue) == float:
            strKey += str(objValue)
        elif type(objValue) == torch.Tensor:
            strKey += str(objValue.dtype)
            strKey += str(objValue.shape)
            strKey += str(objValue.stride())
    strKey += objCudacache['device']

    if strKey not in objCudacache:
        for strVariable in objVariables:
            objValue = objVariables[strVariable]
            if type(objValue) == torch.Tensor:
                if objValue.dtype == torch.float32:
                    strKernel = strKernel.replace('{{type}}', 'float')
                elif objValue.dtype == torch.float64:
                    strKernel = strKernel.replace('{{type}}', 'double')

        while True:  # SIZE_n(tensor) -> literal size
            objMatch = re.search(r'(SIZE_)([0-4])(\()([^\)]*)(\))', strKernel)
            if objMatch is None:
                break
            intArg = int(objMatch.group(2))
            strTensor = objMatch.group(4)
            intSizes = objVariables[strTensor].size()
            strKernel = strKernel.replace(objMatch.group(), str(intSizes[intArg]))

        while True:  # OFFSET_n(tensor, i0, ..., in-1) -> linear offset through the strides
            objMatch = re.search(r'(OFFSET_)([0-4])(\()([^\)]+)(\))', strKernel)
            if objMatch is None:
                break
            intArgs = int(objMatch.group(2))
            strArgs = objMatch.group(4).split(',')
            intStrides = objVariables[strArgs[0].strip()].stride()
            strIndex = ['((' + strArgs[i + 1].strip() + ')*' + str(intStrides[i]) + ')' for i in range(intArgs)]
            strKernel = strKernel.replace(objMatch.group(0), '(' + str.join('+', strIndex) + ')')

        while True:  # VALUE_n(tensor, i0, ..., in-1) -> element access through the strides
            objMatch = re.search(r'(VALUE_)([0-4])(\()', strKernel)
            if objMatch is None:
                break
            intStart = objMatch.span()[1]
            intStop = objMatch.span()[1]
            intParentheses = 1
            while True:
                intParentheses += 1 if strKernel[intStop] == '(' else 0
                intParentheses -= 1 if strKernel[intStop] == ')' else 0
                if intParentheses == 0:
                    break
                intStop += 1
            intArgs = int(objMatch.group(2))
            strArgs = strKernel[intStart:intStop].split(',')
            strTensor = strArgs[0]
            intStrides = objVariables[strTensor].stride()
            strIndex = []
            for intArg in range(intArgs):
                strIndex.append('((' + strArgs[intArg + 1].replace('{', '(').replace('}', ')').strip() + ')*'
                                + str(intStrides[intArg]) + ')')
            strKernel = strKernel.replace('VALUE_' + str(intArgs) + '(' + strKernel[intStart:intStop] + ')',
                                          strTensor + '[' + str.join('+', strIndex) + ']')

        objCudacache[strKey] = {'strFunction': strFunction, 'strKernel': strKernel}

    return strKey


@cupy.memoize(for_each_device=True)
def cuda_launch(strKey: str):
    if 'CUDA_HOME' not in os.environ:
        os.environ['CUDA_HOME'] = cupy.cuda.get_cuda_path()
    return cupy.cuda.compile_with_cache(objCudacache[strKey]['strKernel'],
                                        tuple(['-I ' + os.environ['CUDA_HOME'],
                                               '-I ' + os.environ['CUDA_HOME'] + '/include'])
                                        ).get_function(objCudacache[strKey]['strFunction'])


##########################################################

SPLAT_OUT = '''
    extern "C" __global__ void __launch_bounds__(512) softsplat_out(
        const int n, const {{type}}* __restrict__ tenIn, const {{type}}* __restrict__ tenFlow,
        {{type}}* __restrict__ tenOut
    ) { for (int intIndex = (blockIdx.x * blockDim.x) + threadIdx.x; intIndex < n; intIndex += blockDim.x * gridDim.x) {
        const int intN = ( intIndex / SIZE_3(tenOut) / SIZE_2(tenOut) / SIZE_1(tenOut) ) % SIZE_0(tenOut);
        const int intC = ( intIndex / SIZE_3(tenOut) / SIZE_2(tenOut)                  ) % SIZE_1(tenOut);
        const int intY = ( intIndex / SIZE_3(tenOut)                                   ) % SIZE_2(tenOut);
        const int intX = ( intIndex                                                    ) % SIZE_3(tenOut);

        {{type}} fltX = ({{type}}) (intX) + VALUE_4(tenFlow, intN, 0, intY, intX);
        {{type}} fltY = ({{type}}) (intY) + VALUE_4(tenFlow, intN, 1, intY, intX);
        if (isfinite(fltX) == false) { return; }
        if (isfinite(fltY) == false) { return; }

        {{type}} fltIn = VALUE_4(tenIn, intN, intC, intY, intX);
        int intNorthwestX = (int) (floor(fltX));
        int intNorthwestY = (int) (floor(fltY));
        int intSoutheastX = intNorthwestX + 1;
        int intSoutheastY = intNorthwestY + 1;

        {{type}} fltNorthwest = (({{type}}) (intSoutheastX) - fltX) * (({{type}}) (intSoutheastY) - fltY);
        {{type}} fltNortheast = (fltX - ({{type}}) (intNorthwestX)) * (({{type}}) (intSoutheastY) - fltY);
        {{type}} fltSouthwest = (({{type}}) (intSoutheastX) - fltX) * (fltY - ({{type}}) (intNorthwestY));
        {{type}} fltSoutheast = (fltX - ({{type}}) (intNorthwestX)) * (fltY - ({{type}}) (intNorthwestY));

        if ((intNorthwestX >= 0) && (intNorthwestX < SIZE_3(tenOut)) && (intNorthwestY >= 0) && (intNorthwestY < SIZE_2(tenOut))) {
            atomicAdd(&tenOut[OFFSET_4(tenOut, intN, intC, intNorthwestY, intNorthwestX)], fltIn * fltNorthwest);
        }
        if ((intSoutheastX >= 0) && (intSoutheastX < SIZE_3(tenOut)) && (intSoutheastY >= 0) && (intSoutheastY < SIZE_2(tenOut))) {
            atomicAdd(&tenOut[OFFSET_4(tenOut, intN, intC, intSoutheastY, intSoutheastX)], fltIn * fltSoutheast);
        }
    } }
'''

SPLAT_INGRAD = SPLAT_OUT.replace('softsplat_out', 'softsplat_ingrad')


class softsplat_func(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(self, tenIn, tenFlow):
        tenOut = tenIn.new_zeros([tenIn.shape[0], tenIn.shape[1], tenIn.shape[2], tenIn.shape[3]])

        if tenIn.is_cuda == True:
            cuda_launch(cuda_kernel('softsplat_out', SPLAT_OUT, {
                'tenIn': tenIn,
                'tenFlow': tenFlow,
                'tenOut': tenOut,
            }))(
                grid=tuple([int((tenOut.nelement() + 512 - 1) / 512), 1, 1]),
                block=tuple([512, 1, 1]),
                args=[cuda_int32(tenOut.nelement()), tenIn.data_ptr(), tenFlow.data_ptr(), tenOut.data_ptr()],
                stream=collections.namedtuple('Stream', 'ptr')(torch.cuda.current_stream().cuda_stream)
            )

        elif tenIn.is_cuda != True:
            assert (False)  # CPU is not supported

        self.save_for_backward(tenIn, tenFlow)
        return tenOut

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(self, tenOutgrad):
        tenIn, tenFlow = self.saved_tensors
        tenOutgrad = tenOutgrad.contiguous()
        assert (tenOutgrad.is_cuda == True)

        tenIngrad = tenIn.new_zeros([tenIn.shape[0], tenIn.shape[1], tenIn.shape[2], tenIn.shape[3]]) \
            if self.needs_input_grad[0] else None
        tenFlowgrad = tenFlow.new_zeros([tenFlow.shape[0], tenFlow.shape[1], tenFlow.shape[2], tenFlow.shape[3]]) \
            if self.needs_input_grad[1] else None

        if tenIngrad is not None:
            cuda_launch(cuda_kernel('softsplat_ingrad', SPLAT_INGRAD, {
                'tenIn': tenIn,
                'tenFlow': tenFlow,
                'tenOutgrad': tenOutgrad,
                'tenIngrad': tenIngrad,
            }))(
                grid=tuple([int((tenIngrad.nelement() + 512 - 1) / 512), 1, 1]),
                block=tuple([512, 1, 1]),
                args=[cuda_int32(tenIngrad.nelement()), tenIn.data_ptr(), tenFlow.data_ptr(),
                      tenOutgrad.data_ptr(), tenIngrad.data_ptr()],
                stream=collections.namedtuple('Stream', 'ptr')(torch.cuda.current_stream().cuda_stream)  # ingrad
            )

        if tenFlowgrad is not None:
            raise NotImplementedError('flow gradient kernel omitted in this excerpt')

        return tenIngrad, tenFlowgrad


def softsplat(tenIn: torch.Tensor, tenFlow: torch.Tensor, tenMetric: typing.Optional[torch.Tensor], strMode: str):
    assert (strMode.split('-')[0] in ['sum', 'avg', 'linear', 'soft'])

    if strMode == 'sum':
        assert (tenMetric is None)
    if strMode == 'avg':
        assert (tenMetric is None)
    if strMode.split('-')[0] == 'linear':
        assert (tenMetric is not None)
    if strMode.split('-')[0] == 'soft':
        assert (tenMetric is not None)

    if strMode == 'avg':
        tenIn = torch.cat([tenIn, tenIn.new_ones([tenIn.shape[0], 1, tenIn.shape[2], tenIn.shape[3]])], 1)
    elif strMode.split('-')[0] == 'linear':
        tenIn = torch.cat([tenIn * tenMetric, tenMetric], 1)
    elif strMode.split('-')[0] == 'soft':
        tenIn = torch.cat([tenIn * tenMetric.exp(), tenMetric.exp()], 1)

    tenOut = softsplat_func.apply(tenIn, tenFlow)

    if strMode.split('-')[0] in ['avg', 'linear', 'soft']:
        tenNormalize = tenOut[:, -1:, :, :]
        if len(strMode.split('-')) == 1:
            tenNormalize = tenNormalize + 0.0000001
        elif strMode.split('-')[1] == 'addeps':
            tenNormalize = tenNormalize + 0.0000001
        elif strMode.split('-')[1] == 'zeroeps':
            tenNormalize[tenNormalize == 0.0] = 1.0
        elif strMode.split('-')[1] == 'clipeps':
            tenNormalize = tenNormalize.clip(0.0000001, None)
        tenOut = tenOut[:, :-1, :, :] / tenNormalize

    return tenOut
