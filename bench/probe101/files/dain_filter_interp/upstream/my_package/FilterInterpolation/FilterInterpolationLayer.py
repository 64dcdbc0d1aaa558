# this is for wrapping the customized layer
import torch
from torch.autograd import Function
import filterinterpolation_cuda as my_lib

#Please check how the STN FUNCTION is written :
#https://github.com/fxia22/stn.pytorch/blob/master/script/functions/gridgen.py
#https://github.com/fxia22/stn.pytorch/blob/master/script/functions/stn.py


class FilterInterpolationLayer(Function):
    def __init__(self):
        super(FilterInterpolationLayer, self).__init__()

    @staticmethod
    def forward(ctx, input1, input2, input3):

        assert(input1.is_contiguous())
        assert(input2.is_contiguous())
        assert(input3.is_contiguous())
        # self.input1 = input1.contiguous() # need to use in the backward process, so we need to cache it
        # self.input2 = input2.contiguous() # TODO: Note that this is simply a shallow copy?
        # self.input3 = input3.contiguous()
        # if input1.is_cuda:
        #     self.device = torch.cuda.current_device()
        # else:
        #     self.device = -1

        # output =  torch.zeros(input1.size())

        if input1.is_cuda:
            output = torch.cuda.FloatTensor().resize_(input1.size()).zero_()
            my_lib.FilterInterpolationLayer_gpu_forward(input1, input2, input3, output)
        else:
            output = torch.FloatTensor(input1.data.size())
            my_lib.FilterInterpolationLayer_cpu_forward(input1, input2, input3, output)
        ctx.save_for_backward(input1, input2, input3)
        # the function returns the output to its caller
        return output

    @staticmethod
    def backward(ctx, gradoutput):
        # print("Backward of Filter Interpolation Layer")
        # gradinput1 = input1.new().zero_()
        # gradinput2 = input2.new().zero_()
        # gradinput1 = torch.zeros(self.input1.size())

        input1, input2, input3 = ctx.saved_tensors

        gradinput1 = torch.zeros(input1.size())
        gradinput2 = torch.zeros(input2.size())
        gradinput3 = torch.zeros(input3.size())
        if input1.is_cuda and gradoutput.is_cuda:
            # print("CUDA backward")
            gradinput1 = gradinput1.cuda()
            gradinput2 = gradinput2.cuda()
            gradinput3 = gradinput3.cuda()

            # the input1 image should not require any gradients
            # print("Does input1 requires gradients? " + str(self.input1.requires_grad))

            err = my_lib.FilterInterpolationLayer_gpu_backward(input1, input2, input3, gradoutput, gradinput1, gradinput2, gradinput3)
            if err != 0:
                print(err)

        else:
            # print("CPU backward")
            # print(gradoutput)
            err = my_lib.FilterInterpolationLayer_cpu_backward(input1, input2, input3, gradoutput, gradinput1, gradinput2, gradinput3)
            # print(err)
            if err != 0:
                print(err)
            # print(gradinput1)
            # print(gradinput2)

        # print(gradinput1)

        return gradinput1, gradinput2, gradinput3


# calculate the weights of flow
class WeightLayer(Function):
    def __init__(self, lambda_e=10.0 / 255.0, lambda_v=1.0, Nw=3.0):
        # lambda_e = 10.0 , lambda_v = 1.0,  Nw = 3.0
        super(WeightLayer, self).__init__()
        self.lambda_e = lambda_e
        self.lambda_v = lambda_v
        self.Nw = Nw

    # flow1_grad
    def forward(self, input1, input2, input3):
        # print("Weight Layer Forward")
        # print(input1.size())
        # print(input2.size())
        # print(input3.size())

        self.input1 = input1.contiguous()  # ref1 image
        self.input2 = input2.contiguous()  # ref2 image
        self.input3 = input3.contiguous()
        # self.flow1_grad = flow1_grad.contiguous() # ref1 flow's grad

        if self.input1.is_cuda:
            self.device = torch.cuda.current_device()
        else:
            self.device = -1

        output = torch.zeros(input1.size(0), 1, input1.size(2), input1.size(3))

        if self.device >= 0:
            output = output.cuda()
            err = my_lib.WeightLayer_gpu_forward(input1, input2, input3,
                                                 # flow1_grad,
                                                 output,
                                                 self.lambda_e, self.lambda_v, self.Nw
                                                 )
            if err != 0:
                print(err)
        else:
            # output = torch.cuda.FloatTensor(input1.data.size())
            err = my_lib.WeightLayer_cpu_forward(input1, input2, input3, output,
                                                 self.lambda_e, self.lambda_v, self.Nw
                                                 )
            if err != 0:
                print(err)

        self.output = output  # save this for fast back propagation
        # the function returns the output to its caller
        return output
