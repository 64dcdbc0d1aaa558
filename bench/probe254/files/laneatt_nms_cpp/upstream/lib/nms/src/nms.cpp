// Python binding of the lane NMS kernel (see nms_kernel.cu).
//
// boxes:  [N, 5 + S] float tensor of lane proposals (2 scores, start_y, start_x, length, S x-offsets)
// scores: [N] confidence of each proposal
// returns (keep, num_to_keep, parent_object_index)
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <vector>
#include <iostream>

std::vector<at::Tensor> nms_cuda_forward(
        at::Tensor boxes,
        at::Tensor idx,
        float nms_overlap_thresh,
        unsigned long top_k);

#define CHECK_CUDA(x) AT_ASSERTM(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) AT_ASSERTM(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

std::vector<at::Tensor> nms_forward(
        at::Tensor boxes,
        at::Tensor scores,
        float thresh,
        unsigned long top_k) {

    auto idx = std::get<1>(scores.sort(0, true));

    CHECK_INPUT(boxes);
    CHECK_INPUT(idx);

    // run the kernel on the device that owns the proposals
    const at::cuda::OptionalCUDAGuard device_guard(device_of(boxes));

    return nms_cuda_forward(boxes, idx, thresh, top_k);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("nms_forward", &nms_forward, "Lane NMS forward (CUDA)");
}
