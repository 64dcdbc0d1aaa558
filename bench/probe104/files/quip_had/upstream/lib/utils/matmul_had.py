import torch
import fast_hadamard_transform

from lib.utils.misc import is_pow2

# Hadamard transforms used for incoherence processing.  Power-of-two sizes go through the
# fast-hadamard-transform CUDA kernel (Dao-AILab); sizes of the form 12 * 2^k / 20 * 2^k
# (e.g. the 11008 / 13824 / 28672 MLP dims of Llama) need one small dense Hadamard factor.


def get_had12():
    return torch.FloatTensor([
        [+1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1],
        [-1, +1, +1, -1, +1, +1, +1, -1, -1, -1, +1, -1],
        [-1, -1, +1, +1, -1, +1, +1, +1, -1, -1, -1, +1],
        [-1, +1, -1, +1, +1, -1, +1, +1, +1, -1, -1, -1],
        [-1, -1, +1, -1, +1, +1, -1, +1, +1, +1, -1, -1],
        [-1, -1, -1, +1, -1, +1, +1, -1, +1, +1, +1, -1],
        [-1, -1, -1, -1, +1, -1, +1, +1, -1, +1, +1, +1],
        [-1, +1, -1, -1, -1, +1, -1, +1, +1, -1, +1, +1],
        [-1, +1, +1, -1, -1, -1, +1, -1, +1, +1, -1, +1],
        [-1, +1, +1, +1, -1, -1, -1, +1, -1, +1, +1, -1],
        [-1, -1, +1, +1, +1, -1, -1, -1, +1, -1, +1, +1],
        [-1, +1, -1, +1, +1, +1, -1, -1, -1, +1, -1, +1],
    ])


def get_had20():
    return torch.FloatTensor([
        [+1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1, +1],
        [-1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1],
        [-1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1],
        [-1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1],
        [-1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1],
        [-1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1],
        [-1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1],
        [-1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1],
        [-1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1],
        [-1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1],
        [-1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1, +1],
        [-1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1, -1],
        [-1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1, +1],
        [-1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1, +1],
        [-1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1, +1],
        [-1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1, +1],
        [-1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1, -1],
        [-1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1, -1],
        [-1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1, +1],
        [-1, +1, -1, -1, +1, +1, +1, +1, -1, +1, -1, +1, -1, -1, -1, -1, +1, +1, -1, +1],
    ])


def get_hadK(n, transpose=False):
    hadK, K = None, None
    if n % 20 == 0:
        assert (is_pow2(n // 20))
        K = 20
        hadK = get_had20().T if transpose else get_had20()
    elif n % 12 == 0:
        assert (is_pow2(n // 12))
        K = 12
        hadK = get_had12().T if transpose else get_had12()
    else:
        assert (is_pow2(n))
        K = 1

    return hadK, K


def matmul_hadU(X, transpose=False):
    """Reference (pure PyTorch) Walsh-Hadamard transform, O(n log n) butterflies."""
    n = X.shape[-1]
    hadK, K = get_hadK(n, transpose)
    input = X.clone().view(-1, n, 1)
    output = input.clone()
    while input.shape[1] > K:
        input = input.view(input.shape[0], input.shape[1] // 2, 2, input.shape[2])
        output = output.view(input.shape)
        output[:, :, 0, :] = input[:, :, 0, :] + input[:, :, 1, :]
        output[:, :, 1, :] = input[:, :, 0, :] - input[:, :, 1, :]
        output = output.view(input.shape[0], input.shape[1], -1)
        (input, output) = (output, input)
    del output

    if K > 1:
        # Do not explicitly repeat - OOM
        # input = torch.bmm(
        #     hadK.repeat(len(input), 1, 1).to(input.device).to(input.dtype), input)
        # Use bcast instead
        input = hadK.view(1, K, K).to(input) @ input

    return input.view(X.shape) / torch.tensor(n).sqrt()


def matmul_hadUt(X):
    return matmul_hadU(X, transpose=True)


def random_hadamard_matrix(size, device):
    # See https://cornell-relaxml.github.io/quip-sharp/ , Section "Randomized Hadamard Transformation"
    Q = torch.randint(low=0, high=2, size=(size, )).to(torch.float64)
    Q = Q * 2 - 1
    Q = torch.diag(Q)
    return matmul_hadU(Q).to(device)


def matmul_hadU_cuda(X, hadK, K, use_kernel=True):
    n = X.shape[-1]
    if not use_kernel:
        return matmul_hadU(X)
    if K == 1:
        return fast_hadamard_transform.hadamard_transform(X.contiguous(), 1.0 / torch.tensor(n).sqrt())
    # if transpose:
    #     hadK = hadK.T.contiguous()
    input = X.view(-1, K, n // K)
    input = fast_hadamard_transform.hadamard_transform(input.contiguous(), 1.0 / torch.tensor(n).sqrt())
    input = hadK.to(input.device).to(input.dtype) @ input
    return input.reshape(X.shape)


def matmul_hadUt_cuda(X, hadK, K, use_kernel=True):
    return matmul_hadU_cuda(X, hadK, K, use_kernel=use_kernel)


def apply_exact_had_to_linear(module, had_dim=-1, output=False):
    """Rotate a linear layer in place: W <- W H (input side) or H W (output side)."""
    assert isinstance(module, torch.nn.Linear)
    in_features, out_features = module.in_features, module.out_features

    if had_dim != -1:
        assert is_pow2(had_dim), "Hadamard dimension must be a power of 2!"

    W_ = module.weight.data
    dtype = W_.dtype
    dev = W_.device
    init_shape = W_.shape
    W_ = W_.float().cuda()

    if had_dim == -1:
        if output:
            had_K, K = get_hadK(out_features)
            W_ = matmul_hadU_cuda(W_.t(), had_K, K).t()
        if not output:
            had_K, K = get_hadK(in_features)
            W_ = matmul_hadU_cuda(W_, had_K, K)
    else:
        # Apply Hadamard to the last had_dim chunks of the weights
        if output:
            W_ = W_.t()
            transposed_shape = W_.shape
            W_ = fast_hadamard_transform.hadamard_transform(
                W_.reshape(-1, transposed_shape[-1] // had_dim, had_dim),
                scale=1 / torch.tensor(had_dim).sqrt()).reshape(transposed_shape).t()
        else:
            raise NotImplementedError("Not implemented (or tested) yet!")

    module.weight.data = W_.to(device=dev, dtype=dtype)


class HadamardTransform(torch.nn.Module):
    """Online Hadamard rotation inserted in front of down_proj (activations)."""

    def __init__(self, dim, use_kernel=True):
        super().__init__()
        self.dim = dim
        had_K, K = get_hadK(dim)
        self.K = K
        self.use_kernel = use_kernel
        if had_K is not None:
            self.register_buffer("had_K", had_K, persistent=False)
        else:
            self.had_K = None

    def forward(self, x):
        x_dtype = x.dtype
        if self.had_K is not None:
            self.had_K = self.had_K.to(x.device)
        x = matmul_hadU_cuda(x.float() if x_dtype == torch.bfloat16 else x, self.had_K, self.K, use_kernel=self.use_kernel)
        return x.to(x_dtype)
