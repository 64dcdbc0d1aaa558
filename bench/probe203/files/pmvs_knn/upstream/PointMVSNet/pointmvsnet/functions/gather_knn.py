import torch

try:
    from pointmvsnet.functions import dgcnn_ext
except ImportError:
    print("Please compile source files before using dgcnn cuda extension.")


class GatherKNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, feature, index):
        """Gather the k nearest neighbours' features.

        Args:
            feature (torch.Tensor): (batch_size, channels, num_points), CUDA float tensor
            index (torch.Tensor): (batch_size, num_points, k), CUDA int64 tensor

        Returns:
            torch.Tensor: (batch_size, channels, num_points, k)
        """
        ctx.save_for_backward(index)
        feature_neighbour = dgcnn_ext.gather_knn_forward(feature, index)
        return feature_neighbour

    @staticmethod
    def backward(ctx, grad_output):
        knn_inds = ctx.saved_tensors[0]
        grad_features = dgcnn_ext.gather_knn_backward(grad_output, knn_inds)
        return grad_features, None


gather_knn = GatherKNN.apply


def test_gather_knn():
    torch.manual_seed(1)
    batch_size = 2
    num_inst = 5
    channels = 4
    k = 3

    feature_tensor = torch.rand(batch_size, channels, num_inst).cuda(0)
    # knn_inds = torch.ones([batch_size, num_inst, k], dtype=torch.int64).cuda(0)
    # knn_inds[:, :, 2] = 2
    # knn_inds[:, 0, 2] = 3
    knn_inds = torch.randint(0, num_inst, [batch_size, num_inst, k]).long().cuda(0)

    feature_tensor_gather = torch.zeros([batch_size, channels, num_inst, k]).double().cuda(0)
    # feature_tensor_gather = torch.zeros([batch_size, num_inst, channels, k]).double().cuda(0)
    for i in range(batch_size):
        for j in range(num_inst):
            for c in range(channels):
                for l in range(k):
                    feature_tensor_gather[i, c, j, l] = feature_tensor[i, c, knn_inds[i, j, l]]

    feature_tensor_cuda = feature_tensor.detach()
    feature_tensor_cuda.requires_grad = True
    feature_tensor_gather_cuda = gather_knn(feature_tensor_cuda, knn_inds)
    print(torch.allclose(feature_tensor_gather.float(), feature_tensor_gather_cuda))

    # backward
    grad = torch.ones_like(feature_tensor_gather_cuda)
    feature_tensor_gather_cuda.backward(grad)
    print(feature_tensor_cuda.grad)


if __name__ == "__main__":
    test_gather_knn()
