#include <torch/extension.h>
#include <vector>

// CUDA forward declarations (implemented in the *.cu files next to this one)

torch::Tensor projection_cuda(torch::Tensor image, torch::Tensor options);
torch::Tensor projection_t_cuda(torch::Tensor proj, torch::Tensor options);
torch::Tensor backprojection_cuda(torch::Tensor proj, torch::Tensor options);
torch::Tensor backprojection_t_cuda(torch::Tensor image, torch::Tensor options);
torch::Tensor fbp_cuda(torch::Tensor proj, torch::Tensor options);
torch::Tensor fbp_t_cuda(torch::Tensor image, torch::Tensor options);
torch::Tensor laplacian_cuda(torch::Tensor image, int k);
torch::Tensor projection_weighted_cuda(torch::Tensor image, torch::Tensor options, torch::Tensor weight);
torch::Tensor backprojection_weighted_cuda(torch::Tensor proj, torch::Tensor options, torch::Tensor weight);

// C++ interface

#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

static void check_options(const torch::Tensor& options) {
    TORCH_CHECK(options.numel() >= 11, "options must hold at least 11 geometry entries");
    TORCH_CHECK(options.scalar_type() == torch::kFloat32, "options must be float32");
}

torch::Tensor projection(torch::Tensor image, torch::Tensor options) {
    CHECK_INPUT(image);
    CHECK_INPUT(options);
    check_options(options);
    TORCH_CHECK(image.dim() == 4, "image must be (batch, 1, height, width)");
    return projection_cuda(image, options);
}

torch::Tensor projection_t(torch::Tensor proj, torch::Tensor options) {
    CHECK_INPUT(proj);
    CHECK_INPUT(options);
    check_options(options);
    return projection_t_cuda(proj, options);
}

torch::Tensor backprojection(torch::Tensor proj, torch::Tensor options) {
    CHECK_INPUT(proj);
    CHECK_INPUT(options);
    check_options(options);
    TORCH_CHECK(proj.dim() == 4, "projection must be (batch, 1, views, dets)");
    return backprojection_cuda(proj, options);
}

torch::Tensor backprojection_t(torch::Tensor image, torch::Tensor options) {
    CHECK_INPUT(image);
    CHECK_INPUT(options);
    check_options(options);
    return backprojection_t_cuda(image, options);
}

torch::Tensor fbp(torch::Tensor proj, torch::Tensor options) {
    CHECK_INPUT(proj);
    CHECK_INPUT(options);
    check_options(options);
    return fbp_cuda(proj, options);
}

torch::Tensor fbp_t(torch::Tensor image, torch::Tensor options) {
    CHECK_INPUT(image);
    CHECK_INPUT(options);
    check_options(options);
    return fbp_t_cuda(image, options);
}

torch::Tensor laplacian(torch::Tensor image, int k) {
    CHECK_INPUT(image);
    return laplacian_cuda(image, k);
}

// Statistical (weighted) variants used by the PWLS-type data term: the per-ray weight
// (e.g. transmitted photon counts) multiplies the projection residual inside the kernel.

torch::Tensor projection_weighted(torch::Tensor image, torch::Tensor options, torch::Tensor weight) {
    CHECK_INPUT(image);
    CHECK_INPUT(options);
    CHECK_INPUT(weight);
    check_options(options);
    TORCH_CHECK(weight.sizes() == image.sizes() || weight.dim() == 4,
                "weight must be broadcastable to the projection shape");
    return projection_weighted_cuda(image, options, weight);
}

torch::Tensor backprojection_weighted(torch::Tensor proj, torch::Tensor options, torch::Tensor weight) {
    CHECK_INPUT(proj);
    CHECK_INPUT(options);
    CHECK_INPUT(weight);
    check_options(options);
    TORCH_CHECK(weight.sizes() == proj.sizes(), "weight must have the projection shape");
    return backprojection_weighted_cuda(proj, options, weight);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("projection", &projection, "CT projection (CUDA)");
    m.def("projection_t", &projection_t, "Transpose of CT projection (CUDA)");
    m.def("backprojection", &backprojection, "CT back-projection (CUDA)");
    m.def("backprojection_t", &backprojection_t, "Transpose of CT back-projection (CUDA)");
    m.def("fbp", &fbp, "CT filtered back-projection (CUDA)");
    m.def("fbp_t", &fbp_t, "Transpose of CT filtered back-projection (CUDA)");
    m.def("laplacian", &laplacian, "Graph laplacian (CUDA)");
    m.def("projection_weighted", &projection_weighted, "Weighted CT projection (CUDA)");
    m.def("backprojection_weighted", &backprojection_weighted, "Weighted CT back-projection (CUDA)");
}
