"""
Incoherence processing + block LDLQ rounding (QuIP#).

All Hessian algebra is done in float64 on the GPU: the Hessians of the large MLP projections
are badly conditioned and the LDL decomposition in fp32 regularly produces NaNs.
"""
import copy
import math

import glog
import torch
from tqdm import tqdm

from lib import utils
from lib.utils.matmul_had import matmul_hadU_cuda, matmul_hadUt_cuda, get_hadK


def RHT_H(H, SU):
    return utils.matmul_hadUt(utils.matmul_hadUt(H * SU).T * SU)


def RHT_W(W, SU, SV):
    return utils.matmul_hadUt(utils.matmul_hadUt(W.T * SV).T * SU)


def incoherence_preprocess(H, W, args):
    dtype_ = torch.float64 if args.use_fp64 else torch.float32
    device = H.device
    (m, n) = H.shape

    def _dump(Hr, Lhr, msg=''):
        torch.save(Hr, f"{args.save_path}/Hr_debug_fft.pt")
        torch.save(Lhr, f"{args.save_path}/Lhr_debug_fft.pt")
        raise Exception(msg)

    # diagonally rescale W,H to minimize proxy loss
    scaleWH = None
    Wr = W
    Hr = H
    if args.rescale_WH:
        Hr = H / H.abs().max()
        diagH = torch.diag(Hr)
        diagW2 = torch.diag(W.T @ W)
        diagH = torch.clamp(diagH, min=1e-8)
        diagW2 = torch.clamp(diagW2, min=1e-8)
        scaleWH = (diagH / diagW2).sqrt().sqrt().to(torch.float32)
        scaleWH = scaleWH.clamp(min=1e-8)
        Wr = Wr * scaleWH[None, :]
        Hr = Hr / scaleWH[None, :]
        Hr = Hr / scaleWH[:, None]
        scaleWH = scaleWH.cpu()

    # randomized hadamard transformation on H, W
    if args.incoh_mode == "had":
        SU = (torch.randn(n, device=device).sign() + 1e-5).sign().to(dtype_)
        SV = (torch.randn(m, device=device).sign() + 1e-5).sign().to(dtype_)
        Hr = RHT_H(Hr, SU)
        Wr = RHT_W(Wr, SU, SV)
    # randomized kronecker product on H, W
    elif args.incoh_mode == "kron":
        SU = utils.rand_ortho_butterfly_noblock(n).to(dtype_).to(device)
        SV = utils.rand_ortho_butterfly_noblock(m).to(dtype_).to(device)
        Hr = SU @ Hr @ SU.T
        Wr = SV @ Wr @ SU.T
    else:
        raise NotImplementedError
    SV = SV.cpu()
    SU = SU.cpu()

    Lhr = torch.linalg.cholesky(Hr)
    if not torch.all(torch.isfinite(Lhr)):
        return None

    Wr = Wr.to(device)

    return Lhr, Hr, Wr, SU, SV, scaleWH


def incoherence_process(hatWr, SU, SV, scaleWH, args):
    device = hatWr.device
    # reverse hadamard transformation
    if args.incoh_mode == 'had':
        hatWr = (utils.matmul_hadU(
            (utils.matmul_hadU(hatWr) * SU.to(device)).T) * SV.to(device)).T
    # reverse kronecker product
    elif args.incoh_mode == 'kron':
        hatWr = SV.T.to(device) @ hatWr @ SU.to(device)
    else:
        raise NotImplementedError

    # reverse rescale W,H
    if args.rescale_WH:
        hatWr /= scaleWH[None, :].to(device)

    assert torch.isfinite(hatWr).all()
    return hatWr


def block_LDL(H, b, check_nan=True):
    n = H.shape[0]
    assert (n % b == 0)
    m = n // b
    try:
        L = torch.linalg.cholesky(H)
    except:
        return None
    DL = torch.diagonal(L.reshape(m, b, m, b), dim1=0, dim2=2).permute(2, 0, 1)
    D = (DL @ DL.permute(0, 2, 1)).cpu()
    DL = torch.linalg.inv(DL)
    L = L.view(n, m, b)
    for i in range(m):
        L[:, i, :] = L[:, i, :] @ DL[i, :, :]

    if check_nan and L.isnan().any():
        return None

    L = L.reshape(n, n)
    return (L, D.to(DL.device))


