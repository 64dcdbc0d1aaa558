# Helpers shared by the AnyLoc demo notebooks and scripts:
#   - DinoV2ExtractFeatures: dense (patch-level) descriptors from an intermediate ViT layer
#   - VLAD: hard / soft VLAD aggregation with a disk cache for the vocabulary
#   - seed_everything, get_top_k_recall
#
import os
import random
from typing import Literal, Union, List, Tuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
import einops as ein
import fast_pytorch_kmeans as fpk
import faiss


# %%
_DINO_V2_MODELS = Literal["dinov2_vits14", "dinov2_vitb14", "dinov2_vitl14", "dinov2_vitg14"]
_DINO_FACETS = Literal["query", "key", "value", "token"]


def seed_everything(seed: int = 42):
    """Seed python, numpy and torch (all devices) for reproducible clustering and sampling."""
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


class DinoV2ExtractFeatures:
    """
        Extract features from an intermediate layer in Dino-v2.

        The forward hook grabs the output of one transformer block (facet "token") or of its
        qkv projection (facets "query"/"key"/"value"). Patch descriptors are returned with shape
        [batch, num_patches, desc_dim]; the CLS token is dropped unless use_cls is set.
    """
    def __init__(self, dino_model: _DINO_V2_MODELS, layer: int,
                 facet: _DINO_FACETS = "token", use_cls=False,
                 norm_descs=True, device: str = "cpu") -> None:
        """
            dino_model: torch.hub name of the DINOv2 variant
            layer:      index of the transformer block to hook (0-based; ViT-G has 40)
            facet:      "token" (block output) or one of the qkv projections
            use_cls:    keep the CLS token as the first descriptor
            norm_descs: L2-normalise every descriptor
            device:     where the model lives; inputs must already be there
        """
        self.vit_type: str = dino_model
        self.dino_model: nn.Module = torch.hub.load('facebookresearch/dinov2', dino_model)
        self.device = torch.device(device)
        self.dino_model = self.dino_model.eval().to(self.device)
        self.layer: int = layer
        self.facet = facet
        if self.facet == "token":
            self.fh_handle = self.dino_model.blocks[self.layer].\
                register_forward_hook(self._generate_forward_hook())
        else:
            self.fh_handle = self.dino_model.blocks[self.layer].\
                attn.qkv.register_forward_hook(self._generate_forward_hook())
        self.use_cls = use_cls
        self.norm_descs = norm_descs
        # Hook data
        self._hook_out = None

    def _generate_forward_hook(self):
        def _forward_hook(module, inputs, output):
            self._hook_out = output
        return _forward_hook

    def __call__(self, img: torch.Tensor) -> torch.Tensor:
        """img: [B, 3, H, W] on self.device, H and W multiples of the 14-pixel patch size."""
        with torch.no_grad():
            res = self.dino_model(img)
            if self.use_cls:
                res = self._hook_out
            else:
                res = self._hook_out[:, 1:, ...]
            if self.facet in ["query", "key", "value"]:
                d_len = res.shape[2] // 3
                if self.facet == "query":
                    res = res[:, :, :d_len]
                elif self.facet == "key":
                    res = res[:, :, d_len:2 * d_len]
                else:
                    res = res[:, :, 2 * d_len:]
        if self.norm_descs:
            res = F.normalize(res, dim=-1)
        self._hook_out = None
        return res

    def __del__(self):
        self.fh_handle.remove()


