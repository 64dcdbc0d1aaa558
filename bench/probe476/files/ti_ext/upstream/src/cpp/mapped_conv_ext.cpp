#include <torch/extension.h>
#include <vector>

#include "cpp/mapped_conv_layer.h"
#include "cpp/resample_layer.h"

#ifdef WITH_CUDA
#include "cuda/mapped_conv_layer_cuda.h"
#include "cuda/resample_layer_cuda.h"
#endif

#define CHECK_CUDA(x) AT_ASSERTM(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) AT_ASSERTM(x.is_contiguous(), #x " must be contiguous")
#define CHECK_CPU(x) AT_ASSERTM(!x.is_cuda(), #x " must be a CPU tensor")

namespace mapped_conv {
namespace nn {

// ---------------------------------------------------------------------------
// Mapped convolution: convolution whose receptive field is given by an
// arbitrary (interpolated) sampling map instead of a regular grid
// ---------------------------------------------------------------------------
at::Tensor MappedConvForward(at::Tensor input, at::Tensor sample_map,
                             at::Tensor weight, at::Tensor bias,
                             int64_t interpolation) {
  CHECK_CONTIGUOUS(input);
  CHECK_CONTIGUOUS(sample_map);
  CHECK_CONTIGUOUS(weight);
  CHECK_CONTIGUOUS(bias);

  if (input.is_cuda()) {
#ifdef WITH_CUDA
    CHECK_CUDA(sample_map);
    CHECK_CUDA(weight);
    CHECK_CUDA(bias);
    return cuda::MappedConvForward(input, sample_map, weight, bias,
                                   interpolation);
#else
    AT_ERROR("mapped_conv was not compiled with GPU support");
#endif
  }
  CHECK_CPU(sample_map);
  CHECK_CPU(weight);
  CHECK_CPU(bias);
  return cpu::MappedConvForward(input, sample_map, weight, bias,
                                interpolation);
}

std::vector<at::Tensor> MappedConvBackward(at::Tensor grad_output,
                                           at::Tensor input,
                                           at::Tensor sample_map,
                                           at::Tensor weight, at::Tensor bias,
                                           int64_t interpolation) {
  CHECK_CONTIGUOUS(grad_output);
  CHECK_CONTIGUOUS(input);
  CHECK_CONTIGUOUS(sample_map);
  CHECK_CONTIGUOUS(weight);

  if (grad_output.is_cuda()) {
#ifdef WITH_CUDA
    CHECK_CUDA(input);
    CHECK_CUDA(sample_map);
    return cuda::MappedConvBackward(grad_output, input, sample_map, weight,
                                    bias, interpolation);
#else
    AT_ERROR("mapped_conv was not compiled with GPU support");
#endif
  }
  return cpu::MappedConvBackward(grad_output, input, sample_map, weight, bias,
                                 interpolation);
}

// ---------------------------------------------------------------------------
// Resampling to / from tangent planes
// ---------------------------------------------------------------------------
at::Tensor ResampleToMap(at::Tensor input, at::Tensor sample_map,
                         int64_t out_h, int64_t out_w, int64_t interpolation) {
  CHECK_CONTIGUOUS(input);
  CHECK_CONTIGUOUS(sample_map);
  if (sample_map.is_cuda()) {
#ifdef WITH_CUDA
    return cuda::ResampleToMap(input, sample_map, out_h, out_w, interpolation);
#else
    AT_ERROR("mapped_conv was not compiled with GPU support");
#endif
  }
  return cpu::ResampleToMap(input, sample_map, out_h, out_w, interpolation);
}

at::Tensor ResampleFromMap(at::Tensor grad_output, at::Tensor sample_map,
                           int64_t interpolation) {
  CHECK_CONTIGUOUS(grad_output);
  CHECK_CONTIGUOUS(sample_map);
  return grad_output.device().is_cuda()
             ? cuda::ResampleFromMap(grad_output, sample_map, interpolation)
             : cpu::ResampleFromMap(grad_output, sample_map, interpolation);
}

}  // namespace nn
}  // namespace mapped_conv

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("mapped_conv_forward", &mapped_conv::nn::MappedConvForward,
        "Mapped convolution forward");
  m.def("mapped_conv_backward", &mapped_conv::nn::MappedConvBackward,
        "Mapped convolution backward");
  m.def("resample_to_map", &mapped_conv::nn::ResampleToMap,
        "Resample an image to a sampling map");
  m.def("resample_from_map", &mapped_conv::nn::ResampleFromMap,
        "Adjoint of resample_to_map");
}