def LDLQ(Wr, Hr, L, D, cb, args, buf_cols=128):
    buf_cols = max(buf_cols, cb.codesz)
    (m, n) = Wr.shape
    assert buf_cols % cb.codesz == 0
    assert n % buf_cols == 0
    buf_size = buf_cols // cb.codesz

    hatWr_T = torch.zeros(n, m, dtype=Hr.dtype, device=Hr.device)
    Qidxs_T = torch.zeros(n // cb.codesz, m, dtype=cb.idx_dtype, device=Hr.device)

    device = Wr.device
    Wr = Wr.cpu()
    Hr = Hr.cpu()
    utils.clean()
    Wr_T = Wr.T.contiguous().to(device)
    Hr_T = Hr.T.contiguous().to(device)

    # quip
    prod_cache = torch.zeros(n, m, dtype=Wr_T.dtype, device=Wr_T.device)
    for cur_col in range(n // cb.codesz, 0, -buf_size):
        b_Wr_T = Wr_T[cb.codesz * (cur_col - buf_size):cb.codesz * cur_col]
        b_hatWr_T = hatWr_T[cb.codesz * (cur_col - buf_size):cb.codesz * cur_col]
        b_L = L[cb.codesz * (cur_col - buf_size):cb.codesz * cur_col]
        b_prod = prod_cache[cb.codesz * (cur_col - buf_size):cb.codesz * cur_col]
        b_Qidxs_T = Qidxs_T[cur_col - buf_size:cur_col]
        L_offset = cb.codesz * (cur_col - buf_size)
        for i in reversed(range(buf_size)):
            WXWX = b_Wr_T[cb.codesz * i : cb.codesz * (i + 1)] + \
                b_L[cb.codesz * (i + 1):, L_offset + cb.codesz * i : L_offset + cb.codesz * (i + 1)].T @ \
                (b_Wr_T[cb.codesz * (i + 1):] - b_hatWr_T[cb.codesz * (i + 1):]) + \
                b_prod[cb.codesz * i : cb.codesz * (i + 1)]
            b_hatWr_T[cb.codesz * i : cb.codesz * (i + 1)], \
                b_Qidxs_T[i : i + 1] = \
                cb.quantize(WXWX.T, return_idx=True)
        prod_cache += b_L.T @ (b_Wr_T - b_hatWr_T)
        hatWr_T[cb.codesz * (cur_col - buf_size):cb.codesz * cur_col] = b_hatWr_T

    del b_Wr_T, b_hatWr_T, b_L, b_prod, L_offset, prod_cache
    utils.clean()
    return hatWr_T.T.contiguous(), Qidxs_T.T.contiguous()


def quantize(H_orig, W_orig, rank, codebook_orig, args, device='cuda'):
    dtype_ = torch.float64 if args.use_fp64 else torch.float32  # LDL in fp64 for the 70B down_proj
    hatWs = []

    W_orig = W_orig.to(device)
    H_orig = H_orig.to(dtype_).to(device)
    (m, n) = W_orig.shape
    H = utils.regularize_H(H_orig, n, args.sigma_reg)
    W = W_orig.to(dtype_)

    ret = incoherence_preprocess(H, W, args)
    if ret is None:
        glog.info('incoherence preprocessing failed, retrying with stronger damping')
        H = utils.regularize_H(H_orig, n, 10 * args.sigma_reg)
        ret = incoherence_preprocess(H, W, args)
    Lhr, Hr, Wr, SU, SV, scaleWH = ret

    Wscale = Wr.square().mean().sqrt()
    if args.scale_override > 0:
        Wscale /= args.scale_override
    else:
        Wscale /= codebook_orig.opt_scale
    Wr = Wr / Wscale

    LRAs = {}
    LRBs = {}
    codebook = copy.deepcopy(codebook_orig).to(device)

    # block LDL of the (transformed) Hessian; falls back to stronger damping on failure
    LL = block_LDL(Hr, codebook.codesz)
    if LL is None:
        Hr = utils.regularize_H(Hr, n, args.sigma_reg2)
        LL = block_LDL(Hr, codebook.codesz)
    L, D = LL
    diag = torch.arange(n, device=L.device)
    L[diag, diag] = 0

    hatWr, Qidxs = LDLQ(Wr, Hr, L, D, codebook, args)

    Wr *= Wscale
    hatWr *= Wscale

    err = torch.trace(
        (Wr - hatWr) @ Hr @ (Wr - hatWr).T) / torch.trace(Wr @ Hr @ Wr.T)
    print(
        f'{args.save_path} proxy err {err.item()} tr(WHW.T) {torch.trace(Wr @ Hr @ Wr.T)}'
    )

    hatW = incoherence_process(hatWr, SU, SV, scaleWH, args)

    attr = {
        'Qidxs': Qidxs.to(torch.int16).cpu(),
        'Wscale': Wscale.cpu(),
        'SU': SU.cpu(),
        'SV': SV.cpu(),
        'scaleWH': scaleWH,
    }
    utils.clean()
    return hatW.cpu(), attr


def low_rank_preprocess(H, W, rank, args):
    """Optional low-rank correction term (A B) fitted before rounding."""
    dtype_ = torch.float64
    H = H.to(dtype_)
    W = W.to(dtype_)
    Hs = torch.linalg.cholesky(H)
    U, S, Vh = torch.linalg.svd(W @ Hs, full_matrices=args.full_svd)
    A = U[:, :rank] * S[:rank].sqrt()
    B = (S[:rank].sqrt()[:, None] * Vh[:rank]) @ torch.linalg.inv(Hs)
    return A.float(), B.float()