# %%
class VLAD:
    """
        Hard / soft VLAD over a k-means vocabulary of local descriptors.

        The vocabulary (cluster centers) can be cached to ``cache_dir/c_centers.pt`` and the
        per-image residuals to ``cache_dir/<cache_id>_r.pt`` so that repeated experiments on the
        same database do not have to re-run k-means.

        Everything here runs on whatever device the descriptors are on; the demos move the
        descriptors to the CPU before calling ``generate`` because the VLAD vectors are large.
    """
    def __init__(self, num_clusters: int,
                 desc_dim: Union[int, None] = None,
                 intra_norm: bool = True, norm_descs: bool = True,
                 dist_mode: str = "cosine", vlad_mode: str = "hard",
                 soft_temp: float = 1.0,
                 cache_dir: Union[str, None] = None) -> None:
        self.num_clusters = num_clusters
        self.desc_dim = desc_dim
        self.intra_norm = intra_norm
        self.norm_descs = norm_descs
        self.mode = dist_mode
        self.vlad_mode = str(vlad_mode).lower()
        assert self.vlad_mode in ['soft', 'hard']
        self.soft_temp = soft_temp
        # Set in the training phase
        self.c_centers = None
        self.kmeans = None
        # Set the caching
        self.cache_dir = cache_dir
        if self.cache_dir is not None:
            self.cache_dir = os.path.abspath(os.path.expanduser(self.cache_dir))
            if not os.path.exists(self.cache_dir):
                os.makedirs(self.cache_dir)
                print(f"Created cache directory: {self.cache_dir}")
            else:
                print("Warning: Cache directory already exists: " + self.cache_dir)
        else:
            print("VLAD caching is disabled.")

    def can_use_cache_vlad(self):
        return self.cache_dir is not None and os.path.isfile(f"{self.cache_dir}/c_centers.pt")

    def can_use_cache_ids(self, cache_ids: Union[List[str], str, None], only_residuals: bool = False) -> bool:
        if self.cache_dir is None or cache_ids is None:
            return False
        if isinstance(cache_ids, str):
            cache_ids = [cache_ids]
        for cache_id in cache_ids:
            if not os.path.isfile(f"{self.cache_dir}/{cache_id}_r.pt"):
                return False
            if self.vlad_mode == "hard" and not os.path.isfile(f"{self.cache_dir}/{cache_id}_l.pt") \
                    and not only_residuals:
                return False
        return True

    def fit(self, train_descs: Union[np.ndarray, torch.Tensor, None]):
        """Build the vocabulary with (cosine) k-means, or load it from the cache."""
        self.kmeans = fpk.KMeans(self.num_clusters, mode=self.mode)
        if self.can_use_cache_vlad():
            print("Using cached cluster centers")
            self.c_centers = torch.load(f"{self.cache_dir}/c_centers.pt")
            self.kmeans.centroids = self.c_centers
            if self.desc_dim is None:
                self.desc_dim = self.c_centers.shape[1]
                print(f"Desc dim set to {self.desc_dim}")
        else:
            if train_descs is None:
                raise ValueError("No training descriptors given")
            if type(train_descs) == np.ndarray:
                train_descs = torch.from_numpy(train_descs).to(torch.float32)
            if self.desc_dim is None:
                self.desc_dim = train_descs.shape[1]
            if self.norm_descs:
                train_descs = F.normalize(train_descs)
            self.kmeans.fit(train_descs)
            self.c_centers = self.kmeans.centroids
            if self.cache_dir is not None:
                print("Caching cluster centers")
                torch.save(self.c_centers, f"{self.cache_dir}/c_centers.pt")

    def fit_and_generate(self, train_descs: torch.Tensor) -> torch.Tensor:
        self.fit(train_descs)
        return torch.stack([self.generate(tr) for tr in train_descs])

    def generate_res_vec(self, query_descs: torch.Tensor, cache_id: Union[str, None] = None) -> torch.Tensor:
        """Residuals of every descriptor to every cluster center, shape [q, c, d]."""
        assert self.kmeans is not None
        assert self.c_centers is not None
        if self.can_use_cache_ids(cache_id, only_residuals=True):
            return torch.load(f"{self.cache_dir}/{cache_id}_r.pt")
        if self.norm_descs:
            query_descs = F.normalize(query_descs)
        residuals = ein.rearrange(query_descs, "q d -> q 1 d") - \
            ein.rearrange(self.c_centers.to(query_descs.device), "c d -> 1 c d")
        if cache_id is not None and self.cache_dir is not None:
            torch.save(residuals, f"{self.cache_dir}/{cache_id}_r.pt")
        return residuals

    def generate(self, query_descs: torch.Tensor, cache_id: Union[str, None] = None) -> torch.Tensor:
        """VLAD vector (flattened, L2-normalised) of one image's descriptors [q, d]."""
        residuals = self.generate_res_vec(query_descs, cache_id)
        un_vlad = torch.zeros(self.num_clusters * self.desc_dim, device=residuals.device)
        if self.vlad_mode == 'hard':
            if self.can_use_cache_ids(cache_id):
                labels = torch.load(f"{self.cache_dir}/{cache_id}_l.pt")
            else:
                labels = self.kmeans.predict(query_descs)
                if cache_id is not None and self.cache_dir is not None:
                    torch.save(labels, f"{self.cache_dir}/{cache_id}_l.pt")
            used_clusters = set(labels.cpu().numpy())
            for k in used_clusters:
                cd_sum = residuals[labels == k, k].sum(dim=0)
                if self.intra_norm:
                    cd_sum = F.normalize(cd_sum, dim=0)
                un_vlad[k * self.desc_dim:(k + 1) * self.desc_dim] = cd_sum
        else:
            cos_sims = F.cosine_similarity(
                ein.rearrange(query_descs, "q d -> q 1 d"),
                ein.rearrange(self.c_centers.to(query_descs.device), "c d -> 1 c d"), dim=2)
            soft_assign = F.softmax(self.soft_temp * cos_sims, dim=1)
            for k in range(0, self.num_clusters):
                w = ein.rearrange(soft_assign[:, k], "q -> q 1 1")
                cd_sum = ein.rearrange(w * residuals, "q c d -> (q c) d").sum(dim=0)
                if self.intra_norm:
                    cd_sum = F.normalize(cd_sum, dim=0)
                un_vlad[k * self.desc_dim:(k + 1) * self.desc_dim] = cd_sum
        n_vlad = F.normalize(un_vlad, dim=0)
        return n_vlad

    def generate_multi(self, multi_query: Union[torch.Tensor, List[torch.Tensor]],
                       cache_ids: Union[List[str], None] = None) -> Union[torch.Tensor, List[torch.Tensor]]:
        res = [self.generate(q, None if cache_ids is None else cache_ids[i])
               for i, q in enumerate(multi_query)]
        try:
            res = torch.stack(res)
        except RuntimeError:
            print("Could not stack the VLAD vectors, returning a list")
        # the residual tensors of large images are big; give the memory back before the next batch
        torch.cuda.empty_cache()
        return res


# %%
def get_top_k_recall(top_k: List[int], db: torch.Tensor, qu: torch.Tensor, gt_pos: np.ndarray,
                     method: Literal["cosine", "l2"] = "cosine", norm_descs: bool = True,
                     use_gpu: bool = False, use_percentage: bool = True,
                     sub_sample_db: int = 1, sub_sample_qu: int = 1) -> Tuple[np.ndarray, np.ndarray, dict]:
    """
        Recall@K with an exact faiss index.

        - db, qu:   [N_db, D] and [N_q, D] global descriptors (CPU)
        - gt_pos:   for every query, an array of the indices of its true positives in db
        - use_gpu:  search on a faiss GPU index (much faster for the 1M-image databases)
    """
    D = db.shape[1]
    if norm_descs:
        db = F.normalize(db)
        qu = F.normalize(qu)
    db = db[::sub_sample_db].numpy().astype(np.float32)
    qu = qu[::sub_sample_qu].numpy().astype(np.float32)
    if method == "cosine":
        index = faiss.IndexFlatIP(D)
    elif method == "l2":
        index = faiss.IndexFlatL2(D)
    else:
        raise NotImplementedError(f"Method: {method}")
    if use_gpu:
        res = faiss.StandardGpuResources()
        index = faiss.index_cpu_to_gpu(res, 0, index)
    index.add(db)
    distances, indices = index.search(qu, max(top_k))
    recalls = dict(zip(top_k, [0] * len(top_k)))
    for i_qu, qu_retr_maxk in enumerate(indices):
        for i_rec in top_k:
            correct_retr_qu = gt_pos[i_qu * sub_sample_qu] // sub_sample_db
            if np.isin(qu_retr_maxk[:i_rec], correct_retr_qu).any():
                recalls[i_rec] += 1
    if use_percentage:
        for k in recalls:
            recalls[k] /= len(indices)
    return distances, indices, recalls
